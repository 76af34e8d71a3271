package dev.kanuki.servlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.ParkedItem;
import dev.kanuki.spi.WorkSpool;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link LockingFilter} in a real Jetty, against one lock store; subclasses say which. Requests
 * that must overlap are held inside the servlet by a latch the test opens, never by sleeping.
 */
// Generous: on the loaded 2-vCPU CI machine a first request once took over 30 s to reach the servlet.
@Timeout(value = 180, unit = TimeUnit.SECONDS)
abstract class LockingFilterScenarios {
    private static final Duration LIMIT = Duration.ofSeconds(60);
    private LockProvider locks;
    private TestServer server;
    /** Each request of {@link #holding()} takes one permit on entry. */
    private final Semaphore entered = new Semaphore(0);
    /** Opened by the test: the held requests finish. */
    private final CountDownLatch finish = new CountDownLatch(1);

    /** @return the URI of the lock store under test */
    abstract String uri();

    /** @return where parked work waits: the store's own spool unless a subclass gives another */
    WorkSpool spool(LockProvider provider) {
        return provider.spool();
    }

    @BeforeEach
    void open() {
        locks = LockProvider.open(uri());
    }

    @AfterEach
    void close() throws Exception {
        finish.countDown();
        if (server != null) {
            server.close();
        }
        locks.close();
    }

    /** A servlet that answers "done" once the test opens {@link #finish}. */
    private HttpServlet holding() {
        return TestServer.servlet((request, response) -> {
            assertNotNull(request.getAttribute(LockingFilter.HANDLE_ATTRIBUTE), "the handle is a request attribute");
            entered.release();
            awaitQuietly(finish);
            response.getWriter().print("done");
        });
    }

    private TestServer start(LockingFilter filter, String path, HttpServlet servlet) throws Exception {
        server = TestServer.setup().filter(filter).servlet(path, servlet).start();
        return server;
    }

    private static HttpResponse<String> done(CompletableFuture<HttpResponse<String>> response) throws Exception {
        return response.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    }

    private void awaitEntered(int requests) throws InterruptedException {
        assertTrue(entered.tryAcquire(requests, LIMIT.toSeconds(), TimeUnit.SECONDS), "requests did not reach the servlet");
    }

    /** @return whether the lock of a request key is free now (taken and given back at once) */
    private boolean free(String prefix, String key) {
        Optional<LockHandle> h = locks.lock(LockingFilter.lockName(prefix, key)).tryAcquire();
        h.ifPresent(LockHandle::close);
        return h.isPresent();
    }

    @Test
    void aConflictingKeyIsAnswered409WithRetryAfterWhileOtherKeysRun() throws Exception {
        LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("Idempotency-Key"))
                .prefix("shop").retryAfter(Duration.ofMillis(2500)).build();
        TestServer web = start(filter, "/buy", holding());
        var first = web.get("/buy", "Idempotency-Key", "order-1");
        awaitEntered(1);

        HttpResponse<String> second = done(web.get("/buy", "Idempotency-Key", "order-1"));
        assertEquals(409, second.statusCode());
        assertEquals(Optional.of("3"), second.headers().firstValue("Retry-After"));
        assertTrue(second.body().startsWith("409 Conflict"), second.body());
        assertTrue(second.body().length() < 200, "a short body");
        assertFalse(free("shop", "header:Idempotency-Key=order-1"));

