package dev.kanuki.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * {@link Locked @Locked} on a real {@code file:} backend with a ttl strategy (so that a lock can be
 * broken behind its holder): each attribute, with a check that fails when the feature breaks.
 * One Spring context for all.
 */
@SpringBootTest(classes = LockedTest.App.class, properties = {
        "kanuki.options.strategy=mkdir", "kanuki.lease=10s", "kanuki.locked.prefix=test/", "test.hold=5s"})
class LockedTest {
    private static final Duration LONG = Duration.ofSeconds(60);
    private static final ExecutorService callers = Executors.newCachedThreadPool();

    @DynamicPropertySource
    static void lockDirectory(DynamicPropertyRegistry registry) throws IOException {
        Path target = Path.of("target");
        Files.createDirectories(target);
        Path dir = Files.createTempDirectory(target.toAbsolutePath(), "locked-test-");
        registry.add("kanuki.uri", () -> "file:" + dir);
    }

    @AfterAll
    static void stopCallers() {
        callers.shutdownNow();
    }

    @Autowired
    Jobs jobs;
    @Autowired
    Reports reports;
    @Autowired
    WholeClass wholeClass;
    @Autowired
    LockProvider provider;
    @Autowired
    Transactions transactions;

    /** Whether this JVM's provider could take the lock now (it is free). */
    private boolean free(String name) {
        Optional<LockHandle> h = provider.lock(name).tryAcquire();
        h.ifPresent(LockHandle::close);
        return h.isPresent();
    }

