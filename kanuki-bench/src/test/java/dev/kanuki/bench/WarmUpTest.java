package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The shared warm-up rule: settles on agreeing ratios, not before the minimum, gives up at the cap. */
class WarmUpTest {
    /** Offers ratios until warm-up ends; @return how many it took */
    private static int roundsUntilDone(WarmUp warmUp, double... ratios) {
        int n = 0;
        for (double r : ratios) {
            if (!warmUp.warming()) {
                break;
            }
            warmUp.offer(r);
            n++;
        }
        return n;
    }

    @Test
    void settlesOnceTheLastRatiosAgree() {
        WarmUp warmUp = new WarmUp("test", 2);
        // the memcached shape: first rounds 1.4–1.6×, then about 1.2×
        assertEquals(5, roundsUntilDone(warmUp, 1.6, 1.4, 1.22, 1.20, 1.25, 1.21, 1.2));
        assertFalse(warmUp.warming());
        assertEquals("settled after 5 rounds", warmUp.verdict());
    }

    @Test
    void ratiosJustOutsideTheToleranceDoNotSettle() {
        WarmUp warmUp = new WarmUp("test", 1);
        warmUp.offer(1.00);
        warmUp.offer(1.06);
        warmUp.offer(1.03);
        assertTrue(warmUp.warming(), "1.00 and 1.06 are 6 % apart");
        warmUp.offer(1.05);
        assertFalse(warmUp.warming(), "1.06, 1.03, 1.05 are within 5 %");
    }

    @Test
    void neverEndsBeforeTheBenchmarksMinimum() {
        WarmUp warmUp = new WarmUp("test", 6);
        assertEquals(6, roundsUntilDone(warmUp, 1, 1, 1, 1, 1, 1, 1, 1));
    }

    @Test
    void givesUpAtTheCapAndSaysSo() {
        WarmUp warmUp = new WarmUp("test", 2);
        double[] swinging = new double[WarmUp.MAX_ROUNDS + 5];
        for (int i = 0; i < swinging.length; i++) {
            swinging[i] = i % 2 == 0 ? 1.0 : 1.5;
        }
        assertEquals(WarmUp.MAX_ROUNDS, roundsUntilDone(warmUp, swinging));
        assertFalse(warmUp.warming());
        assertTrue(warmUp.verdict().startsWith("did not settle after " + WarmUp.MAX_ROUNDS + " rounds"), warmUp.verdict());
    }

    @Test
    void noWarmUpAtAllWithAMinimumOfZero() {
        assertFalse(new WarmUp("test", 0).warming());
    }
}
