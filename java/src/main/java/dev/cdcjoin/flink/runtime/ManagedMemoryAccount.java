package dev.cdcjoin.flink.runtime;

import org.apache.flink.core.memory.ManagedMemoryUseCase;
import org.apache.flink.runtime.memory.MemoryManager;
import org.apache.flink.runtime.memory.MemoryReservationException;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.runtime.tasks.StreamTask;

/**
 * Accounts an operator's native memory against its share of the slot's Flink managed memory, the
 * way RocksDB's memory is: reserved from the slot's {@link MemoryManager} in steps as the native
 * state grows and released as it shrinks. The TaskManager's memory model (and a container limit
 * sized from it) then covers the native state, and a state larger than the operator's share fails
 * the job with a message that says what to configure, rather than the container being killed for
 * memory nobody declared.
 *
 * <p>The operator's share is what its transformation declared for {@link
 * ManagedMemoryUseCase#OPERATOR}; an operator that declared none (used outside {@code CdcJoin})
 * accounts nothing.
 */
final class ManagedMemoryAccount {

    /** Reservation granularity: the state is accounted in whole steps of 4 MiB. */
    static final long STEP = 4L << 20;

    private final MemoryManager manager;
    private final Object owner;
    private final long budget;
    private final String name;
    private long reserved;

    private ManagedMemoryAccount(MemoryManager manager, Object owner, long budget, String name) {
        this.manager = manager;
        this.owner = owner;
        this.budget = budget;
        this.name = name;
    }

    /**
     * The account of {@code operator}'s declared managed memory.
     *
     * @param operator the operator
     * @param task its task
     * @return the account, accounting nothing if the operator declared no managed memory
     */
    static ManagedMemoryAccount of(AbstractStreamOperator<?> operator, StreamTask<?, ?> task) {
        double fraction =
                operator.getOperatorConfig()
                        .getManagedMemoryFractionOperatorUseCaseOfSlot(
                                ManagedMemoryUseCase.OPERATOR,
                                task.getJobConfiguration(),
                                task.getEnvironment().getTaskManagerInfo().getConfiguration(),
                                operator.getUserCodeClassloader());
        MemoryManager manager = task.getEnvironment().getMemoryManager();
        long budget = fraction > 0 ? manager.computeMemorySize(fraction) : 0;
        return new ManagedMemoryAccount(manager, operator, budget, task.getName());
    }

    /**
     * Brings the reservation to {@code bytes} of native memory, rounded up to a whole step (at most
     * the budget); releases only when the state has shrunk by more than a step, so that a state
     * hovering around a step boundary does not reserve and release on every batch.
     *
     * @param bytes native memory in use
     * @throws ManagedMemoryExceededException if that is more than the operator's share
     */
    void track(long bytes) {
        if (budget == 0) {
            return; // the operator declared no managed memory
        }
        if (bytes > budget) {
            throw exceeded(bytes, null);
        }
        long want = Math.min((bytes + STEP - 1) / STEP * STEP, budget);
        if (want > reserved) {
            try {
                manager.reserveMemory(owner, want - reserved);
            } catch (MemoryReservationException e) {
                throw exceeded(bytes, e);
            }
            reserved = want;
        } else if (want + STEP < reserved) {
            manager.releaseMemory(owner, reserved - want);
            reserved = want;
        }
    }

    private ManagedMemoryExceededException exceeded(long bytes, Throwable cause) {
        return new ManagedMemoryExceededException(
                String.format(
                        "%s: the native join state needs %.1f MiB, more than the %.1f MiB of "
                                + "Flink managed memory this subtask may use (%.1f MiB reserved). "
                                + "Give it more (taskmanager.memory.managed.size or .fraction), "
                                + "raise the parallelism, or bound the state with a TTL.",
                        name, mib(bytes), mib(budget), mib(reserved)),
                cause);
    }

    private static double mib(long bytes) {
        return bytes / (1024.0 * 1024.0);
    }

    /** Releases everything reserved. */
    void releaseAll() {
        if (reserved > 0) {
            manager.releaseAllMemory(owner);
            reserved = 0;
        }
    }

    /** The native state outgrew the operator's share of managed memory. */
    static final class ManagedMemoryExceededException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        ManagedMemoryExceededException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
