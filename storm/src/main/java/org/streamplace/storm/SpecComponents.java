package org.streamplace.storm;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;
import org.apache.storm.tuple.Values;
import org.apache.storm.utils.ObjectReader;

/**
 * The spout and bolt every spec operator becomes. A tuple is (key fields..., payload, emit time):
 * one int key per distinct key of the operator's outgoing fields streams, a {@code tuple_bytes}
 * payload, and the source's emit time, which bolts pass on so sinks see end-to-end latency.
 * A spec with phases switches each task's rate, costs, payload and key draws at the phase's
 * moment ({@link PhaseClock}); a task without phases to come never reads the clock.
 */
public final class SpecComponents {
    /** Topology conf: label -> CPU seconds per tuple, overriding the spec (machine-type tables resolved per task). */
    public static final String CPU_BY_TASK = "streamplace.cpu_per_tuple";
    /** Topology conf: seed of the key and payload generators (per task: seed, task id). */
    public static final String SEED = "streamplace.seed";

    private SpecComponents() {
    }

    /** Topology conf: wall-clock milliseconds of the topology's submission, the origin of its phases' {@code at}. */
    public static final String PHASE_ORIGIN = "streamplace.phase_origin_ms";

    /** What a component keeps of the spec: its operator, output fields and key generators. */
    record Shape(Spec.Operator op, List<String> fields, KeyDrawer[] drawers, boolean sink) implements Serializable {
        static Shape of(Spec spec, String op) {
            List<String> names = new ArrayList<>(spec.keyFields(op).keySet());
            names.add(Tuples.PAYLOAD);
            names.add(Tuples.TS);
            KeyDrawer[] drawers = spec.keyFields(op).values().stream().map(KeyDrawer::new).toArray(KeyDrawer[]::new);
            return new Shape(spec.operator(op), List.copyOf(names), drawers, spec.downstream(op).isEmpty());
        }
    }

    /**
     * A component's shape in each phase of the spec ({@code shapes[0]}: the spec's own fields;
     * {@code shapes[k]} from {@code atSeconds[k]} after submission on). A phase changes no output
     * field, so every shape declares the same ones.
     */
    record Phased(double[] atSeconds, Shape[] shapes) implements Serializable {
        static Phased of(Spec spec, String op) {
            double[] at = new double[spec.phases.size() + 1];
            Shape[] shapes = new Shape[at.length];
            shapes[0] = Shape.of(spec, op);
            for (int k = 1; k < at.length; k++) {
                at[k] = spec.phases.get(k - 1).at();
                shapes[k] = Shape.of(spec.phases.get(k - 1).spec(), op);
            }
            return new Phased(at, shapes);
        }

        Shape first() {
            return shapes[0];
        }
    }

    /**
     * Which phase a task is in by the wall clock: phase k from {@code origin + at[k]} on. The
     * origin is the topology's submission ({@link #PHASE_ORIGIN}), the same instant for every task
     * (on one machine exactly; on a cluster up to the nodes' clock skew), else the task's own start.
     */
    static final class PhaseClock {
        private final long[] startMillis;
        private int current;
        private long next;

        PhaseClock(double[] atSeconds, long originMillis) {
            startMillis = new long[atSeconds.length];
            for (int k = 0; k < atSeconds.length; k++) {
                startMillis[k] = originMillis + Math.round(atSeconds[k] * 1000);
            }
            next = startMillis.length > 1 ? startMillis[1] : Long.MAX_VALUE;
        }

        static PhaseClock of(Phased phased, Map<String, Object> conf) {
            Object origin = conf.get(PHASE_ORIGIN);
            return new PhaseClock(phased.atSeconds(), origin instanceof Number n ? n.longValue() : System.currentTimeMillis());
        }

        /** The phase at {@code nowMillis} if it is another than at the last call, else -1. */
        int advance(long nowMillis) {
            if (nowMillis < next) {
                return -1;
            }
            while (current + 1 < startMillis.length && nowMillis >= startMillis[current + 1]) {
                current++;
            }
            next = current + 1 < startMillis.length ? startMillis[current + 1] : Long.MAX_VALUE;
            return current;
        }

        /** Whether a later phase is still to come (a task without one never reads the clock). */
        boolean pending() {
            return next != Long.MAX_VALUE;
        }
    }

    /** Shared per-task state: generators, payload, and how to build an output tuple. */
    private static final class Emitter {
        private final KeyDrawer[] drawers;
        private final SplittableRandom rng;
        private final byte[] payload;   // never written after creation: safe to share between tuples

