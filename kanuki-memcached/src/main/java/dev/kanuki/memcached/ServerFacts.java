package dev.kanuki.memcached;

import java.net.ProtocolException;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a connection learned from the server's {@code stats} when it was opened: which server
 * process it talks to, and a clock for fencing floors.
 *
 * <p><b>Incarnation</b>: the process id and the boot time ({@code time - uptime}). A lock lives
 * in one server process: a restarted memcached has none of its items, and its CAS values start
 * again from 1, so a CAS remembered from before the restart could match a stranger's item. A
 * grant is therefore only renewed, verified or released on a connection to the incarnation that
 * granted it.
 *
 * <p><b>Clock</b>: memcached's {@code time} has whole seconds: it is its start time (cut to the
 * second) plus its uptime in whole seconds of its monotonic clock, advanced by a once-a-second
 * tick; so the real time is between one second before and three seconds after it (seen here: 0.7
 * to 1.7 s after). The clock used for fencing floors is this host's wall clock when it falls in
 * that window, else the nearest end of the window, and then runs on by {@link System#nanoTime()}:
 * as precise as the clients' clocks agree (NTP), never more than about three seconds off the
 * server's.
 *
 * @param pid the server's process id
 * @param bootSeconds the server's start, Unix seconds, as it reports it
 * @param version the server's version, e.g. {@code 1.6.18}
 * @param anchorMicros the clock's reading at {@code anchorNanos}, Unix microseconds
 * @param anchorNanos the {@link System#nanoTime()} at which {@code anchorMicros} was read
 */
record ServerFacts(long pid, long bootSeconds, String version, long anchorMicros, long anchorNanos) {
    private static final Logger LOG = LoggerFactory.getLogger(ServerFacts.class);
    /** How far the real time can be before and after memcached's {@code time} (see the class comment). */
    private static final long SERVER_CLOCK_AHEAD_MICROS = 1_000_000;
    private static final long SERVER_CLOCK_LAG_MICROS = 3_000_000;

    /**
     * @param server the server, for messages
     * @param stats the server's answer to {@code stats}
     * @param sentNanos when {@code stats} was sent, on the {@link System#nanoTime()} scale
     * @param receivedNanos when the answer was in
     */
    static ServerFacts of(String server, Map<String, String> stats, long sentNanos, long receivedNanos)
            throws ProtocolException {
        Instant wall = Instant.now();
        long time = number(stats, "time", server);
        long uptime = number(stats, "uptime", server);
        long low = time * 1_000_000 - SERVER_CLOCK_AHEAD_MICROS;
        long high = time * 1_000_000 + SERVER_CLOCK_LAG_MICROS + TimeUnit.NANOSECONDS.toMicros(receivedNanos - sentNanos);
        long local = wall.getEpochSecond() * 1_000_000 + wall.getNano() / 1_000;
        long anchor = Math.max(low, Math.min(high, local));
        if (anchor != local) {
            LOG.warn("this host's clock is {} ms off the clock of memcached at {}; fencing floors follow the server's"
                    + " clock, to within about three seconds", (local - anchor) / 1000, server);
        }
        return new ServerFacts(number(stats, "pid", server), time - uptime, stats.getOrDefault("version", "?"),
                anchor, receivedNanos);
    }

    private static long number(Map<String, String> stats, String name, String server) throws ProtocolException {
        try {
            return Long.parseLong(stats.get(name));
        } catch (NumberFormatException e) {
            throw new ProtocolException("memcached at " + server + " reported no number for stats '" + name + "'");
        }
    }

    /** {@return the clock now, Unix microseconds (see the class comment)} */
    long clockMicros() {
        return anchorMicros + TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - anchorNanos);
    }

    /** {@return true when {@code other} describes the same server process} */
    boolean sameIncarnation(ServerFacts other) {
        return pid == other.pid && bootSeconds == other.bootSeconds;
    }

    @Override
    public String toString() {
        return "memcached " + version + " pid " + pid + " up since " + Instant.ofEpochSecond(bootSeconds);
    }
}
