package dev.kanuki;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link LeaderElection} in one JVM on {@code mem:}: one leader at a time, a resigning leader is
 * told before the next is elected, epochs rise from leader to leader, a closed provider ends the
 * candidates, a throwing callback does not end the election. (Candidates in separate JVMs and
 * killed leaders: kanuki-testkit's ElectionHarness, run by the LeaderElectionProcessTest of
 * kanuki-file, kanuki-redis and kanuki-zookeeper.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LeaderElectionTest {
    private LockProvider provider;
    /** Every callback of every candidate, in order: "elected A 3", "revoked A 3 RESIGNED". */
    private final List<String> log = new CopyOnWriteArrayList<>();

    @BeforeEach
    void open() {
        provider = LockProvider.open("mem:" + UUID.randomUUID());
    }

    @AfterEach
    void close() {
        provider.close();
    }

    private LeaderCandidate candidate(String id) {
        return new LeaderCandidate() {
            @Override
            public void elected(Leadership leadership) {
                log.add("elected " + id + " " + leadership.epoch());
            }

            @Override
            public void revoked(Leadership leadership, Leadership.End why) {
                assertFalse(leadership.isCurrent(), "a revoked term says it is not current");
                log.add("revoked " + id + " " + leadership.epoch() + " " + why);
            }
        };
    }

    @Test
    void resigningHandsLeadershipToTheNextWithAHigherEpoch() throws Exception {
        LeaderElection a = LeaderElection.join(provider, "jobs", candidate("A"));
        await(a::isLeader);
        LeaderElection b = LeaderElection.join(provider, "jobs", candidate("B"));
        LeaderElection c = LeaderElection.join(provider, "jobs", candidate("C"));
        Leadership first = a.leadership().orElseThrow();
        first.verify();
        assertEquals(provider.status("jobs").state(), LockStatus.State.HELD);

        a.resign();
        assertFalse(a.isLeader());
        assertTrue(a.left().isDone(), "resign() returns when the candidate's thread is done");
        assertEquals(Leadership.End.RESIGNED, first.ended().get(10, TimeUnit.SECONDS));
        assertThrows(LockLostException.class, first::verify);
        await(() -> b.isLeader() || c.isLeader());
        LeaderElection second = b.isLeader() ? b : c;
        LeaderElection third = second == b ? c : b;
        long secondEpoch = second.leadership().orElseThrow().epoch();
        assertTrue(secondEpoch > first.epoch(), secondEpoch + " after " + first.epoch());
        assertFalse(third.isLeader());

        second.close();
        await(third::isLeader);
        assertTrue(third.leadership().orElseThrow().epoch() > secondEpoch);
        third.close();
        third.close(); // idempotent

        // The log shows one leader at a time: each election follows the previous leader's revocation.
        String leader = null;
        for (String line : log) {
            String[] f = line.split(" ");
            if (f[0].equals("elected")) {
                assertEquals(null, leader, "elected while " + leader + " led: " + log);
                leader = f[1];
            } else {
                assertEquals(leader, f[1], "revoked a candidate that did not lead: " + log);
                assertEquals("RESIGNED", f[3]);
                leader = null;
            }
        }
        assertEquals(6, log.size(), log.toString());
    }

    @Test
    void aStandingCandidateLeavesWithoutBeingElected() {
        LeaderElection a = LeaderElection.join(provider, "standby", candidate("A"));
        await(a::isLeader);
        LeaderElection b = LeaderElection.join(provider, "standby", candidate("B"));
        b.close();
        assertTrue(b.left().isDone());
        a.close();
        assertEquals(List.of("elected A " + epochOf(0), "revoked A " + epochOf(0) + " RESIGNED"), log);
        // Nobody stands: the lock is free.
        assertEquals(LockStatus.State.FREE, provider.status("standby").state());
    }

    @Test
    void closingTheProviderRevokesAndEndsEveryCandidate() throws Exception {
        LeaderElection a = LeaderElection.join(provider, "closing", candidate("A"));
        await(a::isLeader);
        LeaderElection b = LeaderElection.join(provider, "closing", candidate("B"));
        Leadership term = a.leadership().orElseThrow();
        provider.close();
        assertEquals(Leadership.End.PROVIDER_CLOSED, term.ended().get(30, TimeUnit.SECONDS));
        a.left().get(30, TimeUnit.SECONDS);
        b.left().get(30, TimeUnit.SECONDS);
        assertFalse(a.isLeader());
        assertFalse(b.isLeader());
        assertEquals(List.of("elected A " + term.epoch(), "revoked A " + term.epoch() + " PROVIDER_CLOSED"), log);
        a.close();
    }

    @Test
    void aThrowingCallbackIsLoggedAndLeadershipGoesOn() {
        LeaderElection a = LeaderElection.join(provider, "throwing", new LeaderCandidate() {
            @Override
            public void elected(Leadership leadership) {
                throw new IllegalStateException("candidate bug (expected in this test)");
            }

            @Override
            public void revoked(Leadership leadership, Leadership.End why) {
                throw new IllegalStateException("candidate bug (expected in this test)");
            }
        });
        await(a::isLeader);
        LeaderElection b = LeaderElection.join(provider, "throwing", candidate("B"));
        a.close();
        await(b::isLeader);
        b.close();
        assertEquals(2, log.size(), log.toString());
    }

    private String epochOf(int line) {
        return log.get(line).split(" ")[2];
    }

    private static void await(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not reached within 60 s");
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
