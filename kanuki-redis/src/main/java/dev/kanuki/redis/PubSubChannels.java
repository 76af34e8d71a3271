package dev.kanuki.redis;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.ChangeSubscription;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisException;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A backend's one pub/sub connection, opened on first use: the names' release channels, which
 * wake waiters of every JVM, and this backend's inbox, on which a release hands the lock to one of
 * our waiters ({@link Scripts#RELEASE}).
 *
 * <p>A channel stays subscribed for {@link #KEEP_IDLE_NANOS} after its last waiter is done (at
 * most {@value #MAX_IDLE_KEPT} such channels), so the next waiter on a busy name needs no
 * {@code SUBSCRIBE} round trip. Each channel counts the messages it got: an attempt that
 * {@linkplain #mark marks} a subscribed channel before it runs can later tell that nothing was
 * published on it since ({@link #quietSince}), which is what lets a waiter skip the attempt the
 * engine makes after subscribing, an attempt that exists only to catch a change that came before
 * the subscription.
 */
final class PubSubChannels {
    /** How long a channel with no waiters stays subscribed. */
    static final long KEEP_IDLE_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** How many channels with no waiters stay subscribed at most. */
    static final int MAX_IDLE_KEPT = 256;

    private final RedisClient client;
    private final String scope;
    private final String inbox;
    private final Consumer<String> onInbox;
    /** Not a monitor: subscribing waits for the server, and a virtual thread must not pin its carrier meanwhile. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();
    /** Subscribed channels without waiters, oldest first; guarded by {@link #lock}. */
    private final LinkedHashMap<String, Channel> idle = new LinkedHashMap<>();
    /** Disconnections of the client's connections: messages may have been lost across one. */
    private final AtomicLong disconnects = new AtomicLong();
    private StatefulRedisPubSubConnection<String, String> pubSub;
    private volatile boolean inboxOpen;

    /**
     * @param inbox this backend's inbox channel
     * @param onInbox what to do with a message on the inbox (runs on the client's event loop)
     */
    PubSubChannels(RedisClient client, String scope, String inbox, Consumer<String> onInbox) {
        this.client = client;
        this.scope = scope;
        this.inbox = inbox;
        this.onInbox = onInbox;
        client.addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
                disconnects.incrementAndGet();
            }
        });
    }

    /** A channel's listeners and how many messages it got. */
    static final class Channel {
        final String name;
        final List<Runnable> listeners = new CopyOnWriteArrayList<>();
        final AtomicLong messages = new AtomicLong();
        /** True once the server confirmed the subscription, until it is dropped. */
        volatile boolean subscribed;
        long idleSince;

        Channel(String name) {
            this.name = name;
        }
    }

    /** What the connection had heard of one subscribed channel at one moment; see {@link #quietSince}. */
    static final class Mark {
        final Channel channel;
        final long messages;
        final long disconnects;

        Mark(Channel channel, long messages, long disconnects) {
            this.channel = channel;
            this.messages = messages;
            this.disconnects = disconnects;
        }
    }

    /** {@return the inbox channel's name} */
    String inbox() {
        return inbox;
    }

    /** {@return true once the inbox is subscribed: from then on a hand-over reaches this backend} */
    boolean inboxOpen() {
        return inboxOpen;
    }

    /**
     * @return a mark of the channel taken now, or null when it is not subscribed (a change on it
     *     would not be heard)
     */
    Mark mark(String channel) {
        Channel c = channels.get(channel);
        if (c == null || !c.subscribed) {
            return null;
        }
        return new Mark(c, c.messages.get(), disconnects.get());
    }

    /**
     * @return true when the mark's channel has stayed subscribed and got no message since the
     *     mark, and no connection dropped
     */
    boolean quietSince(Mark mark) {
        Channel c = mark.channel;
        return c.subscribed && channels.get(c.name) == c && c.messages.get() == mark.messages
                && disconnects.get() == mark.disconnects;
    }

    /**
     * Runs {@code onChange} on every message on {@code channel} until cancelled; subscribes
     * (one round trip) unless the channel is subscribed already.
     */
    ChangeSubscription watch(String channel, Runnable onChange) {
        Channel c;
        lock.lock();
        try {
            c = listen(channel, onChange);
        } finally {
            lock.unlock();
        }
        AtomicBoolean cancelled = new AtomicBoolean();
        Channel watched = c;
        return () -> {
            if (!cancelled.compareAndSet(false, true)) {
                return;
            }
            lock.lock();
            try {
                stopListening(channel, watched, onChange);
            } finally {
                lock.unlock();
            }
        };
    }

    /** Adds a listener, subscribing when needed; with {@link #lock} held. */
    private Channel listen(String channel, Runnable onChange) {
        StatefulRedisPubSubConnection<String, String> ps = open();
        Channel c = channels.computeIfAbsent(channel, Channel::new);
        idle.remove(channel);
        c.listeners.add(onChange);
        if (!c.subscribed) {
            call(() -> ps.sync().subscribe(channel));
            c.subscribed = true;
        }
        dropIdle(System.nanoTime());
        return c;
    }

    /** Removes a listener; a channel left without any is kept subscribed a while. With {@link #lock} held. */
    private void stopListening(String channel, Channel watched, Runnable onChange) {
        watched.listeners.remove(onChange);
        if (watched.listeners.isEmpty() && channels.get(channel) == watched) {
            watched.idleSince = System.nanoTime();
            idle.put(channel, watched);
            dropIdle(watched.idleSince);
        }
    }

    /** Unsubscribes channels idle too long or too many; with {@link #lock} held. Never waits for the server. */
    private void dropIdle(long now) {
        Iterator<Channel> it = idle.values().iterator();
        while (it.hasNext()) {
            Channel c = it.next();
            if (idle.size() <= MAX_IDLE_KEPT && now - c.idleSince < KEEP_IDLE_NANOS) {
                return; // the rest are newer
            }
            it.remove();
            channels.remove(c.name);
            c.subscribed = false;
            if (pubSub != null) {
                pubSub.async().unsubscribe(c.name);
            }
        }
    }

    /** The connection, opened with the inbox subscribed; with {@link #lock} held. */
    private StatefulRedisPubSubConnection<String, String> open() {
        if (pubSub == null) {
            StatefulRedisPubSubConnection<String, String> ps = call(() -> client.connectPubSub());
            ps.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String ch, String message) {
                    if (inbox.equals(ch)) {
                        onInbox.accept(message);
                        return;
                    }
                    Channel c = channels.get(ch);
                    if (c != null) {
                        c.messages.incrementAndGet(); // before the wake-ups: see quietSince
                        c.listeners.forEach(Runnable::run);
                    }
                }
            });
            try {
                call(() -> ps.sync().subscribe(inbox));
            } catch (LockBackendException e) {
                ps.close();
                throw e;
            }
            pubSub = ps;
            inboxOpen = true;
        }
        return pubSub;
    }

    void close() {
        lock.lock();
        try {
            inboxOpen = false;
            if (pubSub != null) {
                pubSub.close();
            }
        } finally {
            lock.unlock();
        }
    }

    private <T> T call(java.util.function.Supplier<T> command) {
        try {
            return command.get();
        } catch (RedisException e) {
            throw RedisLockBackend.failed(scope, e);
        }
    }

    private void call(Runnable command) {
        call(() -> {
            command.run();
            return null;
        });
    }
}
