package org.streamplace.storm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.EvenScheduler;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.IScheduler;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.scheduler.resource.ResourceAwareScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Nimbus scheduler that applies streamplace plans (set {@code storm.scheduler} to this class).
 *
 * <p>Plans are read from the directory named by {@code streamplace.plan.dir} in Nimbus' config,
 * one file per topology: {@code <topology name>.json}. Every round (each
 * {@code nimbus.monitor.freq.secs}) each topology with a plan gets exactly the plan's assignment:
 * a topology that already runs it is left alone, one whose plan file changed is moved to the new
 * plan (that is how a new plan reaches a running job). A plan that does not fit the cluster is
 * never half-applied: the topology keeps what it has (or, if it has nothing, gets the fallback;
 * what a dead supervisor took away is replaced, see {@link #reject}) and the reason goes to the
 * log and to the topology's scheduler status (UI, {@code storm list}).
 * After all plans, Storm's {@link EvenScheduler} schedules every topology that still needs it, or,
 * with {@code streamplace.fallback.scheduler: ras} (in Nimbus' config for every topology, or in a
 * topology's own), Storm's {@link ResourceAwareScheduler} (its default strategy, on the
 * components' declared CPU and memory and the supervisors' capacities): a cluster that ran RAS
 * keeps it for every topology without a plan. The EvenScheduler goes first, over its topologies
 * only; RAS then schedules whatever still needs it.
 * Nothing thrown here escapes {@link #schedule}: an exception there would stop Nimbus.
 */
public class PlanScheduler implements IScheduler {
    public static final String PLAN_DIR = "streamplace.plan.dir";
    /** Storm's scheduler for a topology without a plan, {@code even} (default) or {@code ras}: Nimbus' setting, or the topology's. */
    public static final String FALLBACK = "streamplace.fallback.scheduler";
    static final String PREFIX = "streamplace: ";
    private static final Logger LOG = LoggerFactory.getLogger(PlanScheduler.class);

    private Path planDir;
    private String fallback = "even";   // Nimbus' own; a topology's conf may say otherwise
    private Map<String, Object> conf = Map.of();
    private StormMetricsRegistry metricsRegistry;
    private IScheduler ras;   // made when a topology first needs it
    private double roundEverySecs = 10.0;   // Storm's default nimbus.monitor.freq.secs (defaults.yaml)
    private final LongSupplier clock;
    private SlotHistory history = new SlotHistory(Map.of());
    private final Set<String> seenNodes = new HashSet<>();
    private final Map<Path, CachedPlan> cache = new HashMap<>();
    private final Map<String, Map<String, Object>> lastAssigned = new HashMap<>();   // topology id -> last record written

    private record CachedPlan(long modified, long size, Plan plan, String error) {
    }

    public PlanScheduler() {
        this(System::currentTimeMillis);
    }

    /** With the clock that times Nimbus' rounds (tests give their own). */
    PlanScheduler(LongSupplier clock) {
        this.clock = clock;
    }

    @Override
    public void prepare(Map<String, Object> conf, StormMetricsRegistry metricsRegistry) {
        history = new SlotHistory(conf);
        Object freq = conf.get("nimbus.monitor.freq.secs");
        if (freq instanceof Number n && n.doubleValue() > 0) {
            roundEverySecs = n.doubleValue();
        }
        this.conf = conf;
        this.metricsRegistry = metricsRegistry;
        Object chosen = conf.getOrDefault(FALLBACK, "even");
        if ("ras".equals(chosen)) {
            fallback = "ras";
        } else if (!"even".equals(chosen)) {
            LOG.error("{}: {} is not even or ras; the EvenScheduler is the fallback", FALLBACK, chosen);
        }
        Object dir = conf.get(PLAN_DIR);
        planDir = dir == null ? null : Paths.get(String.valueOf(dir));
        if (planDir == null) {
            LOG.warn("{} is not set: every topology goes to the fallback ({})", PLAN_DIR, fallback);
        } else {
            LOG.info("streamplace plans are read from {}", planDir.toAbsolutePath());
        }
    }

    @Override
    public void schedule(Topologies topologies, Cluster cluster) {
        long roundMs = clock.getAsLong();
        Set<String> alive = Set.of();
        Set<String> dead = Set.of();
        List<TopologyDetails> tops = new ArrayList<>(topologies.getTopologies());
        tops.sort(Comparator.comparing(TopologyDetails::getId));
        try {
            alive = PlanAssignment.nodes(cluster, new HashSet<>()).keySet();
            dead = new HashSet<>(seenNodes);
            dead.removeAll(alive);
            seenNodes.addAll(alive);
            history.sawSupervisors(cluster.getSupervisors().keySet(), roundMs);
            for (TopologyDetails td : tops) {
                try {
                    applyPlan(td, cluster, dead);
                } catch (Throwable t) {   // a bug here must not stop Nimbus: fall back and say so
                    LOG.error("streamplace: error while applying the plan of {}", td.getId(), t);
                    status(cluster, td, "error while applying the plan (" + t + "); " + fallbackName(td));
                }
            }
        } catch (Throwable t) {
            LOG.error("streamplace: plan scheduling failed; the fallback schedules every topology", t);
        }
        try {
            // both schedulers take every topology that needs scheduling: the EvenScheduler gets a view
            // without the RAS topologies that do (the others still hold their slots in it)
            Map<String, TopologyDetails> view = new HashMap<>();
            boolean anyRas = false;
            for (TopologyDetails td : tops) {
                if (isRas(td) && cluster.needsScheduling(td)) {
                    anyRas = true;
                } else {
                    view.put(td.getId(), td);
                }
            }
            if (!anyRas) {
                EvenScheduler.scheduleTopologiesEvenly(topologies, cluster);
            } else {
                Cluster evenView = new Cluster(cluster, new Topologies(view));
                EvenScheduler.scheduleTopologiesEvenly(evenView.getTopologies(), evenView);
                copyNewAssignments(evenView, cluster, view.keySet());
                if (ras == null) {
                    ras = new ResourceAwareScheduler();
                    ras.prepare(conf, metricsRegistry);
                }
                ras.schedule(topologies, cluster);
            }
        } catch (Throwable t) {
            LOG.error("streamplace: the fallback scheduler failed", t);
        }
        try {
            history.sawAssignments(cluster, tops, roundMs);
        } catch (Throwable t) {
            LOG.error("streamplace: could not note this round's assignments", t);
        }
        if (planDir != null) {
            writeAssigned(tops, cluster, alive, dead, roundMs);
        }
    }

    /** Each topology's assignment after the round, for a process beside Nimbus ({@link Assigned}). */
    private void writeAssigned(List<TopologyDetails> tops, Cluster cluster, Set<String> alive, Set<String> dead, long roundMs) {
        for (TopologyDetails td : tops) {
            try {
                CachedPlan plan = cache.get(planDir.resolve(td.getName() + ".json"));
                Map<String, Object> doc = Assigned.describe(td, cluster, alive, dead, plan == null ? null : plan.modified,
                                                            roundMs, roundEverySecs);
                Map<String, Object> last = lastAssigned.get(td.getId());
                if (last != null && Assigned.sameBut(last, doc, "round_ms")
                    && roundMs - ((Number) last.get("round_ms")).longValue() < roundEverySecs * 1000) {
                    continue;   // Nimbus schedules more often than its period (every submission): one write per period
                }
                Assigned.write(planDir, td.getName(), doc);
                lastAssigned.put(td.getId(), doc);
            } catch (Throwable t) {   // the record is for others to read: failing to write it must not stop Nimbus
                LOG.warn("streamplace: could not write what {} runs to {}: {}", td.getId(), planDir.resolve(Assigned.DIR), t.toString());
            }
        }
    }

    private void applyPlan(TopologyDetails td, Cluster cluster, Set<String> dead) {
        if (planDir == null) {
            status(cluster, td, "no plan directory (" + PLAN_DIR + " unset); " + fallbackName(td));
            return;
        }
        Path file = planDir.resolve(td.getName() + ".json");
        CachedPlan cached = load(file);
        if (cached == null) {
            status(cluster, td, "no plan " + file + "; " + fallbackName(td));
            return;
        }
        SchedulerAssignment current = cluster.getAssignmentById(td.getId());
        boolean running = current != null && !current.getExecutorToSlot().isEmpty();
        if (cached.error != null) {
            reject(cluster, td, current, cached.error);
            return;
        }
        Map<WorkerSlot, List<ExecutorDetails>> wanted;
        try {
            wanted = PlanAssignment.compute(cached.plan, td, cluster, dead);
        } catch (PlanAssignment.Misfit m) {
            LOG.warn("streamplace: plan {} does not fit topology {}: {}", file, td.getId(), m.getMessage());
            reject(cluster, td, current, m.getMessage());
            return;
        }
        String applied = "plan applied: " + td.getExecutors().size() + " executors on " + wanted.size()
                         + " workers (" + file.getFileName() + ")"
                         + (wanted.size() != td.getNumWorkers()
                            ? "; note: topology.workers is " + td.getNumWorkers() : "");
        if (running && sameAssignment(current, wanted)) {
            status(cluster, td, applied);
            return;
        }
        if (current != null) {
            cluster.freeSlots(new ArrayList<>(current.getSlots()));
        }
        try {
            for (Map.Entry<WorkerSlot, List<ExecutorDetails>> e : wanted.entrySet()) {
                cluster.assign(e.getKey(), td.getId(), e.getValue());
            }
        } catch (RuntimeException e) {     // validated above, so not expected: undo all of it
            cluster.unassign(td.getId());
            LOG.error("streamplace: assigning the plan of {} failed; undone", td.getId(), e);
            status(cluster, td, "plan rejected: " + e.getMessage() + "; " + fallbackName(td));
            return;
        }
        LOG.info("streamplace: applied plan {} to {}", file, td.getId());
        status(cluster, td, applied);
    }

    /**
     * A plan that cannot be applied leaves the topology as it runs, as far as it runs. A worker of a
     * supervisor that is gone is kept when it started before its supervisor died ({@link SlotHistory}:
     * it runs on, as Storm's own schedulers keep the alive executors of a dead node) and given up
     * otherwise. The executors left without a worker (given up here, or taken off by Nimbus when their
     * heartbeats stopped) are placed by Storm's EvenScheduler on free slots of the live nodes, beside
     * the workers kept, which go on running: with at least one new worker, and up to
     * {@code topology.workers} as the EvenScheduler fills. Only when that cannot place them all (no
     * free slot), or the topology's fallback is RAS (which places whole topologies), does the whole
     * topology go to the fallback on the live nodes. Never part of the job left without a worker.
     */
    private void reject(Cluster cluster, TopologyDetails td, SchedulerAssignment current, String why) {
        if (current == null || current.getExecutorToSlot().isEmpty()) {
            status(cluster, td, "plan rejected: " + why + "; " + fallbackName(td));
            return;
        }
        List<WorkerSlot> gone = history.notStarted(td.getId(), current, cluster);
        long onDead = current.getSlots().stream().filter(slot -> cluster.getSupervisorById(slot.getNodeId()) == null).count();
        String kept = onDead > gone.size()
                      ? "; " + (onDead - gone.size()) + " worker(s) of a supervisor that is gone kept (started before it died)" : "";
        cluster.freeSlots(gone);
        int missing = cluster.getUnassignedExecutors(td).size();
        if (missing == 0) {
            status(cluster, td, "plan rejected: " + why + "; keeping the current assignment" + kept);
            return;
        }
        String orphans = missing + " executor(s) without a running worker"
                         + (gone.isEmpty() ? "" : " (" + gone.size() + " worker(s) of a supervisor that is gone, not started)");
        if (!isRas(td)) {
            SchedulerAssignment left = cluster.getAssignmentById(td.getId());
            int keptSlots = left == null ? 0 : left.getSlots().size();
            TopologyDetails widened = new TopologyDetails(td.getId(), td.getConf(), td.getTopology(),
                Math.max(td.getNumWorkers(), keptSlots + Math.max(1, gone.size())), td.getExecutorToComponent(),
                td.getLaunchTime(), td.getTopologySubmitter());
            Cluster view = new Cluster(cluster, new Topologies(widened));
            EvenScheduler.scheduleTopologiesEvenly(view.getTopologies(), view);
            copyNewAssignments(view, cluster, Set.of(td.getId()));
            if (cluster.getUnassignedExecutors(td).isEmpty()) {
                status(cluster, td, "plan rejected: " + why + "; " + orphans + " placed by the EvenScheduler on free slots of "
                                    + "the live nodes, the other " + keptSlots + " worker(s) kept" + kept);
                return;
            }
        }
        cluster.unassign(td.getId());
        status(cluster, td, "plan rejected: " + why + "; " + orphans + (isRas(td) ? "" : " and no free slot for them")
                            + ": the whole topology to the " + fallbackName(td) + " on the live nodes");
    }

    private static boolean sameAssignment(SchedulerAssignment current, Map<WorkerSlot, List<ExecutorDetails>> wanted) {
        Map<ExecutorDetails, WorkerSlot> want = new HashMap<>();
        wanted.forEach((slot, execs) -> execs.forEach(e -> want.put(e, slot)));
        return want.equals(current.getExecutorToSlot());
    }

    /** The plan in {@code file}, re-read only when its modification time or size changed; null if absent. */
    private CachedPlan load(Path file) {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (IOException e) {
            cache.remove(file);
            return null;
        }
        long modified = attrs.lastModifiedTime().toMillis();
        CachedPlan cached = cache.get(file);
        if (cached != null && cached.modified == modified && cached.size == attrs.size()) {
            return cached;
        }
        try {
            cached = new CachedPlan(modified, attrs.size(), Plan.read(file), null);
        } catch (SpecException e) {
            cached = new CachedPlan(modified, attrs.size(), null, e.getMessage());
        }
        cache.put(file, cached);
        return cached;
    }

    /** Sets the topology's scheduler status (shown by the UI and {@code getTopologyInfo}) when it changes. */
    /**
     * The executors {@code view} assigned to the topologies {@code ids} beyond what {@code cluster}
     * has, assigned in {@code cluster}; but not into a slot the cluster has taken meanwhile (a RAS
     * topology partly assigned, which the view leaves out): those wait for the next round.
     */
    private static void copyNewAssignments(Cluster view, Cluster cluster, Set<String> ids) {
        for (String id : ids) {
            SchedulerAssignment made = view.getAssignmentById(id);
            if (made == null) {
                continue;
            }
            SchedulerAssignment had = cluster.getAssignmentById(id);
            for (Map.Entry<WorkerSlot, java.util.Collection<ExecutorDetails>> e : made.getSlotToExecutors().entrySet()) {
                List<ExecutorDetails> added = new ArrayList<>();
                for (ExecutorDetails exec : e.getValue()) {
                    if (had == null || !had.isExecutorAssigned(exec)) {
                        added.add(exec);
                    }
                }
                boolean theirs = had != null && had.getSlots().contains(e.getKey());
                if (!added.isEmpty() && (theirs || !cluster.isSlotOccupied(e.getKey()))) {
                    cluster.assign(e.getKey(), id, added);
                }
            }
        }
    }

    /** Whether the topology's fallback is Storm's ResourceAwareScheduler: its own setting, else Nimbus'. */
    private boolean isRas(TopologyDetails td) {
        return "ras".equals(td.getConf().getOrDefault(FALLBACK, fallback));
    }

    private String fallbackName(TopologyDetails td) {
        return isRas(td) ? "ResourceAwareScheduler" : "EvenScheduler";
    }

    private static void status(Cluster cluster, TopologyDetails td, String message) {
        String text = PREFIX + message;
        if (!Objects.equals(cluster.getStatus(td.getId()), text)) {
            cluster.setStatus(td.getId(), text);
        }
    }

    @Override
    public Map<String, Map<String, Double>> config() {
        return Collections.emptyMap();
    }
}
