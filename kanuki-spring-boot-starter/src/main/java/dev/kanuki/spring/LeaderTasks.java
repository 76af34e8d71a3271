package dev.kanuki.spring;

import dev.kanuki.LeaderElection;
import dev.kanuki.LockProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the application's {@link LeaderTask} beans: each joins its election when the context
 * starts (last, after every other lifecycle bean) and leaves it when the context stops (first,
 * before the provider is closed).
 */
public final class LeaderTasks implements SmartLifecycle {
    private final LockProvider provider;
    private final List<LeaderTask> tasks;
    private final Supplier<String> prefix;
    private final List<LeaderElection> elections = new ArrayList<>();
    private boolean running;

    /**
     * Makes the runner.
     *
     * @param provider the lock provider the elections run on
     * @param tasks the leader tasks
     * @param prefix put before each election's name
     */
    public LeaderTasks(LockProvider provider, List<LeaderTask> tasks, Supplier<String> prefix) {
        this.provider = provider;
        this.tasks = List.copyOf(tasks);
        this.prefix = prefix;
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        for (LeaderTask task : tasks) {
            elections.add(LeaderElection.join(provider, prefix.get() + task.election(), task));
        }
        running = true;
    }

    /** Leaves every election: a leader is told (RESIGNED) before its lock is released. */
    @Override
    public synchronized void stop() {
        for (LeaderElection election : elections) {
            election.close();
        }
        elections.clear();
        running = false;
    }

    @Override
    public synchronized boolean isRunning() {
        return running;
    }

    /** {@return the elections joined, one per task, while running} */
    public synchronized List<LeaderElection> elections() {
        return List.copyOf(elections);
    }

    /** {@return the last phase: started after, stopped before, every other lifecycle bean} */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1;
    }
}
