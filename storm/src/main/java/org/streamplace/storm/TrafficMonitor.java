package org.streamplace.storm;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.storm.generated.Grouping;
import org.apache.storm.hooks.BaseTaskHook;
import org.apache.storm.hooks.info.BoltExecuteInfo;
import org.apache.storm.hooks.info.EmitInfo;
import org.apache.storm.hooks.info.SpoutAckInfo;
import org.apache.storm.hooks.info.SpoutFailInfo;
import org.apache.storm.serialization.KryoValuesSerializer;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.utils.ObjectReader;

/**
 * Task hook ({@code topology.auto.task.hooks}) that records what {@code streamplace profile} reads:
 * per (source task, destination task) the tuples and bytes sent, per task the tuples executed and
 * its executor thread's CPU time, every window (default 10 s).
 *
 * <ul>
 *   <li>Destinations are Storm's own choice ({@code EmitInfo.outTasks}, after the grouping ran), so
 *   shuffle, fields, global, all and local-or-shuffle are recorded as they really routed.</li>
 *   <li>Storm's internal streams and components (ids starting with {@code __}: ackers, metrics,
 *   system ticks) are skipped.</li>
 *   <li>Bytes: the hook sees no message sizes. Every 256th emit of a task (and its first) is
 *   serialised with Storm's own {@code KryoValuesSerializer} and the running mean size is charged
 *   to every tuple: the Kryo size of the tuple's values, without Storm's per-message header
 *   (source task, stream, message id: a few bytes) and without Netty framing.</li>
 *   <li>Executed: for a bolt the tuples it executed, for a spout the tuples it emitted; a spout
 *   also counts the tuple trees Storm reported complete ({@code acked}) and failed or timed out
 *   ({@code failed}).</li>
 *   <li>CPU: {@code ThreadMXBean.getThreadCpuTime} of the task's executor thread (one task per
 *   executor): user code, this hook, serialisation of remote emits and idle spinning.</li>
 *   <li>Sinks (tasks without outgoing streams) also record end-to-end latency from the
 *   {@link Tuples#TS} field, when tuples carry it.</li>
 * </ul>
 *
 * The windows go to files in {@code streamplace.monitor.dir} on the worker's machine, or with
 * {@code streamplace.monitor.via.metrics: true} through Storm's metrics path to the topology's
 * {@link RecordsConsumer}, which gathers every worker's windows in one place (no shared filesystem).
 *
 * <p>Counting is single-writer (the executor thread) into atomic arrays with ordered stores: no
 * lock and no allocation per tuple; a writer thread per worker reads and writes the windows.
 */
public class TrafficMonitor extends BaseTaskHook {
    public static final String DIR = "streamplace.monitor.dir";
    /**
     * {@code true}: the windows go through Storm's metrics path to the topology's
     * {@link RecordsConsumer} instead of files in {@link #DIR}.
     */
    public static final String VIA_METRICS = "streamplace.monitor.via.metrics";
    /** The name of the metric that carries the windows. */
    public static final String METRIC = "streamplace-records";
    public static final String WINDOW_SECS = "streamplace.monitor.window.secs";
    private static final int SAMPLE_MASK = 255;
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

