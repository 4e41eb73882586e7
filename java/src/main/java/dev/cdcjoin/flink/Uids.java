package dev.cdcjoin.flink;

import java.util.ArrayDeque;
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
 * only restores into a job of the same shape; with a uid prefix, every operator between the join's
 * inputs and an output it hands out gets the uid {@code prefix + "/" + the operator's name} (a
 * second operator of the same name {@code "#2"} after it, and so on, in a fixed order), so the
 * join's state restores whatever else the job changed. The inputs' own operators, and operators
 * that already have a uid (those of another join it reads, those named by an earlier output), are
 * left alone.
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
     * Gives uids to the operators between the inputs and {@code output}, {@code output}'s included.
     *
     * @param output a stream the join hands out
     * @param <S> its type
     * @return {@code output}
     */
    <S extends DataStream<?>> S assign(S output) {
        if (prefix == null) {
            return output;
        }
        Set<Transformation<?>> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Transformation<?>> todo = new ArrayDeque<>();
        todo.push(output.getTransformation());
        while (!todo.isEmpty()) {
            Transformation<?> t = todo.pop();
            if (inputs.contains(t) || t.getUid() != null || !seen.add(t)) {
                continue;
            }
            if (t instanceof PhysicalTransformation) {
                t.setUid(unique(prefix + "/" + t.getName()));
            }
            List<Transformation<?>> in = t.getInputs();
            for (int i = in.size() - 1; i >= 0; i--) {
                todo.push(in.get(i));
            }
        }
        return output;
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
