package org.streamplace.storm;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The runners' stdout protocol, which {@code streamplace.storm.run} follows: JSON Lines, one
 * object per event, {@code "event"} first. In order: {@code starting}, {@code cluster}
 * ({@code supervisors}); per group of jobs {@code submitted}, {@code assigned}, {@code running}
 * ({@code job}), {@code warmup} ({@code seconds}), {@code measuring} ({@code seconds},
 * {@code start}, {@code end}: epoch seconds), one {@code result} per job ({@link JobReport}),
 * {@code killed} ({@code job}); any time, {@code note} ({@code message}). Everything else a JVM
 * prints goes to stderr or the log.
 */
final class Events {
    /** The process' own stdout, UTF-8, flushed per line (System.out may be redirected by a logger). */
    private static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    private Events() {
    }

    static void emit(String kind, Map<String, Object> fields) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("event", kind);
        e.putAll(fields);
        OUT.println(Json.write(e));
    }

    static void flush() {
        OUT.flush();
    }
}
