package org.streamplace.storm;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Log-bucketed latency counts, written by one thread, read by the monitor's writer thread.
 * Bucket b holds values in [2^(b/8), 2^((b+1)/8)) microseconds (8 buckets per doubling, ~9 %
 * wide); bucket 0 also holds values below 1 us. No allocation per recorded value.
 */
public final class LatencyHistogram {
    public static final int PER_DOUBLING = 8;
    public static final int BUCKETS = 40 * PER_DOUBLING;
    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);

    public static int bucket(long micros) {
        if (micros < 1) {
            return 0;
        }
        int b = (int) (Math.log(micros) / Math.log(2) * PER_DOUBLING);
        return Math.min(b, BUCKETS - 1);
    }

    public void record(long micros) {
        int b = bucket(micros);
        counts.lazySet(b, counts.get(b) + 1);   // single writer: no CAS needed
    }

    long get(int b) {
        return counts.get(b);
    }
}
