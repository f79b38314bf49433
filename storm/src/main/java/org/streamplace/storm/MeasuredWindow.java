package org.streamplace.storm;

/**
 * The interval a group of jobs is measured over, in epoch milliseconds: whole traffic-monitor
 * windows, from the first window boundary after {@code now}, as many as cover the duration (the
 * monitor writes each window at its end, aligned to the epoch). An empty interval at {@code now}
 * when nothing is measured.
 */
record MeasuredWindow(long startMs, long endMs) {
    /**
     * How much later a window arrives through Storm's metrics path ({@link RecordsConsumer}) than
     * in a file: the monitored tasks' metrics tick comes every second, then one tuple to the
     * consumer and one HTTP request; twice the tick period.
     */
    static final long METRICS_DELIVERY_MS = 2000;

    static MeasuredWindow after(long nowMs, double durationS, double windowS) {
        long windowMs = windowMs(windowS);
        if (durationS <= 0) {
            return new MeasuredWindow(nowMs, nowMs);
        }
        long start = (nowMs / windowMs + 1) * windowMs;
        return new MeasuredWindow(start, start + (long) Math.ceil(durationS * 1000 / windowMs) * windowMs);
    }

    boolean isEmpty() {
        return endMs == startMs;
    }

    /** A monitor window in milliseconds (at least one). */
    private static long windowMs(double windowS) {
        return Math.max(1L, Math.round(windowS * 1000));
    }

    /** Where the last measured window starts. */
    long lastStartMs(double windowS) {
        return endMs - windowMs(windowS);
    }

    /** When the last window's records are written: its end, plus half a window (at most a second). */
    long writtenMs(double windowS) {
        return endMs + Math.min(1000, windowMs(windowS) / 2);
    }
}
