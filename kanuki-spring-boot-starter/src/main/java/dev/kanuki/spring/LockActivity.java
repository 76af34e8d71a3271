package dev.kanuki.spring;

import dev.kanuki.LockEvent;
import dev.kanuki.LockListener;
import dev.kanuki.spi.LockMode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this application holds and waits for on its provider, from the event SPI: the
 * {@code locks} actuator endpoint's source. One map update per event; nothing is kept for a lock
 * that was released or whose wait ended.
 */
public final class LockActivity implements LockListener {

    /**
     * One acquisition, waiting or holding.
     *
     * @param name the lock's name
     * @param mode exclusive, shared or a semaphore permit
     * @param since when the wait started, or when the lock was granted
     * @param lost whether the lock was found lost while still held (its handle not yet closed)
     */
    public record Entry(String name, LockMode mode, Instant since, boolean lost) {
    }

    private final Map<Long, Entry> waiting = new ConcurrentHashMap<>();
    private final Map<Long, Entry> held = new ConcurrentHashMap<>();

    /** Makes an empty record; register it with {@link dev.kanuki.LockProvider#addListener}. */
    public LockActivity() {
    }

    @Override
    public void onEvent(LockEvent event) {
        long id = event.acquisition();
        switch (event.kind()) {
            case WAITING -> waiting.put(id, new Entry(event.name(), event.mode(), Instant.now(), false));
            case ACQUIRED -> {
                waiting.remove(id);
                held.put(id, new Entry(event.name(), event.mode(), Instant.now(), false));
            }
            case REFUSED, TIMED_OUT, FAILED -> waiting.remove(id);
            case LOST -> held.computeIfPresent(id, (k, e) -> new Entry(e.name(), e.mode(), e.since(), true));
            case RELEASED -> held.remove(id);
            default -> {
                // a kind added later: nothing to keep
            }
        }
    }

    /** {@return the locks held now, oldest first} */
    public List<Entry> held() {
        return sorted(held);
    }

    /** {@return the acquisitions waiting now, oldest first} */
    public List<Entry> waiting() {
        return sorted(waiting);
    }

    private static List<Entry> sorted(Map<Long, Entry> entries) {
        List<Entry> list = new ArrayList<>(entries.values());
        list.sort(Comparator.comparing(Entry::since));
        return list;
    }
}
