package org.streamplace.storm;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.storm.Config;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.TopologyInfo;
import org.apache.storm.utils.Utils;
import org.apache.storm.utils.VersionInfo;

/**
 * The {@code result} event of a job: what Storm made of it, read back from Nimbus: the assignment
 * in the plan's own form (label -> node and worker), system executors apart, Storm's task
 * numbering, the number of workers, the scheduler status, the job's own settings as Nimbus
 * stored them, and the measured interval.
 */
final class JobReport {
    private JobReport() {
    }

    static Map<String, Object> describe(Engine engine, JobFile.Job job, String id, MeasuredWindow window) throws Exception {
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
        Set<String> workers = new TreeSet<>();
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
        out.put("job", job.name());
        out.put("topology_id", id);
        out.put("scheduler_status", info.get_sched_status());
        out.put("assignment", assignment);
        out.put("system_executors", system);
        out.put("workers", workers.size());
        Map<String, String> tasks = new TreeMap<>();
        taskToComponent.forEach((t, c) -> tasks.put(String.valueOf(t), c));
        out.put("storm_tasks", tasks);
        out.put("storm_version", VersionInfo.getVersion());
        // the job's own Storm settings as Nimbus stored them for the topology
        Map<String, Object> stored = Utils.parseJson(engine.nimbus().getTopologyConf(id));
        Map<String, Object> conf = new TreeMap<>();
        for (String key : job.conf().keySet()) {
            if (!key.startsWith("streamplace.")) {
                conf.put(key, stored.get(key));
            }
        }
        // and the acker count, which the job sets through Config.setNumAckers rather than its own
        // settings: without it a reader takes Storm's default, one per worker (Nimbus stores the
        // count it used, Nimbus.submitTopologyWithOpts)
        conf.put(Config.TOPOLOGY_ACKER_EXECUTORS, stored.get(Config.TOPOLOGY_ACKER_EXECUTORS));
        out.put("topology_conf", conf);
        out.putAll(spoutTotals(info));
        out.put("measure_start", window.startMs() / 1000.0);
        out.put("measure_end", window.endMs() / 1000.0);
        return out;
    }

    /**
     * Storm's own all-time counts over the topology's spout executors: {@code spout_acked} and
     * {@code spout_failed} (tuple trees a spout emitted with a message id that completed, or failed
     * or timed out; both 0 without ackers), as the UI shows them.
     */
    static Map<String, Object> spoutTotals(TopologyInfo info) {
        long acked = 0;
        long failed = 0;
        for (ExecutorSummary e : info.get_executors()) {
            if (e.get_stats() == null || !e.get_stats().get_specific().is_set_spout()) {
                continue;
            }
            var spout = e.get_stats().get_specific().get_spout();
            acked += sum(spout.get_acked().get(":all-time"));
            failed += sum(spout.get_failed().get(":all-time"));
        }
        return Map.of("spout_acked", acked, "spout_failed", failed);
    }

    private static long sum(Map<String, Long> byStream) {
        return byStream == null ? 0 : byStream.values().stream().mapToLong(Long::longValue).sum();
    }
}
