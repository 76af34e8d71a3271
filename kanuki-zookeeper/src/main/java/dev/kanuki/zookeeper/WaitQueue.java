package dev.kanuki.zookeeper;

import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.zookeeper.ZooKeeperCalls.Created;
import dev.kanuki.zookeeper.ZooKeeperCalls.Read;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wait queues of contended locks: FIFO across JVMs, without a herd. When a lock is taken,
 * the acquisition takes a place in its name's queue directory ({@code PREFIX/queue/STEM}, a
 * container node): an ephemeral-sequential {@link QueueEntry} carrying its owner id. It then
 * watches only what it must (as Curator's {@code LockInternals} does): the place before it
 * ({@link QueueEntry#blocker}), or, first in line, the lock node of a holder that took the lock
 * by the one-request fast path. A release therefore wakes one waiter, and a waiter whose watch
 * has not fired makes no request at all when the engine's timer asks again.
 *
 * <p>A place that nothing is before holds the lock and stays in the queue until released: its
 * own node is the grant, its {@code czxid} the fencing token (a place made later has a higher
 * one, and a fast-path holder's lock node was made before the queue existed). The fast path
 * never overtakes a queue: it only succeeds while the queue directory does not exist (see
 * {@link ZooKeeperLockBackend}), and the directory exists while a place is in it; the last one to
 * leave removes it (the server removes a container a crashed waiter left empty).
 *
 * <p>A waiter woken by the deletion of the place it watched holds without reading the queue again
 * when that place was first in line and the lock node was seen free after the waiter queued
 * ({@link #holdsWithoutReading}): a handoff costs the waiter no request.
 *
 * <p>An abandoned acquisition (deadline passed, cancelled, failed) deletes its place; a create
 * whose answer did not come is found by its owner id, or deleted when its answer arrives. A place
 * lost with its session is made again at the back of the queue.
 */
final class WaitQueue {
    private static final Logger LOG = LoggerFactory.getLogger(WaitQueue.class);

    private final ZooKeeperCalls calls;
    /** Deletes a place until the answer is definite: a place left behind would hold up everyone behind it. */
    private final PendingReleases deletes;
    private final Map<LockRequest, Place> places = new ConcurrentHashMap<>();

    WaitQueue(ZooKeeperCalls calls, PendingReleases deletes) {
        this.calls = calls;
        this.deletes = deletes;
    }

    /**
     * One request's place, from its enqueue to its grant or abandonment. It is the watcher of the
     * one node it waits for: any event means "read the queue again".
     */
    private static final class Place implements Watcher {
        final LockRequest request;
        final String dir;
        final String prefix;
        final byte[] data;
        final String owner;
        volatile String entry;
        volatile Stat stat;
        /** A create of the place was not answered: it may exist, to be found by its owner id. */
        volatile boolean unsure;
        volatile CompletableFuture<Created> unanswered;
        /** Reads sent right behind the create of this place, answered after it: the queue, and the lock node. */
        CompletableFuture<Read> pendingChildren;
        CompletableFuture<Read> pendingLock;
        /** Set by the watch: the queue must be read again. */
        volatile boolean changed = true;
        final Set<String> watched = ConcurrentHashMap.newKeySet();
        volatile Runnable onChange;
        /** The place this one waits for, once its watch is being set; null while first in line. */
        volatile String blocker;
        /** Nothing was before {@link #blocker} when the queue was read: its deletion leaves this place first. */
        volatile boolean blockerFirst;
        /** The watch on {@link #blocker} fired because it was deleted. */
        volatile boolean blockerDeleted;
        /**
         * The lock node was absent after this place was made. While a place is in the queue the
         * directory exists, so no fast-path holder can create the lock node again: it stays free
         * of fast-path holders until this place leaves.
         */
        volatile boolean lockFree;
        /** The connection epoch in which the watch on {@link #blocker} was set. */
        volatile long watchEpoch;

        Place(LockRequest request, String dir, String prefix, byte[] data, String owner) {
            this.request = request;
            this.dir = dir;
            this.prefix = prefix;
            this.data = data;
            this.owner = owner;
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None && event.getState() != Event.KeeperState.Expired) {
                return; // disconnected or reconnected: the client sets its watches again on the same session
            }
            if (event.getPath() != null) {
                watched.remove(event.getPath()); // a watch fires once
                if (event.getType() == Event.EventType.NodeDeleted && event.getPath().equals(blocker)) {
                    blockerDeleted = true;
                }
            }
            changed = true; // a node event, or the session's end (which took the place with it)
            Runnable r = onChange;
            if (r != null) {
                r.run();
            }
        }

        String path() {
            return dir + "/" + entry;
        }

        /** {@return how long one call for this request may wait: the caller's time left, capped, at least a second} */
        Duration callLimit(ZooKeeperCalls calls) {
            return request.callTimeout(calls.timeout);
        }
    }

    /** What the first place in line does: hold the lock by its place, or take a free permit. */
    interface Front {
        /**
         * @param place the first place's path
         * @param stat the first place's stat
         * @param watch reads a node's data and leaves the place's watch on it (when it exists)
         * @param epoch the connection epoch the grant will carry
         * @return the grant; empty when it must wait, having watched what it waits for; null when
         *     the queue must be read again (what it waited for, or its own place, went meanwhile)
         */
        Optional<ZkGrant> take(String place, Stat stat, Function<String, Read> watch, long epoch);

        /**
         * @return the lock node whose absence lets the first place hold by itself, or null when
         *     the first place must ask the server before it holds (a semaphore's takes a permit)
         */
        default String lockNode() {
            return null;
        }
    }

    /**
     * The front of a lock's queue: the first place holds by itself once no fast-path holder has
     * the lock node, and waits for that node otherwise.
     *
     * @param lockPath the lock node
     * @return the rule
     */
    Front holdUnlessLocked(String lockPath) {
        return new Front() {
            @Override
            public Optional<ZkGrant> take(String place, Stat stat, Function<String, Read> watch, long epoch) {
                if (watch.apply(lockPath).code() == Code.OK) {
                    return Optional.empty();
                }
                return Optional.of(heldByPlace(place, stat, epoch));
            }

            @Override
            public String lockNode() {
                return lockPath;
            }
        };
    }

    /** {@return the grant of a place that holds the lock by itself: its czxid is the token} */
    private static ZkGrant heldByPlace(String place, Stat stat, long epoch) {
        String dir = place.substring(0, place.lastIndexOf('/'));
        return new ZkGrant(place, stat.getCzxid(), stat.getVersion(), stat.getEphemeralOwner(), epoch, dir);
    }

    /**
     * Thrown by {@link #advance} when the request expected its queue to exist, went straight to
     * it without the fast path, and found it gone: the caller tries the fast path instead. The
     * request has no place then.
     */
    static final class NoQueue extends RuntimeException {
        NoQueue() {
            super("no wait queue", null, false, false);
        }
    }

    /** {@return whether the request has a place in a queue} */
    boolean isWaiting(LockRequest request) {
        return places.containsKey(request);
    }

    /**
     * Takes or keeps the request's place in the queue {@code dir} and looks whether it holds now.
     *
     * @param front what the first place in line does
     * @param epoch the connection epoch the grant will carry
     * @param until when to stop retrying a create lost with the connection (nanoTime clock)
     * @param expected the queue was seen in use a moment ago: a new place is created without its
     *     directory, and {@link NoQueue} is thrown when the directory is gone
     * @return the grant when nothing is before the place any more and the front took it; empty
     *     while it waits (watching the one node it waits for, or what the front waits for)
     */
    Optional<ZkGrant> advance(LockRequest request, String dir, byte[] data, Front front, long epoch, long until,
            boolean expected) {
        Place place = places.computeIfAbsent(request, r -> new Place(r, dir,
                QueueEntry.prefix(r.mode(), r.owner().id()), data, r.owner().id()));
        if (!place.changed) {
            return Optional.empty(); // nothing moved since the watch was set: no request needed
        }
        Function<String, Read> watch = path -> {
            // getData, not exists: no watch is left behind on a node that is already gone
            Read read = calls.await(calls.getData(path, place), "watching the wait queue", place.callLimit(calls));
            if (read.code() != Code.OK && read.code() != Code.NONODE) {
                throw calls.failure(read.code(), "watching the wait queue");
            }
            if (read.code() == Code.OK) {
                place.watched.add(path);
            }
            return read;
        };
        try {
            return advance(request, place, front, watch, epoch, until, expected);
        } catch (NoQueue e) {
            places.remove(request); // nothing was created: the request has no place
            forgetWatches(place);
            throw e;
        } catch (RuntimeException e) {
            place.changed = true; // no watch may be set: the next attempt must read
            throw e;
        }
    }

    private Optional<ZkGrant> advance(LockRequest request, Place place, Front front, Function<String, Read> watch,
            long epoch, long until, boolean expected) {
        String dir = place.dir;
        boolean enqueued = false;
        if (holdsWithoutReading(place, front, epoch)) {
            places.remove(request);
            forgetWatches(place);
            return Optional.of(heldByPlace(place.path(), place.stat, epoch));
        }
        while (true) {
            place.changed = false; // before reading: an event from now on makes the next attempt read again
            place.blocker = null;
            place.blockerDeleted = false;
            if (place.entry == null) {
                enqueue(place, until, expected && !enqueued, front.lockNode());
                enqueued = true;
            }
            String lockNode = front.lockNode();
            // The lock node is read once per place, after the place exists (see Place.lockFree),
            // sent with the queue's read (or behind the create): no round trip of its own.
            CompletableFuture<Read> lock = place.pendingLock;
            CompletableFuture<Read> read = place.pendingChildren;
            place.pendingLock = null;
            place.pendingChildren = null;
            if (read == null) {
                lock = lockNode != null && !place.lockFree ? calls.getData(lockNode, null) : null;
                read = calls.getChildren(dir);
            }
            Read children = calls.await(read, "reading the wait queue", place.callLimit(calls));
            if (children.code() != Code.OK && children.code() != Code.NONODE) {
                throw calls.failure(children.code(), "reading the wait queue");
            }
            if (lock != null) {
                Read lockRead = calls.await(lock, "reading the lock node", place.callLimit(calls));
                if (lockRead.code() != Code.OK && lockRead.code() != Code.NONODE) {
                    throw calls.failure(lockRead.code(), "reading the lock node");
                }
                place.lockFree = lockRead.code() == Code.NONODE;
            }
            List<QueueEntry> queue = children.code() == Code.OK ? QueueEntry.inOrder(children.children()) : List.of();
            int index = indexOf(queue, place.entry);
            if (index < 0) {
                if (enqueued) {
                    throw calls.failure(Code.NONODE, "finding our place in the wait queue");
                }
                LOG.debug("place {} in the wait queue is gone (its session ended): queueing again", place.entry);
                place.entry = null;
                place.lockFree = false;
                continue;
            }
            QueueEntry blocker = QueueEntry.blocker(queue, index);
            if (blocker == null) {
                Optional<ZkGrant> grant = lockNode != null && place.lockFree
                        ? Optional.of(heldByPlace(place.path(), place.stat, epoch)) // no fast-path holder: ours
                        : front.take(place.path(), place.stat, watch, epoch);
                if (grant == null) {
                    continue;
                }
                if (grant.isPresent()) {
                    places.remove(request);
                    forgetWatches(place); // a semaphore's first place watched every permit; one fired
                }
                return grant;
            }
            place.blocker = dir + "/" + blocker.name();
            place.blockerFirst = queue.get(0) == blocker;
            place.watchEpoch = epoch;
            if (watch.apply(place.blocker).code() == Code.OK) {
                return Optional.empty();
            }
            // the place before ours left between the two reads: read the queue again
        }
    }

    /**
     * Whether the place holds now without asking the server: the place it waited for was
     * deleted, nothing was before that place (new places only join at the back, so nothing is
     * before ours now), no fast-path holder can have the lock node ({@link Place#lockFree}), and
     * the connection has not been suspended since the watch was set, on the session that owns
     * our place. The deletion's event came on that session's connection, so the session was
     * alive when it happened, and our place with it: nothing but its owner or the session's end
     * deletes a waiting place. That is what a read of the queue would have shown.
     */
    private boolean holdsWithoutReading(Place place, Front front, long epoch) {
        return place.blockerDeleted && place.blockerFirst && place.lockFree && front.lockNode() != null
                && place.entry != null && !place.unsure && place.watchEpoch == epoch
                && place.stat.getEphemeralOwner() == calls.sessionId();
    }

    private static int indexOf(List<QueueEntry> queue, String entry) {
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i).name().equals(entry)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Creates the place (its parents as containers when missing), or finds the one an unanswered create made.
     *
     * @param expected the directory should exist: create the place alone, and throw {@link NoQueue}
     *     when the directory is gone (the caller then tries the fast path)
     */
    private void enqueue(Place place, long until, boolean expected, String lockNode) {
        while (true) {
            // reads sent behind an earlier create that was not answered are not this place's
            place.pendingChildren = null;
            place.pendingLock = null;
            if (place.unsure && findOwn(place, place.callLimit(calls))) {
                return;
            }
            boolean alone = expected && !place.unsure;
            CompletableFuture<Created> sent;
            if (alone) {
                // The directory exists: create the place alone, and send the reads that follow
                // right behind it on the same connection, so they come back one round trip later
                // instead of two.
                sent = calls.createSequential(place.dir + "/" + place.prefix, place.data);
                place.pendingChildren = calls.getChildren(place.dir);
                place.pendingLock = lockNode != null ? calls.getData(lockNode, null) : null;
            } else {
                sent = ZooKeeperCalls.send(cb -> calls.client.create().storingStatIn(new Stat())
                        .creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                        .inBackground(cb).forPath(place.dir + "/" + place.prefix, place.data))
                        .thenApply(e -> new Created(Code.get(e.getResultCode()), e.getName(), e.getStat()));
            }
            Created created;
            try {
                created = calls.await(sent, "queueing", place.callLimit(calls));
            } catch (RuntimeException e) {
                place.unsure = true;
                place.unanswered = sent;
                throw e;
            }
            Code code = created.code();
            if (code == Code.OK) {
                place.stat = created.stat();
                place.entry = created.path().substring(place.dir.length() + 1);
                place.unsure = false;
                place.lockFree = false; // a new place: what an older one learnt about the lock node does not hold
                return;
            }
            place.pendingChildren = null;
            place.pendingLock = null;
            if (code == Code.NONODE && alone) {
                throw new NoQueue();
            }
            boolean timeLeft = System.nanoTime() < until;
            if (code == Code.CONNECTIONLOSS && timeLeft) {
                place.unsure = true; // it may have been applied: look for it before creating another
            } else if (code != Code.NONODE && code != Code.SESSIONEXPIRED || !timeLeft) {
                // NONODE: the last place left and removed the directory between its creation and ours
                throw calls.failure(code, "queueing");
            }
            ZooKeeperCalls.pauseBeforeRetry();
        }
    }

    /** {@return whether a place of this request's owner was found (and adopted) in the queue} */
    private boolean findOwn(Place place, Duration limit) {
        Read children = calls.await(calls.getChildren(place.dir), "reading the wait queue", limit);
        if (children.code() != Code.OK) {
            return false;
        }
        for (QueueEntry e : QueueEntry.inOrder(children.children())) {
            if (e.owner().equals(place.owner) && e.name().startsWith(place.prefix)) {
                Read read = calls.await(calls.getData(place.dir + "/" + e.name(), null), "reading the wait queue",
                        limit);
                if (read.code() == Code.OK && read.stat().getEphemeralOwner() == calls.sessionId()) {
                    place.entry = e.name();
                    place.stat = read.stat();
                    place.unsure = false;
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Registers the engine's wake-up for a waiting request: called when the node it waits for
     * changes (or the connection does).
     *
     * @return the registration, or null when the request has no place
     */
    ChangeSubscription subscribe(LockRequest request, Runnable onChange) {
        Place place = places.get(request);
        if (place == null) {
            return null;
        }
        place.onChange = onChange;
        return () -> place.onChange = null;
    }

    /**
     * Gives up the request's place, if it has one: deletes its node (found by owner id when its
     * create was not answered, or deleted when the answer arrives) and the directory if it is
     * then empty. Waits for the delete at most the call timeout, so that a waiter behind it is
     * not held up by a place nobody will take.
     */
    void leave(LockRequest request) {
        Place place = places.remove(request);
        if (place == null) {
            return;
        }
        place.onChange = null;
        CompletableFuture<Created> late = place.unanswered;
        if (late != null) {
            late.thenAccept(created -> {
                if (created.code() == Code.OK) {
                    deletes.delete(created.path(), created.stat().getCzxid(), created.stat().getVersion(),
                            created.stat().getEphemeralOwner());
                }
            });
        }
        forgetWatches(place);
        if (place.entry == null && place.unsure) {
            findOwn(place, calls.timeout);
        }
        if (place.entry != null) {
            // not answered in time (a leader election): retried in the background until definite
            calls.await(deletes.delete(place.path(), place.stat.getCzxid(), place.stat.getVersion(),
                    place.stat.getEphemeralOwner()), "leaving the wait queue", calls.timeout);
        }
        calls.deleteIfEmpty(place.dir);
    }

    /** Removes the watches the place left on nodes that have not changed: the server would keep them until they do. */
    private void forgetWatches(Place place) {
        place.onChange = null;
        place.watched.forEach(calls::forgetWatches);
        place.watched.clear();
    }

    /**
     * @return the places that hold the lock of the queue {@code dir} now, in order: a writer, or
     *     the readers in front; empty when none
     */
    List<QueueEntry> holders(String dir) {
        Read children = calls.await(calls.getChildren(dir), "reading the wait queue");
        if (children.code() == Code.NONODE) {
            return List.of();
        }
        if (children.code() != Code.OK) {
            throw calls.failure(children.code(), "reading the wait queue");
        }
        return QueueEntry.holders(QueueEntry.inOrder(children.children()));
    }
}
