package org.streamplace.storm;

/** Names and clock shared by the spec topology and the monitor. */
public final class Tuples {
    /** Field with the source emit time (epoch microseconds) that every spec tuple carries. */
    public static final String TS = "sp_ts";
    /** Field with the payload ({@code tuple_bytes} bytes). */
    public static final String PAYLOAD = "sp_payload";

    private static final long BASE_MICROS = System.currentTimeMillis() * 1000L;
    private static final long BASE_NANOS = System.nanoTime();

    private Tuples() {
    }

    /** Epoch microseconds: wall-clock aligned once per JVM, monotonic afterwards. */
    public static long nowMicros() {
        return BASE_MICROS + (System.nanoTime() - BASE_NANOS) / 1000L;
    }
}
