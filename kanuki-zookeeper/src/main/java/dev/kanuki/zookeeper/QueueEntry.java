package dev.kanuki.zookeeper;

import dev.kanuki.spi.LockMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * One place in a wait queue: an ephemeral-sequential node named {@code KIND-OWNER-SEQUENCE},
 * where {@code KIND} is {@code w} (exclusive: a writer) or {@code r} (shared: a reader), and
 * {@code OWNER} the acquisition's owner id, so that a create whose answer was lost (a dropped
 * connection) can be found again, as Curator's protection mode does. The server appends the
 * sequence: the queue's order.
 *
 * <p>The rule, as in Curator's read-write lock: a writer waits for the place just before it (of
 * any kind); a reader waits only for the nearest writer before it, so readers in a row hold
 * together. Each waiter watches only that one place, so a leaving place wakes one waiter. A
 * semaphore's waiters queue as writers: each waits for the place before it.
 */
record QueueEntry(String name, boolean writer, String owner, long sequence) {
    private static final int SEQUENCE_DIGITS = 10;

    /** {@return the node name to create (the server appends the sequence)} */
    static String prefix(LockMode mode, String owner) {
        return (mode == LockMode.SHARED ? "r-" : "w-") + owner + "-";
    }

    /** {@return the entry, or null for a node that is not a kanuki queue place} */
    static QueueEntry parse(String name) {
        int digits = name.length() - SEQUENCE_DIGITS;
        if (digits < 3 || name.charAt(1) != '-' || name.charAt(digits - 1) != '-'
                || (name.charAt(0) != 'w' && name.charAt(0) != 'r')) {
            return null;
        }
        try {
            return new QueueEntry(name, name.charAt(0) == 'w', name.substring(2, digits - 1),
                    Long.parseLong(name.substring(digits)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** {@return the queue's places in order} */
    static List<QueueEntry> inOrder(List<String> children) {
        List<QueueEntry> out = new ArrayList<>(children.size());
        for (String child : children) {
            QueueEntry e = parse(child);
            if (e != null) {
                out.add(e);
            }
        }
        out.sort(Comparator.comparingLong(QueueEntry::sequence));
        return out;
    }

    /**
     * @param queue the places in order
     * @param index the position of the place that asks
     * @return the place it waits for, or null when nothing in the queue is before it
     */
    static QueueEntry blocker(List<QueueEntry> queue, int index) {
        if (queue.get(index).writer()) {
            return index == 0 ? null : queue.get(index - 1);
        }
        for (int i = index - 1; i >= 0; i--) {
            if (queue.get(i).writer()) {
                return queue.get(i);
            }
        }
        return null;
    }

    /** {@return the places that hold now (nothing before them): the first writer, or the readers in front} */
    static List<QueueEntry> holders(List<QueueEntry> queue) {
        List<QueueEntry> out = new ArrayList<>();
        for (int i = 0; i < queue.size() && blocker(queue, i) == null; i++) {
            out.add(queue.get(i));
        }
        return out;
    }
}
