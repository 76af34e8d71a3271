package dev.kanuki.contract;

import dev.kanuki.ParkHandler;
import dev.kanuki.ParkedItem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The handler of {@link WorkSpoolContract}'s proof: a counter file that records, in the same
 * atomic write as the count, the ids of the items it counted (the idempotency rule of
 * {@code docs/park.md}), so an item run again after its holder died is recognised and not
 * counted twice. Fails items on purpose: {@code poison} always, and about one item in five on
 * its first attempt.
 */
public final class ParkCounter implements ParkHandler {
    /** The payload that always fails and must end in the dead letters. */
    public static final String POISON = "poison";

    private final Path dir;
    private final long delayMillis;

    /**
     * A counter in a directory.
     *
     * @param dir holds {@code counter} (count, then one line per counted item: id, token,
     *     payload), {@code duplicates} (items seen again) and {@code handling} (the pid that ran
     *     a handler last)
     * @param delayMillis how long each item takes, so that kills land inside handlers
     */
    public ParkCounter(Path dir, long delayMillis) {
        this.dir = dir;
        this.delayMillis = delayMillis;
    }

    /**
     * {@return whether the item with this payload fails on its first attempt}
     *
     * @param payload the payload
     */
    public static boolean failsOnce(String payload) {
        return (payload.hashCode() & 0x7fffffff) % 5 == 0;
    }

    /**
     * {@return a handler counting into the same directory that also applies whole batches}
     * ({@link ParkHandler#applyAll}): one batch, one atomic write of the count and all its ids. A
     * batch holding the poison item, or an item on its failing first attempt, fails as a whole
     * (nothing written), so the holder runs its items one by one through {@link #apply}.
     *
     * @param dir as for the constructor
     * @param delayMillis how long each batch (and each single item) takes
     */
    public static ParkHandler batching(Path dir, long delayMillis) {
        ParkCounter counter = new ParkCounter(dir, delayMillis);
        return new ParkHandler() {
            @Override
            public void apply(ParkedItem item, long fencingToken) throws Exception {
                counter.apply(item, fencingToken);
            }

            @Override
            public void applyAll(List<ParkedItem> items, long fencingToken) throws Exception {
                counter.count(items, fencingToken);
            }
        };
    }

    @Override
    public void apply(ParkedItem item, long fencingToken) throws Exception {
        count(List.of(item), fencingToken);
    }

    private void count(List<ParkedItem> items, long fencingToken) throws Exception {
        for (ParkedItem item : items) {
            String payload = new String(item.bytes(), StandardCharsets.UTF_8);
            if (payload.equals(POISON)) {
                throw new IllegalArgumentException("poison item refused");
            }
            if (item.attempts() == 0 && failsOnce(payload)) {
                throw new IllegalStateException("transient failure of " + payload);
            }
        }
        // Who runs a handler now, for the proof to kill a holder mid-item.
        Files.writeString(dir.resolve("handling"), Long.toString(ProcessHandle.current().pid()), StandardCharsets.UTF_8);
        if (delayMillis > 0) {
            Thread.sleep(delayMillis / 4);
        }
        Counted counted = read(dir);
        long count = counted.count;
        StringBuilder added = new StringBuilder();
        for (ParkedItem item : items) {
            if (counted.lines.containsKey(item.id())) {
                Files.writeString(dir.resolve("duplicates"), item.id() + " " + fencingToken + "\n", StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                continue;
            }
            count++;
            String payload = new String(item.bytes(), StandardCharsets.UTF_8);
            added.append(item.id()).append(' ').append(fencingToken).append(' ').append(payload).append('\n');
        }
        if (count == counted.count) {
            return; // every item was counted before: a rerun after a holder died
        }
        StringBuilder text = new StringBuilder().append(count).append('\n');
        counted.lines.values().forEach(line -> text.append(line).append('\n'));
        text.append(added);
        Path tmp = dir.resolve("counter." + ProcessHandle.current().pid() + "." + Thread.currentThread().getId());
        try (var out = java.nio.channels.FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            out.write(java.nio.ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8)));
            out.force(true);
        }
        // The count and the ids in one atomic step: never one without the other.
        Files.move(tmp, dir.resolve("counter"), StandardCopyOption.ATOMIC_MOVE);
        if (delayMillis > 0) {
            // Counted but not yet removed from the spool: a kill here makes the next holder run
            // the items again, and the ids recorded with the count catch it.
            Thread.sleep(delayMillis - delayMillis / 4);
        }
    }

    /**
     * What a counter file holds.
     *
     * @param count the count on its first line
     * @param lines id → "id token payload", in the order counted
     */
    public record Counted(long count, Map<String, String> lines) {
        /** {@return the payloads counted, in the order counted} */
        public List<String> payloads() {
            List<String> payloads = new ArrayList<>();
            lines.values().forEach(line -> payloads.add(line.split(" ", 3)[2]));
            return payloads;
        }

        /** {@return the fencing tokens the items were counted under, in the order counted} */
        public List<Long> tokens() {
            List<Long> tokens = new ArrayList<>();
            lines.values().forEach(line -> tokens.add(Long.parseLong(line.split(" ", 3)[1])));
            return tokens;
        }
    }

    /**
     * Reads a counter directory.
     *
     * @param dir the directory given to the handler
     * @return the count and the counted items (0 and none when nothing was counted yet)
     * @throws IOException when the file cannot be read
     */
    public static Counted read(Path dir) throws IOException {
        Path file = dir.resolve("counter");
        if (!Files.exists(file)) {
            return new Counted(0, new LinkedHashMap<>());
        }
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        Map<String, String> byId = new LinkedHashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            byId.put(line.split(" ", 2)[0], line);
        }
        return new Counted(Long.parseLong(lines.get(0)), byId);
    }
}