        Emitter(Shape shape, SplittableRandom rng) {
            this.drawers = shape.drawers();
            this.rng = rng;
            this.payload = new byte[(int) Math.round(shape.op().tupleBytes())];
            rng.nextBytes(payload);
        }

        static SplittableRandom random(Map<String, Object> conf, TopologyContext context) {
            long seed = ObjectReader.getInt(conf.get(SEED), 0);
            return new SplittableRandom(seed * 1_000_003L + context.getThisTaskId());
        }

        Values tuple(long emitMicros) {
            Values v = new Values();
            for (KeyDrawer d : drawers) {
                v.add(d.draw(rng));
            }
            v.add(payload);
            v.add(emitMicros);
            return v;
        }
    }

    /**
     * What a task does per tuple in its current phase: CPU seconds, selectivity, emitter. A phase
     * that leaves {@code cpu_per_tuple} as it was keeps the task's resolved value (a per-task
     * machine-type table, {@link #CPU_BY_TASK}); one that changes it sets the phase's number.
     */
    private static final class Work {
        final double cpuSeconds;
        final Selectivity selectivity;
        final Emitter emitter;

        Work(Phased phased, int k, Map<String, Object> conf, String label, SplittableRandom rng) {
            Spec.Operator op = phased.shapes()[k].op();
            Spec.Operator first = phased.first().op();
            boolean sameCpu = op.cpuPerTuple() == first.cpuPerTuple()
                              && java.util.Objects.equals(op.cpuPerTupleByType(), first.cpuPerTupleByType());
            this.cpuSeconds = sameCpu ? cpuSeconds(first, conf, label) : op.cpuPerTuple();
            this.selectivity = new Selectivity(op.selectivity());
            this.emitter = new Emitter(phased.shapes()[k], rng);
        }
    }

    /**
     * How many tuples a task sends per tuple it reads, {@code selectivity} on average: fractions
     * carry over, so 0.5 sends one tuple for every second input and 1.5 alternates one and two.
     */
    static final class Selectivity {
        private final double perInput;
        private double credit;

        Selectivity(double perInput) {
            this.perInput = perInput;
        }

        /** Tuples to send for one more input. */
        int next() {
            credit += perInput;
            int n = (int) credit;
            credit -= n;
            return n;
        }
    }

    /**
     * How many tuples a source task owes the wall clock at {@code perSecond} tuples per second. It
     * keeps at most one second's worth of tuples (and at least one tuple) of backlog: a source
     * that back-pressure slowed down does not burst to make up for more. A rate under one tuple
     * per second per task emits one tuple every {@code 1 / perSecond} seconds.
     */
    static final class Pacer {
        private final double perSecond;
        private boolean started;
        private long start;
        private double emitted;

        Pacer(double perSecond) {
            this.perSecond = perSecond;
        }

        /** Tuples to emit now (at most {@code maxBurst}); counts them as emitted. */
        int due(long nowNanos, int maxBurst) {
            if (!started) {
                started = true;
                start = nowNanos;
            }
            double due = perSecond * (nowNanos - start) / 1e9;
            double backlog = Math.max(perSecond, 1.0);
            if (due - emitted > backlog) {
                emitted = due - backlog;
            }
            int n = (int) Math.min(maxBurst, Math.floor(due - emitted));
            emitted += Math.max(n, 0);
            return Math.max(n, 0);
        }
    }

    /**
     * Reads {@code source_rate / parallelism} records per second per task, spending
     * {@code cpu_per_tuple} seconds of real CPU on each (what the performance model charges a
     * source task per tuple), and emits {@code selectivity} tuples per record on average, as a
     * bolt does per input (docs/definitions.md: every task sends {@code selectivity x in_rate}).
     * It keeps pace with the wall clock, but never more than one second behind: a source that
     * back-pressure slowed down does not burst to make up for more than a second.
     *
     * <p>With acking on it reads one record per {@code nextTuple()} call, as a real spout does
     * (Storm's {@code SpoutExecutor} checks {@code topology.max.spout.pending} before each call and
     * calls again at once after an emit): reading up to {@link #MAX_BURST} per call, as it does
     * without ackers, put a second's backlog in flight at once and made max spout pending moot.
     */
    public static final class SpecSpout extends BaseRichSpout {
        private static final long serialVersionUID = 1L;
        /** Records read per call without ackers: a saturated source keeps up without a call per tuple. */
        private static final int MAX_BURST = 1000;
        private final Phased phased;
        private transient SpoutOutputCollector collector;
        private transient Map<String, Object> conf;
        private transient String label;
        private transient SplittableRandom rng;
        private transient PhaseClock clock;
        private transient Work work;
        private transient Pacer pacer;
        private transient boolean tracked;
        private transient long msgId;

