package dev.cdcjoin.flink;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.transformations.PhysicalTransformation;

/**
 * The operator IDs of what one join adds to a job ({@link JoinBuilder#uid}). Flink derives an
 * operator's ID from the shape of the job around it unless the operator has a uid, so a savepoint
 * only restores into a job of the same shape. With a uid prefix, each stream the join builds is
 * named by its role ({@code decode-users}, {@code join}, {@code join-rowdata}, ...): the operator
 * that emits it gets the uid {@code prefix/role}, and the operators behind it that have no uid yet,
 * back to the join's inputs, {@code prefix/role/1}, {@code /2}, ... in a fixed order. A role says
 * what the operator is for, never the join's definition, so a uid stays when the definition changes
 * and the join's own restore check can name what changed. The inputs' own operators, and operators
 * that already have a uid (another join's, those of an earlier role), are left alone.
 */
final class Uids {

    private final String prefix;
    private final Set<Transformation<?>> inputs =
            Collections.newSetFromMap(new IdentityHashMap<>());
    private final Set<String> given = new HashSet<>();

    /**
     * The IDs under {@code prefix} of a join over {@code inputs}.
     *
     * @param prefix the join's uid, or {@code null}: Flink's generated IDs
     * @param inputs the streams the join reads (its decoders' inputs, or another join's output)
     */
    Uids(String prefix, List<? extends DataStream<?>> inputs) {
        this.prefix = prefix;
        inputs.forEach(in -> this.inputs.add(in.getTransformation()));
    }

    /**
     * Names {@code output}'s operator, and those behind it, by {@code role}.
     *
     * @param output a stream the join builds
     * @param role what it is for, unique within the join ({@code "#2"} is added to a repeat)
     * @param <S> its type
     * @return {@code output}
     */
    <S extends DataStream<?>> S assign(S output, String role) {
        if (prefix == null) {
            return output;
        }
        String base = unique(prefix + "/" + role);
        List<Transformation<?>> unnamed = unnamedBehind(output.getTransformation());
        for (int i = 0; i < unnamed.size(); i++) {
            unnamed.get(i).setUid(i == 0 ? base : base + "/" + i);
        }
        return output;
    }

    /**
     * The physical operators from {@code output} back to the inputs that have no uid, depth first
     * from {@code output}, each operator's inputs in order.
     */
    private List<Transformation<?>> unnamedBehind(Transformation<?> output) {
        List<Transformation<?>> found = new ArrayList<>();
        Set<Transformation<?>> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Transformation<?>> todo = new ArrayDeque<>();
        todo.push(output);
        while (!todo.isEmpty()) {
            Transformation<?> t = todo.pop();
            if (inputs.contains(t) || t.getUid() != null || !seen.add(t)) {
                continue;
            }
            if (t instanceof PhysicalTransformation) {
                found.add(t);
            }
            List<Transformation<?>> in = t.getInputs();
            for (int i = in.size() - 1; i >= 0; i--) {
                todo.push(in.get(i));
            }
        }
        return found;
    }

    /** {@code uid}, or with {@code "#n"} after it if it was given already. */
    private String unique(String uid) {
        String candidate = uid;
        for (int n = 2; !given.add(candidate); n++) {
            candidate = uid + "#" + n;
        }
        return candidate;
    }
}
