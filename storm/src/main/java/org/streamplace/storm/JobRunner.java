package org.streamplace.storm;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.KillOptions;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.TopologyInfo;
import org.apache.storm.generated.TopologySummary;
import org.apache.storm.utils.Utils;

/**
 * Runs the jobs of a job file (JSON, written by the Python side) on a Storm cluster, embedded
 * ({@link LocalRunner}) or distributed ({@link ClusterRunner}): one after another, or in groups
 * at once; reports on stdout as JSON Lines: progress events, then one {@code result} per job with
 * the assignment Storm made (in the plan's own form, label -> node and worker), Storm's task
 * numbering, the scheduler status and the measured interval.
 */
final class JobRunner {
    private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                                                           StandardCharsets.UTF_8);
    static final long TIMEOUT_MS = 120_000;

    /** What a runner needs from a Storm cluster. */
    interface Engine {
        /** Where an executor runs: the cluster node's name and the worker's index on that node. */
        record Slot(String node, int worker) {}

        Nimbus.Iface nimbus();

        void submit(String name, Map<String, Object> conf, StormTopology topology) throws Exception;

        /** Storm's assignment of the topology: executor [first task, last task] -> slot. */
        Map<List<Long>, Slot> placement(String topologyId) throws Exception;
    }

    /** Starts (or connects to) the cluster described by the job file. */
    interface EngineFactory {
        Engine start(Map<String, Object> job) throws Exception;
    }

    private final Engine engine;
    private long startTimeoutMs = TIMEOUT_MS;

    private JobRunner(Engine engine) {
        this.engine = engine;
    }

    /** Exit code convention of both runners: 2 for a bad job file, 1 for anything else. */
    static void main(String name, String[] args, EngineFactory engine) {
        if (args.length != 1) {
            System.err.println("usage: " + name + " JOB.json");
            System.exit(2);
        }
        int code = 0;
        try {
            Map<String, Object> job = Documents.map(Documents.read(Path.of(args[0])), args[0], "");
            for (Object j : Documents.list(job.get("jobs"), "job", "jobs")) {   // before any cluster starts
                conf(Documents.map(j, "job", "jobs[]"));
            }
            new JobRunner(engine.start(job)).runAll(job);
        } catch (SpecException e) {
            System.err.println("streamplace: " + e.getMessage());
            code = 2;
        } catch (Throwable t) {
            t.printStackTrace();
            code = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(code);   // Storm leaves non-daemon threads behind
    }

    /** Daemon settings both runners give Nimbus and the supervisors. */
    static Map<String, Object> daemonConf(Map<String, Object> job) throws SpecException {
        Map<String, Object> daemon = new HashMap<>();
        daemon.put(org.apache.storm.DaemonConfig.STORM_SCHEDULER, PlanScheduler.class.getName());
        daemon.put(PlanScheduler.PLAN_DIR, Documents.string(job.get("plan_dir"), "job", "plan_dir"));
        daemon.put(Config.TOPOLOGY_STATS_SAMPLE_RATE, 1.0);
        daemon.put(Config.TASK_HEARTBEAT_FREQUENCY_SECS, 1);   // executors report within a second of starting
        // executor stats (how the runner sees that every executor runs) are pushed every 60 s by default
        daemon.put(Config.EXECUTOR_METRICS_FREQUENCY_SECS, 1);
        return daemon;
    }

    private void runAll(Map<String, Object> job) throws Exception {
        String src = "job";
        // a job's workers are real processes on the testbed: many of them take long to start on a small machine
        startTimeoutMs = Math.round(1000 * Documents.number(job.get("start_timeout_s"), TIMEOUT_MS / 1000.0, src, "start_timeout_s"));
        // consecutive jobs with the same "group" run together; the groups one after another
        List<List<Map<String, Object>>> groups = new ArrayList<>();
        Object previous = null;
        for (Object j : Documents.list(job.get("jobs"), src, "jobs")) {
            Map<String, Object> entry = Documents.map(j, src, "jobs[]");
            Object group = entry.get("group");
            if (groups.isEmpty() || group == null || !group.equals(previous)) {
                groups.add(new ArrayList<>());
            }
            groups.get(groups.size() - 1).add(entry);
            previous = group;
        }
        for (List<Map<String, Object>> group : groups) {
            runTogether(group);
        }
    }

    /** Submits the jobs, waits until each is fully assigned, measures them together, then kills them. */
    private void runTogether(List<Map<String, Object>> jobs) throws Exception {
        Map<String, String> ids = new LinkedHashMap<>();
        Map<String, Set<String>> confKeys = new HashMap<>();
        for (Map<String, Object> j : jobs) {
            String name = submit(j);
            confKeys.put(name, j.get("conf") == null ? Set.of() : Documents.map(j.get("conf"), "job", "conf").keySet());
            ids.put(name, awaitAssignment(name));
            event("assigned", Map.of("job", name));
        }
        for (Map.Entry<String, String> e : ids.entrySet()) {   // killing a topology whose workers still start halts LocalCluster
            awaitRunning(e.getValue());
            event("running", Map.of("job", e.getKey()));
        }
        double warmup = 0;
        double duration = 0;
        double window = 0;
        for (Map<String, Object> j : jobs) {
            warmup = Math.max(warmup, Documents.number(j.get("warmup_s"), 0, "job", "warmup_s"));
            duration = Math.max(duration, Documents.number(j.get("duration_s"), 0, "job", "duration_s"));
            window = Math.max(window, Documents.number(j.get("window_s"), 10.0, "job", "window_s"));
        }
        if (warmup > 0) {
            event("warmup", Map.of("seconds", warmup));
            Thread.sleep((long) (warmup * 1000));
        }
        // measure whole monitor windows: from the next window boundary, a whole number of windows
        long windowMs = Math.max(1L, Math.round(window * 1000));
        long start = System.currentTimeMillis();
        long end = start;
        if (duration > 0) {
            start = (start / windowMs + 1) * windowMs;
            end = start + (long) Math.ceil(duration * 1000 / windowMs) * windowMs;
            event("measuring", Map.of("seconds", (end - start) / 1000.0, "start", start / 1000.0, "end", end / 1000.0));
            sleepUntil(end + Math.min(1000, windowMs / 2));   // the monitor writes each window at its end
        }
        for (Map.Entry<String, String> e : ids.entrySet()) {
            Map<String, Object> result = describe(e.getKey(), e.getValue(), confKeys.get(e.getKey()));
            result.put("measure_start", start / 1000.0);
            result.put("measure_end", end / 1000.0);
            event("result", result);
        }
        for (String name : ids.keySet()) {
            KillOptions kill = new KillOptions();
            kill.set_wait_secs(0);
            engine.nimbus().killTopologyWithOpts(name, kill);
        }
        for (String name : ids.keySet()) {
            awaitGone(name);
            event("killed", Map.of("job", name));
        }
    }

    /**
     * A job that is only placed, not measured: idle executors sleep 10 ms at once instead of
     * spinning first (Storm's default), so many topologies in one JVM leave the CPU to Storm.
     */
    private static void idle(Config conf) {
        for (String kind : new String[] {"bolt", "spout"}) {
            String p = "topology." + kind + ".wait.progressive.";
            conf.put(p + "level1.count", 0);
            conf.put(p + "level2.count", 0);
            conf.put(p + "level3.sleep.millis", 10);
        }
    }

    private static void sleepUntil(long epochMillis) throws InterruptedException {
        for (long wait = epochMillis - System.currentTimeMillis(); wait > 0; wait = epochMillis - System.currentTimeMillis()) {
            Thread.sleep(wait);
        }
    }

    /** The topology conf of a job entry: streamplace's settings, then the entry's own {@code conf}, checked. */
    private static Config conf(Map<String, Object> j) throws SpecException {
        String src = "job";
        String name = Documents.string(j.get("name"), src, "name");
        Object monitor = j.get("monitor_dir");
        Config conf = SpecTopology.conf(Documents.integer(j.get("workers"), 1, src, "workers"),
                                        Documents.integer(j.get("ackers"), 0, src, "ackers"),
                                        Boolean.TRUE.equals(j.get("load_aware")),
                                        monitor == null ? null : String.valueOf(monitor),
                                        Documents.number(j.get("window_s"), 10.0, src, "window_s"));
        if (Documents.number(j.get("duration_s"), 0, src, "duration_s") == 0) {
            idle(conf);
        }
        if (j.get("conf") != null) {
            conf.putAll(Documents.map(j.get("conf"), src, "conf"));
        }
        TopologyConf.check(conf, "topology settings of " + name);
        return conf;
    }

    private String submit(Map<String, Object> j) throws Exception {
        String name = Documents.string(j.get("name"), "job", "name");
        Spec spec = Spec.read(Path.of(Documents.string(j.get("topology"), "job", "topology")));
        engine.submit(name, conf(j), SpecTopology.build(spec));
        event("submitted", Map.of("job", name));
        return name;
    }

    /** Waits until Nimbus has assigned every executor of the topology; returns its id. */
    private String awaitAssignment(String name) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        while (System.currentTimeMillis() < deadline) {
            TopologySummary summary = summary(name);
            if (summary != null) {
                int expected = expectedExecutors(engine.nimbus().getTopology(summary.get_id()));
                if (engine.placement(summary.get_id()).size() == expected) {
                    return summary.get_id();
                }
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("topology " + name + " was not fully assigned within " + TIMEOUT_MS / 1000 + " s");
    }

    /** Waits until every executor of the topology has sent a heartbeat (its worker is up). */
    private void awaitRunning(String id) throws Exception {
        long deadline = System.currentTimeMillis() + startTimeoutMs;
        while (System.currentTimeMillis() < deadline) {
            List<ExecutorSummary> execs = engine.nimbus().getTopologyInfo(id).get_executors();
            if (!execs.isEmpty() && execs.stream().allMatch(ExecutorSummary::is_set_stats)) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the workers of " + id + " did not all start within " + startTimeoutMs / 1000 + " s");
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

    private void awaitGone(String name) throws Exception {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        while (summary(name) != null) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("topology " + name + " was not removed within " + TIMEOUT_MS / 1000 + " s");
            }
            Thread.sleep(100);
        }
    }

    /** What Storm made of the job: assignment by label, task numbering, workers, scheduler status. */
    private Map<String, Object> describe(String name, String id, Set<String> confKeys) throws Exception {
        TopologyInfo info = engine.nimbus().getTopologyInfo(id);
        Map<Integer, String> taskToComponent = new TreeMap<>();
        for (ExecutorSummary e : info.get_executors()) {
            for (int t = e.get_executor_info().get_task_start(); t <= e.get_executor_info().get_task_end(); t++) {
                taskToComponent.put(t, e.get_component_id());
            }
        }
        Map<Integer, String> labels = TaskLabels.labels(taskToComponent);
        Map<String, Object> assignment = new TreeMap<>();
        Map<String, Object> system = new TreeMap<>();
        Set<String> workers = new java.util.TreeSet<>();
        for (Map.Entry<List<Long>, Engine.Slot> e : engine.placement(id).entrySet()) {
            Engine.Slot slot = e.getValue();
            Map<String, Object> where = Map.of("node", slot.node(), "worker", slot.worker());
            workers.add(slot.node() + ":" + slot.worker());
            for (long t = e.getKey().get(0); t <= e.getKey().get(1); t++) {
                String label = labels.get((int) t);
                if (label != null) {
                    assignment.put(label, where);
                } else {
                    system.put(taskToComponent.get((int) t) + "#" + t, where);
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("job", name);
        out.put("topology_id", id);
        out.put("scheduler_status", info.get_sched_status());
        out.put("assignment", assignment);
        out.put("system_executors", system);
        out.put("workers", workers.size());
        Map<String, String> tasks = new TreeMap<>();
        taskToComponent.forEach((t, c) -> tasks.put(String.valueOf(t), c));
        out.put("storm_tasks", tasks);
        out.put("storm_version", org.apache.storm.utils.VersionInfo.getVersion());
        // the job's own Storm settings as Nimbus stored them for the topology
        Map<String, Object> stored = Utils.parseJson(engine.nimbus().getTopologyConf(id));
        Map<String, Object> conf = new TreeMap<>();
        for (String key : confKeys) {
            if (!key.startsWith("streamplace.")) {
                conf.put(key, stored.get(key));
            }
        }
        out.put("topology_conf", conf);
        return out;
    }

    static void event(String kind, Map<String, Object> fields) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("event", kind);
        e.putAll(fields);
        OUT.println(Json.write(e));
    }
}
