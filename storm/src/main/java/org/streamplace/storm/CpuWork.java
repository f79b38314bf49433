package org.streamplace.storm;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Real CPU work of a given duration: a calibrated integer loop (no sleeping, no allocation).
 *
 * <p>Calibrated once per JVM against the thread's CPU time (not wall time), so other load on the
 * machine does not change how much work one "second" is; a node whose CPU is throttled (testbed
 * cgroups) then takes longer wall time for the same work, as a slower machine would.
 */
public final class CpuWork {
    private static volatile long sink;
    private static volatile double iterationsPerSecond;

    private CpuWork() {
    }

    /** Spends about {@code seconds} of this thread's CPU time. */
    public static void spend(double seconds) {
        if (seconds <= 0) {
            return;
        }
        long n = (long) (seconds * rate());
        sink = loop(n, sink);
    }

    static double rate() {
        double r = iterationsPerSecond;
        if (r == 0) {
            r = calibrate();
            iterationsPerSecond = r;
        }
        return r;
    }

    private static synchronized double calibrate() {
        if (iterationsPerSecond != 0) {
            return iterationsPerSecond;
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long n = 1 << 20;
        sink = loop(n, 1);                          // warm the JIT
        double best = 0;
        for (int round = 0; round < 5; round++) {
            long t0 = mx.getCurrentThreadCpuTime();
            sink = loop(n, sink);
            long dt = mx.getCurrentThreadCpuTime() - t0;
            if (dt < 20_000_000L) {                 // too short to time: double the batch
                n *= 2;
                round--;
                continue;
            }
            best = Math.max(best, n / (dt / 1e9));
        }
        return best;
    }

    private static long loop(long n, long x) {
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }
}
