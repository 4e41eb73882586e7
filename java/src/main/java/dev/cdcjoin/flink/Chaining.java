package dev.cdcjoin.flink;

import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.transformations.PhysicalTransformation;

/**
 * Chaining of the operators this library adds with {@code transform}, the same on every Flink line:
 * Flink 1.20 starts a new chain at an operator given to {@code transform} (its {@code
 * AbstractStreamOperator}'s own strategy, {@code HEAD}), 2.x chains it (the operator factory's,
 * {@code ALWAYS}). Set on the transformation, which hands the strategy to the factory on both
 * lines.
 */
final class Chaining {

    private Chaining() {}

    /**
     * Chains the operator of {@code out} to its input (and lets its successors chain to it).
     *
     * @param out the stream a {@code transform} returned
     * @param <T> its type
     * @return {@code out}
     */
    static <T> SingleOutputStreamOperator<T> toInput(SingleOutputStreamOperator<T> out) {
        Transformation<T> t = out.getTransformation();
        ((PhysicalTransformation<T>) t).setChainingStrategy(ChainingStrategy.ALWAYS);
        return out;
    }
}
