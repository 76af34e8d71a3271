package dev.kanuki.zookeeper;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.testkit.ZooKeeperServer;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** A test class's own ZooKeeper server, and a plain Curator client on it to look at the nodes. */
@Tag("servers")
abstract class WithZooKeeperServer {
    static ZooKeeperServer server;
    static CuratorFramework admin;

    @BeforeAll
    static void startServer() throws Exception {
        server = ZooKeeperServer.start();
        admin = CuratorFrameworkFactory.newClient(server.connectString(), new RetryOneTime(100));
        admin.start();
        assertTrue(admin.blockUntilConnected(30, TimeUnit.SECONDS));
    }

    @AfterAll
    static void stopServer() {
        admin.close();
        server.close();
    }
}
