package org.streamplace.storm;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.storm.Config;
import org.apache.storm.DaemonConfig;

/**
 * Runs the jobs of a job file (written by the Python side, see {@link JobFile}) on a Storm
 * cluster, embedded ({@link LocalRunner}) or distributed ({@link ClusterRunner}): one after
 * another, or in groups at once. Each group: {@link Submitter} submits its jobs,
 * {@link TopologyWatch} waits until each is assigned and running, the group is measured over
 * whole monitor windows ({@link MeasuredWindow}), {@link JobReport} reads back what Storm made of
 * each job, and the jobs are killed; {@link Events} reports each step on stdout.
 */
final class JobRunner {
    private final Engine engine;
    private final TopologyWatch watch;

    private JobRunner(Engine engine, JobFile file) {
        this.engine = engine;
        this.watch = new TopologyWatch(engine, Math.round(1000 * file.startTimeoutS()));
    }

    /** A runner's {@code main}: runs, then halts the JVM (Storm leaves non-daemon threads behind). */
    static void main(String name, String[] args, Engine.Factory engine) {
        int code = run(name, args, engine, System.err);
        Events.flush();
        Runtime.getRuntime().halt(code);
    }

    /**
     * Exit code convention of both runners: 0 done, 2 for a bad job file (one line
     * {@code streamplace: FILE: FIELD: problem} on {@code err}, before any cluster starts),
     * 1 for anything else.
     */
    static int run(String name, String[] args, Engine.Factory engine, PrintStream err) {
        if (args.length != 1) {
            err.println("usage: " + name + " JOB.json");
            return 2;
        }
        try {
            JobFile file = JobFile.read(Path.of(args[0]));
            for (JobFile.Job j : file.jobs()) {   // every job's Storm settings, before any cluster starts
                Submitter.conf(j);
            }
            new JobRunner(engine.start(file), file).runAll(file.jobs());
            return 0;
        } catch (SpecException e) {
            err.println("streamplace: " + e.getMessage());
            return 2;
        } catch (Throwable t) {
            t.printStackTrace(err);
            return 1;
        }
    }

    /** Daemon settings both runners give Nimbus and the supervisors. */
    static Map<String, Object> daemonConf(JobFile file) {
        Map<String, Object> daemon = new HashMap<>();
        daemon.put(DaemonConfig.STORM_SCHEDULER, PlanScheduler.class.getName());
        daemon.put(PlanScheduler.PLAN_DIR, file.planDir());
        daemon.put(Config.TOPOLOGY_STATS_SAMPLE_RATE, 1.0);
        daemon.put(Config.TASK_HEARTBEAT_FREQUENCY_SECS, 1);   // executors report within a second of starting
        // executor stats (how the runner sees that every executor runs) are pushed every 60 s by default
        daemon.put(Config.EXECUTOR_METRICS_FREQUENCY_SECS, 1);
        return daemon;
    }

    /** Consecutive jobs with the same non-null group, in file order. */
    static List<List<JobFile.Job>> groups(List<JobFile.Job> jobs) {
        List<List<JobFile.Job>> groups = new ArrayList<>();
        Long previous = null;
        for (JobFile.Job j : jobs) {
            if (groups.isEmpty() || j.group() == null || !Objects.equals(j.group(), previous)) {
                groups.add(new ArrayList<>());
            }
            groups.get(groups.size() - 1).add(j);
            previous = j.group();
        }
        return groups;
    }

    private void runAll(List<JobFile.Job> jobs) throws Exception {
        for (List<JobFile.Job> group : groups(jobs)) {
            runTogether(group);
        }
    }

    /**
     * Submits the jobs (all of them first: Nimbus schedules each at its submission, so the waits
     * overlap), waits until each is fully assigned, measures them together, then kills them.
     */
    private void runTogether(List<JobFile.Job> jobs) throws Exception {
        Map<JobFile.Job, String> ids = new LinkedHashMap<>();
        for (JobFile.Job j : jobs) {
            Submitter.submit(engine, j);
        }
        for (JobFile.Job j : jobs) {
            ids.put(j, watch.awaitAssignment(j.name()));
            Events.emit("assigned", Map.of("job", j.name()));
        }
        for (Map.Entry<JobFile.Job, String> e : ids.entrySet()) {   // killing a topology whose workers still start halts LocalCluster
            watch.awaitRunning(e.getValue());
            Events.emit("running", Map.of("job", e.getKey().name()));
        }
        double warmup = jobs.stream().mapToDouble(JobFile.Job::warmupS).max().orElse(0);
        double duration = jobs.stream().mapToDouble(JobFile.Job::durationS).max().orElse(0);
        double window = jobs.stream().mapToDouble(JobFile.Job::windowS).max().orElse(0);
        if (warmup > 0) {
            Events.emit("warmup", Map.of("seconds", warmup));
            Thread.sleep((long) (warmup * 1000));
        }
        MeasuredWindow measured = MeasuredWindow.after(System.currentTimeMillis(), duration, window);
        if (!measured.isEmpty()) {
            Events.emit("measuring", Map.of("seconds", (measured.endMs() - measured.startMs()) / 1000.0,
                                            "start", measured.startMs() / 1000.0, "end", measured.endMs() / 1000.0));
            boolean viaMetrics = jobs.stream().anyMatch(j -> j.monitorUrl() != null);
            long delivered = measured.writtenMs(window) + (viaMetrics ? MeasuredWindow.METRICS_DELIVERY_MS : 0);
            TopologyWatch.sleepUntil(delivered);
            for (Map.Entry<JobFile.Job, String> e : ids.entrySet()) {
                String url = e.getKey().monitorUrl();
                if (url != null && !ReceiverProgress.await(url, e.getValue(), measured.lastStartMs(window),
                                                           delivered + ReceiverProgress.WAIT_MS)) {
                    Events.emit("note", Map.of("message", "the records receiver still misses the last measured window of "
                            + e.getKey().name() + "'s workers " + ReceiverProgress.WAIT_MS / 1000 + " s after it was due"));
                }
            }
        }
        for (Map.Entry<JobFile.Job, String> e : ids.entrySet()) {
            Events.emit("result", JobReport.describe(engine, e.getKey(), e.getValue(), measured));
        }
        for (JobFile.Job j : ids.keySet()) {
            watch.kill(j.name());
        }
        for (JobFile.Job j : ids.keySet()) {
            watch.awaitGone(j.name());
            Events.emit("killed", Map.of("job", j.name()));
        }
    }
}
