package dev.kanuki.example;

import dev.kanuki.spring.LockedContext;
import dev.kanuki.spring.Locked;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A job that every instance schedules and one instance runs per tick: it appends the line
 * {@code tick TICK PID} to {@code example.ticks-file}.
 *
 * <p>Why it runs exactly once per tick, even when the instances' schedulers fire at different
 * moments or late:
 * <ul>
 *   <li>The cron expression fires on wall-clock multiples of {@code example.tick-seconds} (a
 *       divisor of 60), on every instance. A tick is the epoch second divided by the period: tick
 *       {@code N} is the time window {@code [N*P, (N+1)*P)}.</li>
 *   <li>The lock is named by the tick ({@code tick-N}), not one name for every run. With one
 *       name, {@code holdAtLeast} would have to be shorter than the period (or the next tick is
 *       skipped) yet longer than the gap between the instances' runs (or a late instance runs the
 *       tick again): on a loaded machine the two can meet. Per-tick names let the hold be as long
 *       as needed without ever blocking the next tick.</li>
 *   <li>{@code holdAtLeast} ({@code example.tick-hold}) is at least one period: whoever gets
 *       {@code tick-N} first, at a moment {@code >= N*P}, holds it until at least {@code (N+1)*P}.
 *       A second acquisition of {@code tick-N} can therefore only happen at or after
 *       {@code (N+1)*P}, when tick {@code N} is over; the method checks that the tick it holds is
 *       still the current one and does nothing otherwise. So an instance that evaluated the name
 *       just before the window closed and got the lock only after (a pause, a slow store) cannot
 *       write the tick a second time. A late run writes nothing rather than twice: a tick may be
 *       missed when every instance is late, never doubled.</li>
 *   <li>Across machines the clocks differ: make the hold at least the period plus the largest
 *       clock difference. On a ttl store (Redis) a holder paused for longer than the lease loses
 *       its lock early, the ttl-pause case of every lease-based lock (see docs/leader.md).</li>
 *   <li>An instance that stops gracefully releases the tick it holds before its hold is over
 *       (the starter releases every lock when the context closes): another instance whose run
 *       of that same tick comes late, after the release, would run it again. Its run normally
 *       comes at the start of the tick, long before.</li>
 * </ul>
 * Names by tick leave nothing behind in the store: a released name has no key or file.
 */
@Component
public class TickJob {
    private static final Logger log = LoggerFactory.getLogger(TickJob.class);
    private static final String PREFIX = "tick-";

    private final long periodMillis;
    private final Path ticksFile;
    private final long pid = ProcessHandle.current().pid();

    /**
     * Makes the job, refusing settings under which "once per tick" would not hold.
     *
     * @param tickSeconds the period, {@code example.tick-seconds}: a divisor of 60, so that the
     *     cron expression's runs fall on the tick boundaries
     * @param hold the lock's shortest hold, {@code example.tick-hold}: at least the period
     * @param ticksFile where each tick's line is appended, {@code example.ticks-file}
     */
    public TickJob(@Value("${example.tick-seconds}") int tickSeconds, @Value("${example.tick-hold}") Duration hold,
                   @Value("${example.ticks-file}") Path ticksFile) {
        if (tickSeconds <= 0 || 60 % tickSeconds != 0) {
            throw new IllegalArgumentException("example.tick-seconds must divide 60 (the cron expression's runs must fall"
                    + " on the ticks' boundaries), not " + tickSeconds);
        }
        if (hold.compareTo(Duration.ofSeconds(tickSeconds)) < 0) {
            throw new IllegalArgumentException("example.tick-hold (" + hold + ") must be at least example.tick-seconds ("
                    + tickSeconds + " s): a shorter hold lets a late instance run a tick again");
        }
        this.periodMillis = tickSeconds * 1000L;
        this.ticksFile = ticksFile.toAbsolutePath();
    }

    /** {@return the current tick: the epoch time divided by the period} */
    public long currentTick() {
        return System.currentTimeMillis() / periodMillis;
    }

    /**
     * Runs on every instance at each tick; the lock lets one of them through. The name is
     * evaluated when the lock is taken ({@code target} is this bean), so it names the tick of that
     * moment.
     *
     * @throws IOException when the line cannot be appended
     */
    @Scheduled(cron = "*/${example.tick-seconds} * * * * *")
    @Locked(name = PREFIX + "#{target.currentTick()}", onBusy = Locked.OnBusy.SKIP, holdAtLeast = "${example.tick-hold}")
    public void tick() throws IOException {
        String name = LockedContext.current().name(); // kanuki.locked.prefix + "tick-N"
        long tick = Long.parseLong(name.substring(name.lastIndexOf(PREFIX) + PREFIX.length()));
        long now = currentTick();
        if (now != tick) {
            // got the lock of a tick that is over: another instance may have run it before its hold ended
            log.info("tick {}: lock taken during tick {}, too late; not run", tick, now);
            return;
        }
        // one write of one short line with O_APPEND: lines of different processes never interleave
        Files.write(ticksFile, ("tick " + tick + " " + pid + "\n").getBytes(StandardCharsets.UTF_8),
                StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
        log.debug("tick {} run", tick);
    }
}
