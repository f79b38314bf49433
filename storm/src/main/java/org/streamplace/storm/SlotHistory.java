package org.streamplace.storm;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.Config;
import org.apache.storm.DaemonConfig;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;

/**
 * What the plugin saw across Nimbus' rounds: since when each worker slot holds its executors, and
 * when each supervisor was last alive. It answers one question: a worker of a supervisor that is
 * gone, did it start before its supervisor died?
 *
 * <p>A supervisor writes itself to ZooKeeper as an ephemeral node ({@code SupervisorHeartbeat} →
 * {@code StormClusterStateImpl.supervisorHeartbeat} → {@code set_ephemeral_node}), so Nimbus drops
 * it from the cluster {@code storm.zookeeper.session.timeout} after it died (20 s by Storm's
 * defaults; 19-21 s measured on the testbed, 2026-11-27). Nimbus pushes a new assignment to the
 * supervisors at once, and a supervisor also reads it every {@code supervisor.monitor.frequency.secs}
 * (3 s by default) and starts its workers. So a worker whose executors were assigned at least the
 * session timeout plus one supervisor period before the last round that saw its supervisor alive had
 * its supervisor alive long enough to start it; it runs on without the supervisor (its workers are
 * not the supervisor's threads), as Storm's own schedulers assume when they keep the alive executors
 * of a dead node. A worker assigned later may never have started: during {@code
 * nimbus.task.launch.secs} (120 s) Nimbus still counts its executors alive, so the plugin must not.
 * The rule needs no figure of its own: both times are Storm's settings, read from Nimbus' config.
 */
final class SlotHistory {
    /** Storm's defaults ({@code defaults.yaml}), for a config that lacks them. */
    private static final long SESSION_TIMEOUT_MS = 20_000;
    private static final double SUPERVISOR_PERIOD_S = 3.0;

    private final long settleMs;
    private final Map<String, Long> lastAliveMs = new HashMap<>();   // supervisor id -> last round that saw it
    private final Map<String, Map<WorkerSlot, Held>> held = new HashMap<>();   // topology id -> slot -> what it holds

    private record Held(Set<ExecutorDetails> executors, long sinceMs) {
    }

    SlotHistory(Map<String, Object> conf) {
        Object session = conf.get(Config.STORM_ZOOKEEPER_SESSION_TIMEOUT);
        Object period = conf.get(DaemonConfig.SUPERVISOR_MONITOR_FREQUENCY_SECS);
        settleMs = (session instanceof Number n ? n.longValue() : SESSION_TIMEOUT_MS)
                   + Math.round(1000 * (period instanceof Number p ? p.doubleValue() : SUPERVISOR_PERIOD_S));
    }

    /** The supervisors alive this round. */
    void sawSupervisors(Collection<String> alive, long nowMs) {
        for (String id : alive) {
            lastAliveMs.put(id, nowMs);
        }
    }

    /** Each topology's assignment at the end of this round (a slot keeps its time while it holds the same executors). */
    void sawAssignments(Cluster cluster, Collection<TopologyDetails> tops, long nowMs) {
        Map<String, Map<WorkerSlot, Held>> next = new HashMap<>();
        for (TopologyDetails td : tops) {
            SchedulerAssignment a = cluster.getAssignmentById(td.getId());
            if (a == null) {
                continue;
            }
            Map<WorkerSlot, Held> before = held.getOrDefault(td.getId(), Map.of());
            Map<WorkerSlot, Held> now = new HashMap<>();
            a.getSlotToExecutors().forEach((slot, execs) -> {
                Set<ExecutorDetails> set = new HashSet<>(execs);
                Held was = before.get(slot);
                now.put(slot, was != null && was.executors.equals(set) ? was : new Held(set, nowMs));
            });
            next.put(td.getId(), now);
        }
        held.clear();
        held.putAll(next);
    }

    /**
     * The slots of {@code current} on supervisors that are gone whose workers cannot be shown to have
     * started: assigned too late before the supervisor's last round alive, or never seen by this
     * plugin (Nimbus restarted) holding these executors while the supervisor was alive.
     */
    List<WorkerSlot> notStarted(String topologyId, SchedulerAssignment current, Cluster cluster) {
        Map<WorkerSlot, Held> seen = held.getOrDefault(topologyId, Map.of());
        List<WorkerSlot> out = new ArrayList<>();
        current.getSlotToExecutors().forEach((slot, execs) -> {
            if (cluster.getSupervisorById(slot.getNodeId()) != null) {
                return;
            }
            Held h = seen.get(slot);
            Long alive = lastAliveMs.get(slot.getNodeId());
            boolean started = h != null && alive != null && h.executors.containsAll(execs) && h.sinceMs + settleMs <= alive;
            if (!started) {
                out.add(slot);
            }
        });
        out.sort(Comparator.comparing(WorkerSlot::toString));
        return out;
    }
}