        public SpecSpout(Spec spec, String op) {
            this.phased = Phased.of(spec, op);
        }

        @Override
        public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
            this.collector = collector;
            this.conf = conf;
            this.label = TaskLabels.label(context, context.getThisTaskId());
            this.rng = Emitter.random(conf, context);
            this.clock = PhaseClock.of(phased, conf);
            int k = Math.max(clock.advance(System.currentTimeMillis()), 0);
            enter(k);
            CpuWork.rate();
            Object ackers = conf.get("topology.acker.executors");
            this.tracked = ackers == null || ObjectReader.getInt(ackers) > 0;
        }

        /** Runs as phase {@code k} from now on: its rate is paced from this instant. */
        private void enter(int k) {
            Spec.Operator op = phased.shapes()[k].op();
            work = new Work(phased, k, conf, label, rng);
            pacer = new Pacer(op.sourceRate() / op.parallelism());
        }

        @Override
        public void nextTuple() {
            if (clock.pending()) {
                int k = clock.advance(System.currentTimeMillis());
                if (k >= 0) {
                    enter(k);
                }
            }
            Work w = work;
            for (int n = pacer.due(System.nanoTime(), tracked ? 1 : MAX_BURST); n > 0; n--) {
                CpuWork.spend(w.cpuSeconds);
                for (int k = w.selectivity.next(); k > 0; k--) {
                    Values v = w.emitter.tuple(Tuples.nowMicros());
                    if (tracked) {
                        collector.emit(v, msgId++);
                    } else {
                        collector.emit(v);
                    }
                }
            }
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
            declarer.declare(new Fields(phased.first().fields()));
        }
    }

    /**
     * Spends {@code cpu_per_tuple} seconds of real CPU per input tuple, then emits
     * {@code selectivity} tuples per input on average ({@link Selectivity}). Output tuples keep the
     * input's emit time.
     */
    public static final class SpecBolt extends BaseRichBolt {
        private static final long serialVersionUID = 1L;
        private final Phased phased;
        private transient OutputCollector collector;
        private transient Map<String, Object> conf;
        private transient String label;
        private transient SplittableRandom rng;
        private transient PhaseClock clock;
        private transient Work work;

        public SpecBolt(Spec spec, String op) {
            this.phased = Phased.of(spec, op);
        }

        @Override
        public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
            this.collector = collector;
            this.conf = conf;
            this.label = TaskLabels.label(context, context.getThisTaskId());
            this.rng = Emitter.random(conf, context);
            this.clock = PhaseClock.of(phased, conf);
            this.work = new Work(phased, Math.max(clock.advance(System.currentTimeMillis()), 0), conf, label, rng);
            CpuWork.rate();
        }

        @Override
        public void execute(Tuple input) {
            if (clock.pending()) {
                int k = clock.advance(System.currentTimeMillis());
                if (k >= 0) {
                    work = new Work(phased, k, conf, label, rng);
                }
            }
            Work w = work;
            CpuWork.spend(w.cpuSeconds);
            if (!phased.first().sink()) {
                long ts = input.getLongByField(Tuples.TS);
                for (int k = w.selectivity.next(); k > 0; k--) {
                    collector.emit(input, w.emitter.tuple(ts));
                }
            }
            collector.ack(input);
        }

        @Override
        public void declareOutputFields(OutputFieldsDeclarer declarer) {
            declarer.declare(new Fields(phased.first().fields()));
        }
    }

    /** CPU seconds per tuple of one task: the conf's per-task value, else the spec's number, else the mean of its table. */
    static double cpuSeconds(Spec.Operator op, Map<String, Object> conf, String label) {
        Object byTask = conf.get(CPU_BY_TASK);
        if (byTask instanceof Map && ((Map<?, ?>) byTask).get(label) instanceof Number) {
            return ((Number) ((Map<?, ?>) byTask).get(label)).doubleValue();
        }
        if (op.cpuPerTupleByType() == null) {
            return op.cpuPerTuple();
        }
        return op.cpuPerTupleByType().values().stream().mapToDouble(Double::doubleValue).average().orElse(0.0);
    }
}
