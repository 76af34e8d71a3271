package dev.kanuki.bench;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * The ZooKeeper baselines kanuki's {@code zookeeper://} is compared with: the plain
 * {@link ZooKeeper} handle (no Curator) doing the least a lock needs, and Curator's
 * {@link InterProcessMutex}. Both as {@link HandoffParty}s for the handoff ring, and as single
 * operations for {@link ZooKeeperInterleaved}.
 */
final class ZooKeeperByHand implements AutoCloseable {
    /** A partner kind {@code zkRaw:CONNECT} is {@link RawParty}. */
    static final String RAW_PREFIX = "zkRaw:";
    /** A partner kind {@code zkCurator:CONNECT} is {@link CuratorParty}. */
    static final String CURATOR_PREFIX = "zkCurator:";
    /** An owner record of kanuki's size: id, host, pid, time, name. */
    static final byte[] RECORD = "0123456789abcdef0123456789abcdef\thost.example\t12345\t1795416091000\tbench"
            .getBytes(StandardCharsets.UTF_8);
    private static final int SESSION_MS = 30_000;

    private final ZooKeeper zk;

    /** Connects a plain handle and waits until it is connected. */
    ZooKeeperByHand(String connectString) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        zk = new ZooKeeper(connectString, SESSION_MS, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(30, TimeUnit.SECONDS)) {
            zk.close();
            throw new IllegalStateException("cannot connect to ZooKeeper at " + connectString);
        }
    }

    /** Creates {@code path}'s parent as a persistent node, unless it exists. */
    void parentOf(String path) throws Exception {
        try {
            zk.create(path.substring(0, path.lastIndexOf('/')), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // made by the other party, or an earlier round
        }
    }

    /**
     * One ephemeral create that returns the node's {@link Stat} (what gives kanuki its fencing
     * token), with an owner record of kanuki's size.
     *
     * @return true when created, false when the node exists
     */
    boolean tryCreate(String path) throws Exception {
        try {
            zk.create(path, RECORD, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL, new Stat());
            return true;
        } catch (KeeperException.NodeExistsException e) {
            return false;
        }
    }

    /** Deletes the node at any version. */
    void delete(String path) throws Exception {
        zk.delete(path, -1);
    }

    /** The minimal uncontended acquire + release: create, then delete. */
    void createAndDelete(String path) throws Exception {
        if (!tryCreate(path)) {
            throw new IllegalStateException(path + " exists: nobody else should hold it");
        }
        delete(path);
    }

    /**
     * Waits for the node: try to create it; when it exists, watch it with {@code exists} and try
     * again when the watch fires (or at once when it is already gone).
     */
    void createWaiting(String path) throws Exception {
        while (!tryCreate(path)) {
            CountDownLatch changed = new CountDownLatch(1);
            if (zk.exists(path, e -> changed.countDown()) != null && !changed.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no change of " + path + " within 30 s");
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        zk.close();
    }

    /** @return a Curator client with Curator's usual retry policy, connected */
    static CuratorFramework curator(String connectString) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, SESSION_MS, 15_000,
                new ExponentialBackoffRetry(100, 3));
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("cannot connect to ZooKeeper at " + connectString);
        }
        return client;
    }

    /** @return the raw node path of ring lock {@code i} */
    static String rawPath(int i) {
        return rawPath(HandoffParty.lockName(i));
    }

    /** @return the raw node path of a lock name */
    static String rawPath(String name) {
        return "/kanuki-bench-raw/" + name;
    }

    /** @return the {@link InterProcessMutex} path of a lock name */
    static String curatorPath(String name) {
        return "/kanuki-bench-curator/" + name;
    }

    /** The plain handle: create the ephemeral node, or watch it with {@code exists} and retry. */
    static final class RawParty implements HandoffParty {
        private final ZooKeeperByHand zk;

        RawParty(String connectString) throws Exception {
            zk = new ZooKeeperByHand(connectString);
            zk.parentOf(rawPath(0));
        }

        @Override
        public void lock(int i) throws Exception {
            zk.createWaiting(rawPath(i));
        }

        @Override
        public void unlock(int i) throws Exception {
            zk.delete(rawPath(i));
        }

        @Override
        public void close() throws InterruptedException {
            zk.close(); // the session's ephemeral nodes go with it
        }
    }

    /** Curator's {@link InterProcessMutex}, one per ring lock, on one client. */
    static final class CuratorParty implements HandoffParty {
        private final CuratorFramework client;
        private final InterProcessMutex[] mutexes = new InterProcessMutex[LOCKS];

        CuratorParty(String connectString) throws InterruptedException {
            client = curator(connectString);
            for (int i = 0; i < LOCKS; i++) {
                mutexes[i] = new InterProcessMutex(client, curatorPath(HandoffParty.lockName(i)));
            }
        }

        @Override
        public void lock(int i) throws Exception {
            if (!mutexes[i].acquire(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Curator did not get lock " + i + " within 30 s");
            }
        }

        @Override
        public void unlock(int i) throws Exception {
            mutexes[i].release();
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