        var other = web.get("/buy", "Idempotency-Key", "order-2");
        awaitEntered(1); // another key is not held up
        finish.countDown();
        assertEquals(200, done(first).statusCode());
        assertEquals(200, done(other).statusCode());
        assertTrue(free("shop", "header:Idempotency-Key=order-1"), "released when the response completed");
        assertEquals(200, done(web.get("/buy", "Idempotency-Key", "order-1")).statusCode());
    }

    /** What a parking handler saw: the item and the fencing token it ran under. */
    private record Applied(ParkedItem item, long token) {
        String text() {
            return new String(item.bytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aBusyKeyParksTheWorkWhenTheApplicationSaysSoAndTheHolderAppliesItAfterItFinishes() throws Exception {
        List<Applied> applied = new CopyOnWriteArrayList<>();
        List<Long> holderTokens = new CopyOnWriteArrayList<>();
        WorkSpool spool = spool(locks);
        LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("Idempotency-Key")).prefix("shop")
                .parkWhenBusy(request -> request.getHeader("No-Parking") != null ? null
                        : ("add " + request.getParameter("item")).getBytes(StandardCharsets.UTF_8),
                        (item, token) -> applied.add(new Applied(item, token)), spool)
                .build();
        TestServer web = start(filter, "/cart", TestServer.servlet((request, response) -> {
            holderTokens.add(((LockHandle) request.getAttribute(LockingFilter.HANDLE_ATTRIBUTE)).fencingToken());
            entered.release();
            awaitQuietly(finish);
            response.getWriter().print("done");
        }));
        var first = web.get("/cart?item=book", "Idempotency-Key", "cart-1");
        awaitEntered(1);

        HttpResponse<String> parked = done(web.get("/cart?item=pen", "Idempotency-Key", "cart-1"));
        assertEquals(202, parked.statusCode(), parked::body);
        String id = parked.headers().firstValue(LockingFilter.PARKED_HEADER).orElseThrow();
        assertTrue(parked.body().startsWith("202 Accepted") && parked.body().contains(id), parked.body());
        assertEquals(Optional.of("no-store"), parked.headers().firstValue("Cache-Control"));
        assertEquals(0, entered.availablePermits(), "the parked request did not run the servlet");
        HttpResponse<String> refused = done(web.get("/cart?item=cup", "Idempotency-Key", "cart-1", "No-Parking", "1"));
        assertEquals(409, refused.statusCode(), "the decider's null is the usual busy answer");
        assertTrue(applied.isEmpty(), "nothing applied while the holder runs: " + applied);
        assertEquals(1, spool.list(LockingFilter.lockName("shop", "header:Idempotency-Key=cart-1")).size());

        finish.countDown();
        assertEquals(200, done(first).statusCode());
        await().atMost(LIMIT).until(() -> applied.size() == 1);
        Applied run = applied.get(0);
        assertEquals("add pen", run.text());
        assertEquals(id, run.item().id(), "the handler sees the id the 202 named");
        assertTrue(run.token() > holderTokens.get(0), "applied under a later acquisition of the key's lock: "
                + run.token() + " after " + holderTokens);
        assertTrue(spool.isEmpty(LockingFilter.lockName("shop", "header:Idempotency-Key=cart-1")));
        assertTrue(free("shop", "header:Idempotency-Key=cart-1"));
        assertEquals(1, applied.size());
    }

    @Test
    void differentPrefixesNeverMeet() throws Exception {
        LockHandle other = locks.lock(LockingFilter.lockName("other-app", "header:K=1")).acquire(LIMIT);
        try {
            LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("K")).prefix("this-app").build();
            TestServer web = start(filter, "/x", holding());
            finish.countDown();
            assertEquals(200, done(web.get("/x", "K", "1")).statusCode());
        } finally {
            other.close();
        }
    }

    @Test
    void aHandlerThatThrowsReleasesTheLock() throws Exception {
        LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("K")).prefix("p").build();
        TestServer web = start(filter, "/fail", TestServer.servlet((request, response) -> {
            throw new IllegalStateException("the handler failed");
        }));
        assertEquals(500, done(web.get("/fail", "K", "a")).statusCode());
        assertTrue(free("p", "header:K=a"));
        assertEquals(500, done(web.get("/fail", "K", "a")).statusCode(), "ran again: not refused with 409");
    }

    @Test
    void anAsyncServletHoldsTheLockUntilItCompletes() throws Exception {
        AtomicReference<AsyncContext> pending = new AtomicReference<>();
        LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("K")).prefix("p").build();
        TestServer web = start(filter, "/async", TestServer.servlet((request, response) -> {
            AsyncContext async = request.startAsync();
            async.setTimeout(0);
            pending.set(async);
            entered.release();
        }));
        var first = web.get("/async", "K", "a");
        awaitEntered(1);
        assertFalse(free("p", "header:K=a"), "still held after the servlet returned");
        assertEquals(409, done(web.get("/async", "K", "a")).statusCode());

        AsyncContext async = pending.get();
        async.getResponse().getWriter().print("later");
        async.complete();
        assertEquals("later", done(first).body());
        await().atMost(LIMIT).until(() -> free("p", "header:K=a"));
    }

    @Test
    void anAsyncTimeoutReleasesTheLock() throws Exception {
        LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("K")).prefix("p").build();
        TestServer web = start(filter, "/never", TestServer.servlet((request, response) -> {
            if (request.getDispatcherType() == jakarta.servlet.DispatcherType.REQUEST) {
                request.startAsync().setTimeout(300); // never completed: the container times it out
            }
        }));
        assertEquals(500, done(web.get("/never", "K", "t")).statusCode());
        await().atMost(LIMIT).until(() -> free("p", "header:K=t"));
    }

    @Test
    void aClientThatGoesAwayReleasesTheLock() throws Exception {
        LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("K")).prefix("p").build();
        TestServer web = start(filter, "/stream", TestServer.servlet((request, response) -> {
            entered.release();
            OutputStream out = response.getOutputStream();
            byte[] chunk = new byte[8192];
            while (true) { // until the write fails: the client is gone
                out.write(chunk);
                out.flush();
            }
        }));
        try (Socket socket = new Socket("127.0.0.1", web.base().getPort())) {
            socket.getOutputStream().write(("GET /app/stream HTTP/1.1\r\nHost: x\r\nK: gone\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            awaitEntered(1);
            InputStream in = socket.getInputStream();
            assertTrue(in.read(new byte[1024]) > 0);
            assertFalse(free("p", "header:K=gone"));
        }
        await().atMost(LIMIT).until(() -> free("p", "header:K=gone"));
    }

    @Test
    void aWaitThatRunsOutIsAnswered503AndA409WhenConfigured() throws Exception {
        for (int status : new int[] {503, 409}) {
            LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("K")).prefix("w" + status)
                    .waitUpTo(Duration.ofMillis(200)).timeoutStatus(status).build();
            Semaphore in = new Semaphore(0);
            CountDownLatch out = new CountDownLatch(1);
            try (TestServer web = TestServer.setup().filter(filter).servlet("/slow", TestServer.servlet((request, response) -> {
                in.release();
                awaitQuietly(out);
            })).start()) {
                var first = web.get("/slow", "K", "w");
                assertTrue(in.tryAcquire(LIMIT.toSeconds(), TimeUnit.SECONDS));
                HttpResponse<String> waited = done(web.get("/slow", "K", "w"));
                assertEquals(status, waited.statusCode());
                assertEquals(Optional.of("1"), waited.headers().firstValue("Retry-After"));
                out.countDown();
                assertEquals(200, done(first).statusCode());
            }
        }
    }

    @Test
    void aWaitingRequestRunsOnceTheHolderFinishes() throws Exception {
        LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.header("K")).prefix("p")
                .waitUpTo(LIMIT).build();
        TestServer web = start(filter, "/slow", holding());
        var first = web.get("/slow", "K", "x");
        awaitEntered(1);
        var second = web.get("/slow", "K", "x");
        finish.countDown();
        assertEquals(200, done(first).statusCode());
        assertEquals(200, done(second).statusCode());
    }

    @Test
    void aFormTokenLocksAndTheServletStillReadsTheForm() throws Exception {
        AtomicReference<String> text = new AtomicReference<>();
        LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.parameter("token")).prefix("board").build();
        TestServer web = start(filter, "/post", TestServer.servlet((request, response) -> {
            text.set(request.getParameter("text"));
            entered.release();
            awaitQuietly(finish);
        }));
        var first = web.postForm("/post", "token=t-1&text=hello+world");
        awaitEntered(1);
        assertEquals("hello world", text.get());
        assertEquals(409, done(web.postForm("/post", "text=again&token=t-1")).statusCode());
        finish.countDown();
        assertEquals(200, done(first).statusCode());
    }

    @Test
    void requestsWithoutAKeyPassUnlessRejected() throws Exception {
        LockingFilter passing = LockingFilter.builder(locks).key(RequestKey.session()).build();
        AtomicReference<Object> handle = new AtomicReference<>("not run");
        try (TestServer web = TestServer.setup().filter(passing).servlet("/x", TestServer.servlet((request, response) -> {
            handle.set(request.getAttribute(LockingFilter.HANDLE_ATTRIBUTE));
        })).start()) {
            assertEquals(200, done(web.get("/x")).statusCode());
            assertEquals(null, handle.get(), "ran unlocked");
        }
        LockingFilter rejecting = LockingFilter.builder(locks).key(RequestKey.session()).rejectWithoutKey(true).build();
        TestServer web = start(rejecting, "/x", holding());
        HttpResponse<String> refused = done(web.get("/x"));
        assertEquals(400, refused.statusCode());
        assertTrue(refused.body().startsWith("400 Bad Request"), refused.body());
    }

    @Test
    void initParametersConfigureTheFilterAsWebXmlWould() throws Exception {
        server = TestServer.setup().filter(Map.of("kanuki.uri", uri(), "kanuki.key", "path:^/teams/([^/]+)/",
                "kanuki.prefix", "teams", "kanuki.wait", "100ms", "kanuki.timeoutStatus", "409",
                "kanuki.retryAfter", "5s")).servlet("/teams/*", holding()).start();
        var first = server.get("/teams/red/deploy");
        awaitEntered(1);
        assertFalse(free("teams", "path:red"));
        HttpResponse<String> second = done(server.get("/teams/red/rollback"));
        assertEquals(409, second.statusCode());
        assertEquals(Optional.of("5"), second.headers().firstValue("Retry-After"));
        var blue = server.get("/teams/blue/deploy");
        awaitEntered(1);
        finish.countDown();
        assertEquals(200, done(first).statusCode());
        assertEquals(200, done(blue).statusCode());
    }

    static void awaitQuietly(CountDownLatch latch) {
        try {
            if (!latch.await(LIMIT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never let the request finish");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