    private boolean active;
    private boolean spout;
    private boolean sink;
    String label;
    String[] targetLabels;
    private int minTarget;
    private int[] slotOf;
    AtomicLongArray tuples;
    AtomicLongArray bytes;
    final AtomicLongArray executed = new AtomicLongArray(1);
    /** A spout's tuple trees Storm reported complete ([0], {@code spoutAck}) and failed or timed out ([1]). */
    final AtomicLongArray trees = new AtomicLongArray(2);
    LatencyHistogram latency;
    private volatile long threadId = -1;
    private KryoValuesSerializer serializer;
    private long emits;
    private long sampledBytes;
    private long samples;
    private long sizeEstimate;
    private MonitorWriter writer;

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context) {
        String component = context.getThisComponentId();
        Object dir = conf.get(DIR);
        boolean viaMetrics = ObjectReader.getBoolean(conf.get(VIA_METRICS), false);
        if (TaskLabels.isSystem(component) || (dir == null && !viaMetrics)) {
            return;
        }
        active = true;
        spout = context.getRawTopology().get_spouts().containsKey(component);
        label = TaskLabels.label(context, context.getThisTaskId());
        TreeSet<Integer> targets = new TreeSet<>();
        for (Map.Entry<String, Map<String, Grouping>> e : context.getThisTargets().entrySet()) {
            if (!TaskLabels.isSystem(e.getKey())) {
                for (String target : e.getValue().keySet()) {
                    targets.addAll(context.getComponentTasks(target));
                }
            }
        }
        sink = targets.isEmpty();
        List<Integer> ids = new ArrayList<>(targets);
        targetLabels = new String[ids.size()];
        minTarget = ids.isEmpty() ? 0 : ids.get(0);
        slotOf = new int[ids.isEmpty() ? 0 : ids.get(ids.size() - 1) - minTarget + 1];
        java.util.Arrays.fill(slotOf, -1);
        for (int i = 0; i < ids.size(); i++) {
            slotOf[ids.get(i) - minTarget] = i;
            targetLabels[i] = TaskLabels.label(context, ids.get(i));
        }
        tuples = new AtomicLongArray(ids.size());
        bytes = new AtomicLongArray(ids.size());
        latency = sink ? new LatencyHistogram() : null;
        serializer = new KryoValuesSerializer(conf);
        double window = ObjectReader.getDouble(conf.get(WINDOW_SECS), 10.0);
        String worker = context.getStormId() + "-" + context.getThisWorkerPort() + "-" + ProcessHandle.current().pid();
        writer = MonitorWriter.register(this, context.getStormId(), window, () -> viaMetrics
            ? new WindowSink.Outbox(worker) : new WindowSink.Files(String.valueOf(dir), worker + ".jsonl"));
        if (writer.sink() instanceof WindowSink.Outbox outbox) {
            // ticks every second: a window reaches the consumer within about a second of its end
            context.registerMetric(METRIC, outbox.metric(), 1);
        }
    }

    boolean isSpout() {
        return spout;
    }

    private void onThread() {
        if (threadId < 0) {
            threadId = Thread.currentThread().getId();
        }
    }

    /** CPU seconds of the task's executor thread so far (0 before its first tuple). */
    double cpuSeconds() {
        long id = threadId;
        long ns = id < 0 ? -1 : MX.getThreadCpuTime(id);
        return ns < 0 ? 0.0 : ns / 1e9;
    }

    @Override
    public void emit(EmitInfo info) {
        if (!active || TaskLabels.isSystem(info.stream)) {
            return;
        }
        onThread();
        if (spout) {
            executed.lazySet(0, executed.get(0) + 1);
        }
        if ((emits++ & SAMPLE_MASK) == 0) {
            sampledBytes += serializer.serialize(info.values).length;
            samples++;
            sizeEstimate = Math.round((double) sampledBytes / samples);
        }
        Collection<Integer> out = info.outTasks;
        if (out instanceof List) {
            List<Integer> list = (List<Integer>) out;
            for (int i = 0, n = list.size(); i < n; i++) {
                count(list.get(i));
            }
        } else {
            for (Integer t : out) {
                count(t);
            }
        }
    }

    private void count(int task) {
        int off = task - minTarget;
        int i = off >= 0 && off < slotOf.length ? slotOf[off] : -1;
        if (i >= 0) {
            tuples.lazySet(i, tuples.get(i) + 1);
            bytes.lazySet(i, bytes.get(i) + sizeEstimate);
        }
    }

    @Override
    public void boltExecute(BoltExecuteInfo info) {
        if (!active) {
            return;
        }
        Tuple tuple = info.tuple;
        if (TaskLabels.isSystem(tuple.getSourceStreamId())) {
            return;
        }
        onThread();
        executed.lazySet(0, executed.get(0) + 1);
        if (sink && tuple.contains(Tuples.TS)) {
            latency.record(Tuples.nowMicros() - tuple.getLongByField(Tuples.TS));
        }
    }

    /** Called on the spout's executor thread when a tuple tree completes (at once without ackers). */
    @Override
    public void spoutAck(SpoutAckInfo info) {
        if (active) {
            trees.lazySet(0, trees.get(0) + 1);
        }
    }

    /**
     * Called on the spout's executor thread when a tuple tree failed or timed out. Trees pending in
     * a spout executor that stops (a moved task) are reported neither way: Storm drops the acker's
     * answers for message ids the new executor does not know ({@code SpoutExecutor}'s pending map).
     */
    @Override
    public void spoutFail(SpoutFailInfo info) {
        if (active) {
            trees.lazySet(1, trees.get(1) + 1);
        }
    }

    @Override
    public void cleanup() {
        if (active) {
            writer.unregister(this);
        }
    }
}
