package dev.kanuki.file;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The content of a queue file ({@code strategy=queue}), replayed. The file is append-only between compactions;
 * each line is one event with its own checksum (a torn or foreign line is ignored):
 *
 * <pre>
 * A &lt;owner record&gt; &lt;crc&gt;        a contender arrives (joins the end of the queue)
 * N &lt;id&gt; &lt;lease-until ms&gt; &lt;crc&gt;  a contender renews its lease
 * R &lt;id&gt; &lt;crc&gt;                 a contender leaves (released, or gave up waiting)
 * T &lt;id&gt; &lt;token&gt; &lt;crc&gt;         the holder's fencing token (for status)
 * </pre>
 *
 * The holder is the first contender that has not left and whose lease has not run out (and,
 * when it is on this host, whose process is alive). A token line also retires every contender
 * ahead of its writer (they had run out when it took the lock; see {@link #dropAheadOf}). Nobody deletes a stale line: everyone skips
 * it by the same rule, so breaking a stale lock cannot race.
 */
final class QueueLog {
    /** One contender in arrival order. */
    static final class Contender {
        final TtlRecord record;
        long leaseUntil;
        long token;

        Contender(TtlRecord record) {
            this.record = record;
            this.leaseUntil = record.leaseUntilMillis();
        }

        boolean isLive(long now) {
            return leaseUntil >= now && (record.pid() == dev.kanuki.spi.ProcessIdentity.pid()
                    || !dev.kanuki.spi.ProcessIdentity.isDeadLocalProcess(record.host(), record.pid()));
        }
    }

    private final Map<String, Contender> contenders = new LinkedHashMap<>();
    /** Arrivals (id and arrival time) that have left: a copy of one read later is stale, not a new arrival. */
    private final java.util.Set<String> departed = new java.util.HashSet<>();
    /** Ids whose removal came before any arrival of theirs ({@link #leave}). */
    private final java.util.Set<String> leftBeforeArriving = new java.util.HashSet<>();

    static QueueLog replay(String text) {
        QueueLog log = new QueueLog();
        for (String line : text.split("\n")) {
            int lastSpace = line.lastIndexOf(' ');
            if (line.length() < 3 || lastSpace < 2 || !line.substring(lastSpace + 1).equals(crc(line.substring(0, lastSpace)))) {
                continue;
            }
            String body = line.substring(2, lastSpace);
            switch (line.charAt(0)) {
                case 'A' -> {
                    TtlRecord.Read read = TtlRecord.decode(body);
                    if (read.record() != null) {
                        log.arrive(read.record());
                    }
                }
                case 'N' -> {
                    String[] f = body.split(" ");
                    Contender c = f.length == 2 ? log.contenders.get(f[0]) : null;
                    if (c != null) {
                        c.leaseUntil = Math.max(c.leaseUntil, parse(f[1]));
                    }
                }
                case 'R' -> log.leave(body);
                case 'T' -> {
                    String[] f = body.split(" ");
                    Contender c = f.length == 2 ? log.contenders.get(f[0]) : null;
                    if (c != null) {
                        c.token = parse(f[1]);
                        log.dropAheadOf(c);
                    }
                }
                default -> {
                    // not an event kanuki writes
                }
            }
        }
        return log;
    }

    /**
     * A token line is written by a contender that found itself the holder: everyone ahead of it
     * had left or run out then, and stays out. Without this a late renewal line of one of them
     * (a holder frozen in the middle of renewing) would bring it back to life ahead of the holder.
     */
    private void dropAheadOf(Contender holder) {
        var it = contenders.values().iterator();
        while (it.hasNext()) {
            Contender c = it.next();
            if (c == holder) {
                break;
            }
            it.remove();
            depart(c);
        }
    }

    /**
     * The same arrival line can be in the file twice: its writer appends it again when it does not
     * see it (a compaction was replacing the file), and the compaction forwards the first copy
     * late. A copy is not a new arrival: it must neither move a contender to the back (behind
     * someone who would then see itself the holder) nor bring back one that has left. The id is
     * one acquisition's, so a real new arrival under it is one that arrives again after its line
     * ran out or was retired, which carries a later arrival time.
     */
    private void arrive(TtlRecord record) {
        Contender present = contenders.get(record.id());
        if (present != null && present.record.acquiredMillis() == record.acquiredMillis()
                || departed.contains(arrivalKey(record)) || leftBeforeArriving.contains(record.id())) {
            return;
        }
        contenders.remove(record.id());
        contenders.put(record.id(), new Contender(record));
    }

    /**
     * A removal. One that comes before its contender's arrival is kept too: a compaction forwards
     * the lines appended to the file it replaced after lines already appended to the new one, so
     * a holder that arrived, took the lock and left during a compaction can have its removal in
     * the new file ahead of its forwarded arrival and token. Its id is one acquisition's and never
     * arrives again after leaving, so the later arrival is stale: without this it would look like
     * a live holder until its lease ran out.
     */
    private void leave(String id) {
        Contender c = contenders.remove(id);
        if (c != null) {
            depart(c);
        } else {
            leftBeforeArriving.add(id);
        }
    }

    private void depart(Contender c) {
        if (c != null) {
            departed.add(arrivalKey(c.record));
        }
    }

    private static String arrivalKey(TtlRecord record) {
        return record.id() + ' ' + record.acquiredMillis();
    }

    private static long parse(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** {@return the holder: the first live contender, or null} */
    Contender holder(long now) {
        for (Contender c : contenders.values()) {
            if (c.isLive(now)) {
                return c;
            }
        }
        return null;
    }

    /** {@return how many live contenders are ahead of {@code id} (0: it holds), or -1 when it has no line} */
    int place(String id, long now) {
        int ahead = 0;
        for (Contender c : contenders.values()) {
            if (c.record.id().equals(id)) {
                return ahead;
            }
            if (c.isLive(now)) {
                ahead++;
            }
        }
        return -1;
    }

    Contender get(String id) {
        return contenders.get(id);
    }

    /** {@return the contenders that have not left, in arrival order} */
    List<Contender> contenders() {
        return new ArrayList<>(contenders.values());
    }

    static String arrival(TtlRecord record) {
        return line("A " + record.encode());
    }

    static String renewal(String id, long leaseUntil) {
        return line("N " + id + " " + leaseUntil);
    }

    static String token(String id, long token) {
        return line("T " + id + " " + token);
    }

    static String removal(String id) {
        return line("R " + id);
    }

    private static String line(String body) {
        return body + " " + crc(body) + "\n";
    }

    private static String crc(String text) {
        CRC32C crc = new CRC32C();
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        crc.update(bytes, 0, bytes.length);
        return java.util.HexFormat.of().toHexDigits((int) crc.getValue());
    }
}
