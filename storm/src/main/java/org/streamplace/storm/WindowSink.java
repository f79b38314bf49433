package org.streamplace.storm;

import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.storm.metric.api.IMetric;

/**
 * Where a worker's {@link MonitorWriter} puts each whole window: the three record kinds as JSON
 * Lines ({@code traffic}, {@code load}, {@code latency}; each line ends in a newline).
 */
interface WindowSink extends Closeable {
    void accept(long windowStartMillis, CharSequence traffic, CharSequence load, CharSequence latency)
            throws IOException;

    /**
     * Files in a directory of the worker's machine: {@code traffic-<suffix>}, {@code load-<suffix>},
     * {@code latency-<suffix>} with {@code suffix} = {@code <storm id>-<worker port>-<pid>.jsonl},
     * opened at the first window (a directory that cannot be written is the writer thread's logged
     * error, not the worker's).
     */
    final class Files implements WindowSink {
        private final Path dir;
        private final String suffix;
        private BufferedWriter traffic;
        private BufferedWriter load;
        private BufferedWriter latency;

        Files(String dir, String suffix) {
            this.dir = Paths.get(dir);
            this.suffix = suffix;
        }

        private BufferedWriter open(String prefix) throws IOException {
            return java.nio.file.Files.newBufferedWriter(dir.resolve(prefix + suffix), StandardCharsets.UTF_8,
                                                         StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }

        @Override
        public void accept(long windowStartMillis, CharSequence t, CharSequence l, CharSequence lat) throws IOException {
            if (traffic == null) {
                java.nio.file.Files.createDirectories(dir);
                traffic = open("traffic-");
                load = open("load-");
                latency = open("latency-");
            }
            traffic.append(t).flush();
            load.append(l).flush();
            latency.append(lat).flush();
        }

        @Override
        public void close() throws IOException {
            try (BufferedWriter a = traffic; BufferedWriter b = load; BufferedWriter c = latency) {
                // closes those opened, also when one fails
            }
        }

        @Override
        public String toString() {
            return dir.toString();
        }
    }

    /**
     * Windows queued for Storm's metrics path: every monitored task of the worker registers
     * {@link #metric()} (a V1 metric, {@code TopologyContext.registerMetric}); the first task whose
     * metrics tick comes takes every queued window as one data point, which Storm sends on its
     * {@code __metrics} stream to the topology's metrics consumers ({@link RecordsConsumer}).
     *
     * <p>A queued window is one JSON line: {@code worker} (storm id, port, pid), {@code
     * window_start}, the three kinds as strings, and {@code dropped}: how many windows this worker
     * has dropped so far because {@link #CAPACITY} were queued and no tick took them (no consumer,
     * or executors stalled), so a loss shows at the receiver instead of passing silently.
     */
    final class Outbox implements WindowSink {
        /** Windows kept while no metrics tick takes them: ten minutes of Storm's 10-s windows. */
        static final int CAPACITY = 60;
        private final String worker;
        private final ArrayDeque<String> queue = new ArrayDeque<>();
        private long dropped;

        Outbox(String worker) {
            this.worker = worker;
        }

        @Override
        public synchronized void accept(long windowStartMillis, CharSequence traffic, CharSequence load,
                                        CharSequence latency) {
            if (queue.size() == CAPACITY) {
                queue.removeFirst();
                dropped++;
            }
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("worker", worker);
            doc.put("window_start", java.math.BigDecimal.valueOf(windowStartMillis, 3));
            doc.put("traffic", traffic.toString());
            doc.put("load", load.toString());
            doc.put("latency", latency.toString());
            doc.put("dropped", dropped);
            queue.addLast(Json.write(doc));
        }

        /** Every queued window, one per line, and the queue emptied; null when none is queued. */
        synchronized String drain() {
            if (queue.isEmpty()) {
                return null;
            }
            String out = String.join("\n", queue);
            queue.clear();
            return out;
        }

        /**
         * The metric each monitored task registers: its value is {@link #drain()}. Its dimensions
         * are an empty {@code HashMap}: the data point carries them to the consumer, and Storm's
         * Kryo registers {@code HashMap} but not {@code IMetric}'s default, {@code
         * Collections.emptyMap()} (a data point between workers then fails to serialise).
         */
        IMetric metric() {
            return new IMetric() {
                private final Map<String, String> none = new java.util.HashMap<>();

                @Override
                public Object getValueAndReset() {
                    return drain();
                }

                @Override
                public Map<String, String> getDimensions() {
                    return none;
                }
            };
        }

        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return "Storm's metrics path (worker " + worker + ")";
        }
    }
}
