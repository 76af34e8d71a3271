package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link ParkingBench} in a tiny configuration (2 worker JVMs, one short round per kind of update):
 * both modes make updates and the counter equals their number after each (the bench checks it
 * and aborts otherwise; the test checks the figures it reports). No timing is checked.
 */
@Tag("slow")
class ParkingBenchSmokeTest {

    @ParameterizedTest
    @EnumSource(ParkingBench.Kind.class)
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void bothModesUpdateTheCounterExactlyOncePerUpdate(ParkingBench.Kind kind) throws Exception {
        List<ParkingBench.Round> rounds = ParkingBench.run(2, 0, 1, 300, kind);
        assertEquals(1, rounds.size());
        ParkingBench.Round round = rounds.get(0);
        assertEquals(ParkingBench.Mode.WAIT, round.first().mode(), "round 0 runs WAIT first");
        for (ParkingBench.Mode mode : ParkingBench.Mode.values()) {
            ParkingBench.Period period = round.of(mode);
            assertTrue(period.updates() > 0, mode + ": no updates");
            assertEquals(period.updates(), period.counter(), mode + ": the counter");
            assertTrue(period.appliedAtOnce() <= period.updates(), period::toString);
        }
        ParkingBench.print(rounds, 2, 300, kind);
    }
}
