package dev.kanuki.example;

import dev.kanuki.Leadership;
import dev.kanuki.spring.LeaderTask;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The leader task: one instance of the application is elected in {@code example-leader} (with
 * {@code kanuki.locked.prefix} before it); when it dies or loses its lock another takes over with
 * a higher epoch. It only records its term, shown by {@code GET /leader}; a real one would start
 * its work in {@link #elected} (on a thread of its own) and stop it in {@link #revoked}.
 */
@Component
public class ExampleLeader implements LeaderTask {
    private static final Logger log = LoggerFactory.getLogger(ExampleLeader.class);
    private final AtomicReference<Leadership> term = new AtomicReference<>();

    /** Made by Spring. */
    public ExampleLeader() {
    }

    @Override
    public String election() {
        return "example-leader";
    }

    @Override
    public void elected(Leadership leadership) {
        // the election's thread: record and return, never block here
        term.set(leadership);
        log.info("elected leader of {} with epoch {}", leadership.election(), leadership.epoch());
    }

    @Override
    public void revoked(Leadership leadership, Leadership.End why) {
        term.compareAndSet(leadership, null);
        log.info("no longer leader of {} (epoch {}): {}", leadership.election(), leadership.epoch(), why);
    }

    /** {@return this instance's term while it is current, else empty} */
    public Optional<Leadership> current() {
        Leadership t = term.get();
        return t != null && t.isCurrent() ? Optional.of(t) : Optional.empty();
    }
}
