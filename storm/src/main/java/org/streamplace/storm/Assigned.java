package org.streamplace.storm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;

/**
 * What Storm runs, as the plugin saw it at the end of a scheduling round: one file per topology,
 * {@code <plan dir>/assigned/<topology name>.json}, replaced atomically when it changes and at least
 * once per {@code nimbus.monitor.freq.secs} (Nimbus also schedules at every submission), for a process
 * beside Nimbus (streamplace's autopilot) that cannot ask Nimbus itself:
 * <pre>
 * {"topology": name, "id": storm id, "round_ms": the round's time (epoch ms),
 *  "round_every_s": Nimbus' nimbus.monitor.freq.secs, "status": the scheduler status,
 *  "plan_modified_ms": the plan file's modification time the round read (null: no plan),
 *  "alive_nodes": [...], "dead_nodes": [... nodes seen alive in an earlier round],
 *  "assignment": {task label: {"node": name, "worker": index of the port among the node's ports}}}
 * </pre>
 * Labels and worker indices are the plan's own (a plan read back from this file is the
 * assignment); system executors (ackers) are left out, as a plan leaves them out.
 */
final class Assigned {
    static final String DIR = "assigned";

    private Assigned() {
    }

    static Map<String, Object> describe(TopologyDetails td, Cluster cluster, Set<String> alive, Set<String> dead,
                                        Long planModifiedMs, long roundMs, double roundEverySecs) {
        Map<Integer, String> comp = new HashMap<>();
        td.getExecutorToComponent().forEach((e, c) -> {
            for (int t = e.getStartTask(); t <= e.getEndTask(); t++) {
                comp.put(t, c);
            }
        });
        Map<Integer, String> labels = TaskLabels.labels(comp);
        Map<String, Object> assignment = new TreeMap<>();
        SchedulerAssignment current = cluster.getAssignmentById(td.getId());
        if (current != null) {
            for (Map.Entry<ExecutorDetails, WorkerSlot> e : current.getExecutorToSlot().entrySet()) {
                SupervisorDetails sd = cluster.getSupervisorById(e.getValue().getNodeId());
                if (sd == null) {
                    continue;   // a slot of a supervisor Nimbus no longer lists: not running there
                }
                List<Integer> ports = new ArrayList<>(new TreeSet<>(sd.getAllPorts()));
                Map<String, Object> where = Map.of("node", PlanAssignment.nodeName(sd),
                                                   "worker", ports.indexOf(e.getValue().getPort()));
                for (int t = e.getKey().getStartTask(); t <= e.getKey().getEndTask(); t++) {
                    String label = labels.get(t);
                    if (label != null) {
                        assignment.put(label, where);
                    }
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topology", td.getName());
        out.put("id", td.getId());
        out.put("round_ms", roundMs);
        out.put("round_every_s", roundEverySecs);
        out.put("status", cluster.getStatus(td.getId()));
        out.put("plan_modified_ms", planModifiedMs);
        out.put("alive_nodes", new ArrayList<>(new TreeSet<>(alive)));
        out.put("dead_nodes", new ArrayList<>(new TreeSet<>(dead)));
        out.put("assignment", assignment);
        return out;
    }

    /** Whether two records are equal apart from {@code key}. */
    static boolean sameBut(Map<String, Object> a, Map<String, Object> b, String key) {
        Map<String, Object> x = new LinkedHashMap<>(a);
        Map<String, Object> y = new LinkedHashMap<>(b);
        x.remove(key);
        y.remove(key);
        return x.equals(y);
    }

    /** Writes the document to {@code dir/assigned/<name>.json} through a temporary file and an atomic move. */
    static void write(Path planDir, String name, Map<String, Object> doc) throws IOException {
        Path dir = planDir.resolve(DIR);
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, "." + name + ".", ".tmp");
        try {
            Files.writeString(tmp, Json.write(doc) + "\n", StandardCharsets.UTF_8);
            Files.move(tmp, dir.resolve(name + ".json"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
