package org.streamplace.storm;

import java.util.List;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.KillOptions;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.TopologySummary;

/** Polls Nimbus (every 100 ms) until a topology is assigned, running, or gone; kills topologies. */
final class TopologyWatch {
    /** How long Storm may take to assign or remove a topology, and the testbed's supervisors to register. */
    static final long TIMEOUT_MS = 120_000;
    private static final long POLL_MS = 100;

    private final Engine engine;
    private final long startTimeoutMs;

    /** {@code startTimeoutMs}: how long the workers may take to start (many real processes on the testbed). */
    TopologyWatch(Engine engine, long startTimeoutMs) {
        this.engine = engine;
        this.startTimeoutMs = startTimeoutMs;
    }

    /** Waits until Nimbus has assigned every executor of the topology; returns its id. */
    String awaitAssignment(String name) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        while (System.currentTimeMillis() < deadline) {
            TopologySummary summary = summary(name);
            if (summary != null) {
                int expected = expectedExecutors(engine.nimbus().getTopology(summary.get_id()));
                if (engine.placement(summary.get_id()).size() == expected) {
                    return summary.get_id();
                }
            }
            Thread.sleep(POLL_MS);
        }
        throw new IllegalStateException("topology " + name + " was not fully assigned within " + TIMEOUT_MS / 1000 + " s");
    }

    /** Waits until every executor of the topology has sent a heartbeat (its worker is up). */
    void awaitRunning(String id) throws Exception {
        long deadline = System.currentTimeMillis() + startTimeoutMs;
        while (System.currentTimeMillis() < deadline) {
            List<ExecutorSummary> execs = engine.nimbus().getTopologyInfo(id).get_executors();
            if (!execs.isEmpty() && execs.stream().allMatch(ExecutorSummary::is_set_stats)) {
                return;
            }
            Thread.sleep(POLL_MS);
        }
        throw new IllegalStateException("the workers of " + id + " did not all start within " + startTimeoutMs / 1000 + " s");
    }

    /** Kills the topology at once (no wait for in-flight tuples). */
    void kill(String name) throws Exception {
        KillOptions kill = new KillOptions();
        kill.set_wait_secs(0);
        engine.nimbus().killTopologyWithOpts(name, kill);
    }

    void awaitGone(String name) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        while (summary(name) != null) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("topology " + name + " was not removed within " + TIMEOUT_MS / 1000 + " s");
            }
            Thread.sleep(POLL_MS);
        }
    }

    static void sleepUntil(long epochMillis) throws InterruptedException {
        for (long wait = epochMillis - System.currentTimeMillis(); wait > 0; wait = epochMillis - System.currentTimeMillis()) {
            Thread.sleep(wait);
        }
    }

    private static int expectedExecutors(StormTopology system) {
        int n = 0;
        for (var s : system.get_spouts().values()) {
            n += s.get_common().get_parallelism_hint();
        }
        for (var b : system.get_bolts().values()) {
            n += b.get_common().get_parallelism_hint();
        }
        return n;
    }

    private TopologySummary summary(String name) throws Exception {
        for (TopologySummary s : engine.nimbus().getTopologySummaries()) {
            if (s.get_name().equals(name)) {
                return s;
            }
        }
        return null;
    }
}
