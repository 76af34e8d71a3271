package dev.kanuki.memcached;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.testkit.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The meta-protocol client against a real memcached: pipelining, errors, deadlines, reconnection. */
@Tag("servers")
class MetaClientTest {
    private static MemcachedServer server;
    private static MemcachedNode node;

    @BeforeAll
    static void start() {
        server = MemcachedServer.start();
        node = new MemcachedNode(server.host(), server.port(), Duration.ofSeconds(5));
    }

    @AfterAll
    static void stop() {
        node.close();
        server.close();
    }

    private static MetaReply one(MemcachedNode n, MetaRequest request) {
        return n.call(facts -> List.of(request)).get(0);
    }

    @Test
    void manyThreadsPipelineOnOneConnectionAndEachGetsItsOwnAnswers() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            int thread = t;
            done.add(pool.submit(() -> {
                for (int i = 0; i < 300; i++) {
                    String key = "pipe." + thread + "." + i;
                    byte[] value = ("value of " + key).getBytes(StandardCharsets.UTF_8);
                    MemcachedNode.Exchange x = node.call(facts -> List.of(
                            MetaRequest.set(key, value, "T60"),
                            MetaRequest.of("mg " + key + " v"),
                            MetaRequest.of("md " + key),
                            MetaRequest.of("mg " + key + " v")));
                    assertEquals("HD", x.get(0).code());
                    assertArrayEquals(value, x.get(1).value(), key);
                    assertEquals("HD", x.get(2).code());
                    assertEquals("EN", x.get(3).code());
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
    }

    @Test
    void valuesMayHoldLineEndsAndSpanManyReads() {
        byte[] tricky = "a\r\nVA 3 O1\r\nEND\r\n\0b".getBytes(StandardCharsets.UTF_8);
        assertEquals("HD", one(node, MetaRequest.set("tricky", tricky, "T60")).code());
        assertArrayEquals(tricky, one(node, MetaRequest.of("mg tricky v")).value());
        byte[] big = new byte[300_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        assertEquals("HD", one(node, MetaRequest.set("big", big, "T60")).code());
        MemcachedNode.Exchange x = node.call(f -> List.of(MetaRequest.of("mg big v"), MetaRequest.of("mg tricky v t")));
        assertArrayEquals(big, x.get(0).value());
        assertArrayEquals(tricky, x.get(1).value());
        assertTrue(x.get(1).number('t').getAsLong() > 0);
    }

    @Test
    void anErrorAnswerGoesToItsRequestAndTheStreamStaysInStep() {
        MemcachedNode.Exchange x = node.call(facts -> List.of(
                MetaRequest.set("text", "not a number".getBytes(StandardCharsets.US_ASCII), "T60"),
                MetaRequest.of("ma text v"),
                MetaRequest.of("mg text v")));
        assertEquals("HD", x.get(0).code());
        assertEquals("CLIENT_ERROR", x.get(1).code());
        assertTrue(x.get(1).isError());
        assertEquals("not a number", x.get(2).text());
        assertEquals("EN", one(node, MetaRequest.of("mg never-set v")).code());
    }

    @Test
    void theConnectionKnowsItsServerProcessAndClock() {
        ServerFacts facts = node.call(f -> List.of()).facts();
        assertEquals(server.pid(), facts.pid());
        assertTrue(facts.version().startsWith("1.6"), facts.version());
        long local = System.currentTimeMillis() * 1000;
        // one machine: the server's window holds this clock, so the floor clock is this clock
        assertTrue(Math.abs(facts.clockMicros() - local) < 1_000_000, facts.clockMicros() + " vs " + local);
    }

    @Test
    void aStoppedServerIsAClearErrorAndARestartedOneIsReconnected() {
        try (MemcachedServer own = MemcachedServer.start();
             MemcachedNode n = new MemcachedNode(own.host(), own.port(), Duration.ofSeconds(5))) {
            assertEquals("HD", one(n, MetaRequest.set("k", new byte[] {1}, "T60")).code());
            long pid = n.call(f -> List.of()).facts().pid();
            own.stop();
            LockBackendException e = assertThrows(LockBackendException.class,
                    () -> one(n, MetaRequest.of("mg k v")));
            assertTrue(e.getMessage().contains(own.address()), "names the server: " + e.getMessage());
            assertThrows(LockBackendException.class, () -> one(n, MetaRequest.of("mg k v")), "still down");
            own.restart();
            assertEquals("EN", one(n, MetaRequest.of("mg k v")).code(), "a new connection to the empty server");
            assertNotEquals(pid, n.call(f -> List.of()).facts().pid());
        }
    }

    @Test
    void aPausedServerFailsEachCallByItsDeadline() {
        try (MemcachedServer own = MemcachedServer.start();
             MemcachedNode n = new MemcachedNode(own.host(), own.port(), Duration.ofMillis(500))) {
            assertEquals("HD", one(n, MetaRequest.set("k", new byte[] {1}, "T60")).code());
            own.pause();
            try {
                // a generous bound: the point is that nothing waits for the server to come back
                assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                    LockBackendException e = assertThrows(LockBackendException.class,
                            () -> one(n, MetaRequest.of("mg k v")));
                    assertTrue(e.getMessage().contains("did not answer"), e.getMessage());
                    // a new connection: the kernel accepts it, the stopped server says nothing
                    assertThrows(LockBackendException.class, () -> one(n, MetaRequest.of("mg k v")));
                });
            } finally {
                own.resume();
            }
            assertEquals("VA", one(n, MetaRequest.of("mg k v")).code(), "back once the server is");
        }
    }

    @Test
    void anUnreachableServerIsNamed() {
        try (MemcachedNode n = new MemcachedNode("127.0.0.1", 1, Duration.ofSeconds(2))) {
            LockBackendException e = assertThrows(LockBackendException.class, () -> one(n, MetaRequest.of("mn")));
            assertTrue(e.getMessage().contains("127.0.0.1:1"), e.getMessage());
            assertTrue(e.hint().contains("memcached"), e.hint());
        }
    }
}
