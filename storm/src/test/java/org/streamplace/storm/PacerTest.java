package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class PacerTest {
    private static final long SECOND = 1_000_000_000L;

    /** Emitted over [0, seconds] when asked every 10 ms. */
    private static int emittedOver(double perSecond, double seconds) {
        SpecComponents.Pacer pacer = new SpecComponents.Pacer(perSecond);
        int total = 0;
        for (long t = 0; t <= (long) (seconds * 100); t++) {
            total += pacer.due(t * SECOND / 100, 1000);
        }
        return total;
    }

    @Test
    void keepsTheRateAlsoBelowOneTuplePerSecond() {
        // 1 tuple/s over 4 tasks: the micro-benchmarks' default (the old pacing emitted nothing)
        assertEquals(5, emittedOver(0.25, 20.0));
        assertEquals(20, emittedOver(1.0, 20.0));
        assertEquals(2000, emittedOver(100.0, 20.0));
    }

    @Test
    void aStalledSourceCatchesUpAtMostOneSecond() {
        SpecComponents.Pacer pacer = new SpecComponents.Pacer(100.0);
        assertEquals(0, pacer.due(0, 1000));
        assertEquals(100, pacer.due(5 * SECOND, 1000));   // 5 s stalled: one second's worth, not 500
        assertEquals(50, pacer.due(5 * SECOND + SECOND / 2, 1000));
        SpecComponents.Pacer fast = new SpecComponents.Pacer(1e6);
        assertEquals(0, fast.due(0, 10));
        assertEquals(10, fast.due(SECOND, 10));   // the burst cap per call
    }
}