    @Test
    void skipReturnsNothingWhileAnotherCallHoldsTheLock() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Future<String> first = callers.submit(() -> jobs.skip(release));
        await().atMost(LONG).until(() -> Jobs.running.get("skip") != null);
        assertThat(jobs.skip(new CountDownLatch(0))).as("skipped: the first call holds the lock").isNull();
        assertThat(jobs.skipOptional()).isEqualTo(Optional.empty());
        assertThat(jobs.skipList()).isEqualTo(List.of());
        assertThat(jobs.skipBoolean()).isFalse();
        assertThat(Jobs.calls.get()).as("the skipped bodies did not run").isEqualTo(1);
        release.countDown();
        assertThat(first.get(60, TimeUnit.SECONDS)).isEqualTo("ran");
        assertThat(jobs.skip(new CountDownLatch(0))).as("free again").isEqualTo("ran");
    }

    @Test
    void throwRaisesLockBusyExceptionAndWaitTakesTheLockWhenFreed() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Future<String> first = callers.submit(() -> jobs.busyThrows("k1", release));
        await().atMost(LONG).until(() -> Jobs.running.get("k1") != null);
        assertThatThrownBy(() -> jobs.busyThrows("k1", new CountDownLatch(0)))
                .isInstanceOf(LockBusyException.class)
                .hasMessageContaining("test/throw-k1")
                .satisfies(e -> assertThat(((LockBusyException) e).lockName()).isEqualTo("test/throw-k1"));
        assertThat(jobs.busyThrows("k2", new CountDownLatch(0))).as("another key is free").isEqualTo("ran k2");
        Future<String> waiter = callers.submit(() -> jobs.waits("k1"));
        Thread.sleep(200); // let it start waiting; the assertion below does not depend on it
        release.countDown();
        assertThat(first.get(60, TimeUnit.SECONDS)).isEqualTo("ran k1");
        assertThat(waiter.get(60, TimeUnit.SECONDS)).as("waited for the lock instead of skipping").isEqualTo("waited k1");
    }

    @Test
    void holdAtLeastKeepsTheLockAfterTheMethodReturned() {
        String name = jobs.shortJob();
        assertThat(name).isEqualTo("test/short");
        assertThat(free("test/short")).as("still held right after the method returned").isFalse();
        await().atMost(LONG).until(() -> free("test/short"));
        assertThat(jobs.plainJob()).isEqualTo("test/plain");
        assertThat(free("test/plain")).as("without holdAtLeast, released on return").isTrue();
    }

    @Test
    void onLostInterruptsTheMethodsThread() throws Exception {
        Future<String> holder = callers.submit(() -> jobs.interruptible());
        await().atMost(LONG).until(() -> Jobs.running.get("interruptible") != null);
        provider.breakLock("test/interruptible", true); // the lock removed behind its holder
        assertThat(holder.get(60, TimeUnit.SECONDS)).isEqualTo("interrupted");
        Future<String> second = callers.submit(() -> jobs.notInterrupted());
        await().atMost(LONG).until(() -> Jobs.running.get("not-interrupted") != null);
        LockHandle handle = Jobs.running.get("not-interrupted");
        provider.breakLock("test/not-interrupted", true);
        await().atMost(LONG).until(() -> !handle.isHeld());
        Jobs.finish.countDown();
        assertThat(second.get(60, TimeUnit.SECONDS)).as("onLost NONE: the method goes on, the handle says lost")
                .isEqualTo("finished, held false");
    }

    @Test
    void namesAreSpelTemplatesOverTheArguments() {
        assertThat(jobs.named(new Team("red"), "a b/c ü 日本 🎉")).isEqualTo("test/team-red a b/c ü 日本 🎉");
        // canonical (NFC) names: e + combining acute is é
        assertThat(jobs.named(new Team("cafe\u0301"), "x")).isEqualTo("test/team-caf\u00e9 x");
        assertThat(jobs.byIndex("p0")).isEqualTo("test/idx-p0");
        assertThatThrownBy(() -> jobs.named(new Team("nul\u0000"), "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("@Locked on " + Jobs.class.getName() + ".named()")
                .hasMessageContaining("is not a lock name");
        assertThatThrownBy(() -> jobs.named(new Team("\ud800"), "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("surrogate");
        assertThat(jobs.defaultName()).isEqualTo("test/" + Jobs.class.getName() + ".defaultName");
    }

    @Test
    void theHandleIsAtHandAsAParameterAndFromTheContext() {
        long[] tokens = jobs.tokens(null);
        assertThat(tokens[0]).isPositive().isEqualTo(tokens[1]);
        assertThat(LockedContext.find()).as("nothing left on the caller's thread").isEmpty();
        assertThatThrownBy(LockedContext::current).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void worksOnInterfaceMethodsAndWholeClasses() {
        assertThat(reports.report()).isEqualTo("test/reports");
        assertThat(wholeClass.one()).isEqualTo("test/" + WholeClass.class.getName() + ".one");
        assertThat(wholeClass.shared()).isEqualTo("test/shared");
        assertThat(wholeClass.toString()).as("Object's methods are not locked").doesNotContain("test/");
    }

    @Test
    void theLockIsTakenOutsideTheTransaction() {
        transactions.inTransaction();
        assertThat(RecordingTransactions.events).containsExactly("begin, lock held", "commit, lock held");
        assertThat(free("test/tx")).isTrue();
    }

    @Test
    void asyncMethodsTakeTheLockOnTheExecutorsThread() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> result = jobs.async(release);
        assertThat(result).as("the call returned before the body ran to its end").isNotDone();
        await().atMost(LONG).until(() -> Jobs.running.get("async") != null);
        assertThat(free("test/async")).as("held while the body runs on the executor").isFalse();
        release.countDown();
        assertThat(result.get(60, TimeUnit.SECONDS)).startsWith("held on ").doesNotContain(Thread.currentThread().getName());
        await().atMost(LONG).until(() -> free("test/async"));
    }

    /** The test's beans. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @EnableAsync
    @EnableTransactionManagement
    static class App {
        @Bean
        Jobs jobs() {
            return new Jobs();
        }

        @Bean
        Reports reports() {
            return new ReportsImpl();
        }

        @Bean
        WholeClass wholeClass() {
            return new WholeClass();
        }

        @Bean
        Transactions transactions() {
            return new Transactions();
        }

        @Bean
        RecordingTransactions transactionManager() {
            return new RecordingTransactions();
        }
    }

    record Team(String id) {
    }

    static class Jobs {
        // static: the test reads them while the bean is a proxy (a CGLIB proxy's own fields are not the bean's)
        static final Map<String, LockHandle> running = new ConcurrentHashMap<>();
        static final AtomicInteger calls = new AtomicInteger();
        static final CountDownLatch finish = new CountDownLatch(1);

        @Locked("skip")
        public String skip(CountDownLatch release) throws InterruptedException {
            calls.incrementAndGet();
            running.put("skip", LockedContext.current());
            release.await();
            running.remove("skip");
            return "ran";
        }

        @Locked("skip")
        public Optional<String> skipOptional() {
            calls.incrementAndGet();
            return Optional.of("ran");
        }

        @Locked("skip")
        public List<String> skipList() {
            calls.incrementAndGet();
            return List.of("ran");
        }

        @Locked("skip")
        public boolean skipBoolean() {
            calls.incrementAndGet();
            return true;
        }

        @Locked(value = "throw-#{#key}", onBusy = Locked.OnBusy.THROW)
        public String busyThrows(String key, CountDownLatch release) throws InterruptedException {
            running.put(key, LockedContext.current());
            release.await();
            running.remove(key);
            return "ran " + key;
        }

        @Locked(value = "throw-#{#key}", waitUpTo = "60s", onBusy = Locked.OnBusy.THROW)
        public String waits(String key) {
            return "waited " + key;
        }

        @Locked(value = "short", holdAtLeast = "${test.hold}")
        public String shortJob() {
            return LockedContext.current().name();
        }

        @Locked("plain")
        public String plainJob() {
            return LockedContext.current().name();
        }

        @Locked(value = "interruptible", onLost = Locked.OnLost.INTERRUPT)
        public String interruptible() {
            running.put("interruptible", LockedContext.current());
            try {
                Thread.sleep(120_000);
                return "slept";
            } catch (InterruptedException e) {
                return "interrupted";
            }
        }

        @Locked("not-interrupted")
        public String notInterrupted() throws InterruptedException {
            running.put("not-interrupted", LockedContext.current());
            finish.await();
            return "finished, held " + LockedContext.current().isHeld();
        }

        @Locked("team-#{#team.id} #{#what}")
        public String named(Team team, String what) {
            return LockedContext.current().name();
        }

        @Locked("idx-#{#p0}")
        public String byIndex(String x) {
            return LockedContext.current().name();
        }

        @Locked
        public String defaultName() {
            return LockedContext.current().name();
        }

        @Locked("tokens")
        public long[] tokens(LockHandle handle) {
            return new long[] {handle.fencingToken(), LockedContext.current().fencingToken()};
        }

        @Async
        @Locked("async")
        public CompletableFuture<String> async(CountDownLatch release) throws InterruptedException {
            running.put("async", LockedContext.current());
            release.await();
            running.remove("async");
            return CompletableFuture.completedFuture("held on " + Thread.currentThread().getName());
        }
    }

    interface Reports {
        @Locked("reports")
        String report();
    }

    static class ReportsImpl implements Reports {
        @Override
        public String report() {
            return LockedContext.current().name();
        }
    }

    @Locked
    static class WholeClass {
        public String one() {
            return LockedContext.current().name();
        }

        @Locked("shared")
        public String shared() {
            return LockedContext.current().name();
        }

        @Override
        public String toString() {
            return "whole " + LockedContext.find().map(LockHandle::name).orElse("-");
        }
    }

    static class Transactions {
        @Transactional
        @Locked("tx")
        public void inTransaction() {
        }
    }

    /** A transaction manager that records whether the lock was held when the transaction began and committed. */
    static class RecordingTransactions extends AbstractPlatformTransactionManager {
        private static final long serialVersionUID = 1L;
        static final List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            events.add("begin, lock " + (LockedContext.find().isPresent() ? "held" : "not held"));
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {
            events.add("commit, lock " + (LockedContext.find().isPresent() ? "held" : "not held"));
        }

        @Override
        protected void doRollback(DefaultTransactionStatus status) {
            events.add("rollback");
        }
    }
}
