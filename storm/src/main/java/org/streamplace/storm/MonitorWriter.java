package org.streamplace.storm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One per worker JVM and topology: at every window boundary (multiples of the window since the
 * epoch) it reads each registered {@link TrafficMonitor}'s counters and hands the window's
 * increments, as JSON Lines, to its {@link WindowSink}: {@code traffic} ({@code window_start,
 * window_seconds, src_task, dst_task, tuples, bytes}), {@code load} ({@code window_start,
 * window_seconds, task, executed, cpu_seconds}, and for spouts {@code acked, failed}) and {@code latency} (sink tasks: {@code
 * window_start, window_seconds, task, count, buckets} with [bucket, count] pairs of
 * {@link LatencyHistogram}). The sink appends them to files ({@link WindowSink.Files}) or queues
 * them for Storm's metrics path ({@link WindowSink.Outbox}). Only whole windows are handed on: the
 * one open when the topology stops is dropped.
 */
final class MonitorWriter implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(MonitorWriter.class);
    private static final Map<String, MonitorWriter> BY_TOPOLOGY = new ConcurrentHashMap<>();

    private final String stormId;
    private final long windowMillis;
    private final WindowSink sink;
    private final List<TrafficMonitor> hooks = new CopyOnWriteArrayList<>();
    private final Map<TrafficMonitor, long[]> last = new IdentityHashMap<>();
    private final Thread thread;
    private volatile boolean stopped;

    private MonitorWriter(String stormId, WindowSink sink, double windowSeconds) {
        this.stormId = stormId;
        this.windowMillis = Math.max(1L, Math.round(windowSeconds * 1000));
        this.sink = sink;
        this.thread = new Thread(this, "streamplace-monitor-" + stormId);
        thread.setDaemon(true);
    }

    /**
     * The worker's writer for topology {@code stormId}, made with {@code sink} (called only for the
     * worker's first hook) if there is none yet; {@code hook} is read from then on.
     */
    static synchronized MonitorWriter register(TrafficMonitor hook, String stormId, double window,
                                               java.util.function.Supplier<WindowSink> sink) {
        MonitorWriter w = BY_TOPOLOGY.get(stormId);
        if (w == null) {
            w = new MonitorWriter(stormId, sink.get(), window);
            BY_TOPOLOGY.put(stormId, w);
            w.thread.start();
        }
        w.hooks.add(hook);
        return w;
    }

    synchronized void unregister(TrafficMonitor hook) {
        hooks.remove(hook);
        if (hooks.isEmpty()) {
            stopped = true;
            thread.interrupt();
            synchronized (MonitorWriter.class) {
                BY_TOPOLOGY.remove(stormId, this);
            }
        }
    }

    /** The sink this writer hands its windows to. */
    WindowSink sink() {
        return sink;
    }

    @Override
    public void run() {
        try (WindowSink out = sink) {
            long boundary = (System.currentTimeMillis() / windowMillis + 1) * windowMillis;
            while (!stopped) {
                long wait = boundary - System.currentTimeMillis();
                if (wait > 0) {
                    try {
                        Thread.sleep(wait);
                    } catch (InterruptedException e) {
                        continue;   // stopped: the open window is dropped
                    }
                }
                write(boundary - windowMillis, out);
                boundary += windowMillis;
            }
        } catch (IOException | UncheckedIOException e) {
            LOG.error("streamplace monitor: cannot write records to {}", sink, e);
        }
    }

    private void write(long startMillis, WindowSink out) throws IOException {
        StringBuilder traffic = new StringBuilder();
        StringBuilder load = new StringBuilder();
        StringBuilder latency = new StringBuilder();
        String head = "{\"window_start\":" + java.math.BigDecimal.valueOf(startMillis, 3).toPlainString()
                      + ",\"window_seconds\":" + java.math.BigDecimal.valueOf(windowMillis, 3).toPlainString();
        // Read every counter first, in one tight pass, then format: formatting and writing take
        // long enough for a preempted writer to split one emit's outputs across two windows.
        List<TrafficMonitor> now = new ArrayList<>(hooks);
        long[][] counts = new long[now.size()][];
        double[] cpus = new double[now.size()];
        for (int k = 0; k < counts.length; k++) {
            TrafficMonitor h = now.get(k);
            int n = h.targetLabels.length;
            long[] c = new long[2 * n + 3];
            for (int i = 0; i < n; i++) {
                c[i] = h.tuples.get(i);
                c[n + i] = h.bytes.get(i);
            }
            c[2 * n] = h.executed.get(0);
            c[2 * n + 1] = h.trees.get(0);
            c[2 * n + 2] = h.trees.get(1);
            counts[k] = c;
        }
        for (int k = 0; k < counts.length; k++) {
            cpus[k] = now.get(k).cpuSeconds();
        }
        for (int k = 0; k < counts.length; k++) {
            TrafficMonitor h = now.get(k);
            long[] c = counts[k];
            int n = h.targetLabels.length;
            // previous values: tuples, bytes (n each), executed, CPU seconds' bits, latency buckets, acked, failed
            int trees = 2 * n + 2 + LatencyHistogram.BUCKETS;
            long[] prev = last.computeIfAbsent(h, key -> new long[trees + 2]);
            for (int i = 0; i < n; i++) {
                if (c[i] != prev[i]) {
                    traffic.append(head + ",\"src_task\":" + quote(h.label) + ",\"dst_task\":" + quote(h.targetLabels[i])
                                  + ",\"tuples\":" + (c[i] - prev[i]) + ",\"bytes\":" + (c[n + i] - prev[n + i]) + "}\n");
                }
                prev[i] = c[i];
                prev[n + i] = c[n + i];
            }
            double cpuPrev = Double.longBitsToDouble(prev[2 * n + 1]);
            load.append(head + ",\"task\":" + quote(h.label) + ",\"executed\":" + (c[2 * n] - prev[2 * n])
                       + ",\"cpu_seconds\":" + Math.max(0.0, cpus[k] - cpuPrev)
                       + (h.isSpout() ? ",\"acked\":" + (c[2 * n + 1] - prev[trees]) + ",\"failed\":" + (c[2 * n + 2] - prev[trees + 1]) : "")
                       + "}\n");
            prev[trees] = c[2 * n + 1];
            prev[trees + 1] = c[2 * n + 2];
            prev[2 * n] = c[2 * n];
            prev[2 * n + 1] = Double.doubleToLongBits(cpus[k]);
            if (h.latency != null) {
                writeLatency(head, h, prev, 2 * n + 2, latency);
            }
        }
        out.accept(startMillis, traffic, load, latency);
    }

    private static void writeLatency(String head, TrafficMonitor h, long[] prev, int base, StringBuilder out) {
        StringBuilder buckets = new StringBuilder();
        long count = 0;
        for (int b = 0; b < LatencyHistogram.BUCKETS; b++) {
            long c = h.latency.get(b);
            long d = c - prev[base + b];
            prev[base + b] = c;
            if (d > 0) {
                buckets.append(buckets.length() == 0 ? "" : ",").append('[').append(b).append(',').append(d).append(']');
                count += d;
            }
        }
        if (count > 0) {
            out.append(head + ",\"task\":" + quote(h.label) + ",\"count\":" + count + ",\"buckets\":[" + buckets + "]}\n");
        }
    }

    static String quote(String s) {
        return Json.write(s);
    }
}
