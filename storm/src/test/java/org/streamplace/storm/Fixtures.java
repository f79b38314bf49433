package org.streamplace.storm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.Config;
import org.apache.storm.daemon.StormCommon;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.metric.StormMetricsRegistry;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.INimbus;
import org.apache.storm.scheduler.IScheduler;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.Topologies;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.apache.storm.scheduler.resource.normalization.ResourceMetrics;
import org.apache.storm.utils.Utils;

/** Storm scheduler inputs built the way Nimbus builds them, for plugin tests without a cluster. */
final class Fixtures {
    private Fixtures() {
    }

    /** spout(2) -shuffle-> split(3) -fields-> count(2): Storm numbers count 1-2, split 3-5, spout 6-7. */
    static final String WORDCOUNT = """
        name: wc
        operators:
          - {name: spout, parallelism: 2, source_rate: 100}
          - {name: split, parallelism: 3}
          - {name: count, parallelism: 2}
        streams:
          - {from: spout, to: split, grouping: shuffle}
          - {from: split, to: count, grouping: fields, key: word}
        """;

    /** A topology conf as Nimbus sees it: Storm's defaults, then the topology's own keys. */
    static Map<String, Object> stormConf(Map<String, Object> topologyConf) {
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        conf.putAll(topologyConf);
        return conf;
    }

    static Spec spec(String yaml) throws SpecException {
        return Spec.fromDocument(Documents.parse(yaml, "test"), "test");
    }

    /** A submitted topology as the scheduler sees it: executors of one task each, ackers as given. */
    static TopologyDetails topology(String yaml, String id, int workers, int ackers) throws Exception {
        Spec spec = spec(yaml);
        StormTopology topology = SpecTopology.build(spec);
        Map<String, Object> conf = stormConf(SpecTopology.conf(workers, ackers, false, null, null, 10));
        conf.put(Config.TOPOLOGY_NAME, spec.name);
        Map<ExecutorDetails, String> execs = new HashMap<>();
        StormCommon.stormTaskInfo(topology, conf).forEach((task, comp) -> execs.put(new ExecutorDetails(task, task), comp));
        return new TopologyDetails(id, conf, topology, workers, execs, 0, "user");
    }

    /** Supervisors with scheduler meta node = name; ports from 6700 (given in descending order, to check sorting). */
    static Map<String, SupervisorDetails> supervisors(Map<String, Integer> slotsByNode) {
        Map<String, SupervisorDetails> out = new HashMap<>();
        for (Map.Entry<String, Integer> e : slotsByNode.entrySet()) {
            List<Number> ports = new ArrayList<>();
            for (int p = e.getValue() - 1; p >= 0; p--) {
                ports.add(6700 + p);
            }
            String id = "sup-" + e.getKey();
            out.put(id, new SupervisorDetails(id, "host-" + e.getKey(), Map.of("node", e.getKey()), ports));
        }
        return out;
    }

    static Cluster cluster(Map<String, SupervisorDetails> sups, Map<String, ? extends SchedulerAssignment> assignments,
                           TopologyDetails... tops) {
        return new Cluster(new TestNimbus(), new ResourceMetrics(new StormMetricsRegistry()), sups, assignments,
                           new Topologies(tops), new HashMap<>());
    }

    static PlanScheduler scheduler(Path planDir) {
        PlanScheduler s = new PlanScheduler();
        s.prepare(Map.of(PlanScheduler.PLAN_DIR, planDir.toString()), new StormMetricsRegistry());
        return s;
    }

    static void writePlan(Path dir, String name, String json) throws IOException {
        Files.writeString(dir.resolve(name + ".json"), json);
    }

    /** label -> "node:port" of the topology's current assignment (system executors as component#task). */
    static Map<String, String> placed(Cluster cluster, TopologyDetails td) {
        Map<Integer, String> comp = new HashMap<>();
        td.getExecutorToComponent().forEach((e, c) -> comp.put(e.getStartTask(), c));
        Map<Integer, String> labels = TaskLabels.labels(comp);
        Map<String, String> out = new HashMap<>();
        SchedulerAssignment a = cluster.getAssignmentById(td.getId());
        if (a == null) {
            return out;
        }
        for (Map.Entry<ExecutorDetails, WorkerSlot> e : a.getExecutorToSlot().entrySet()) {
            int t = e.getKey().getStartTask();
            String where = e.getValue().getNodeId().substring("sup-".length()) + ":" + e.getValue().getPort();
            out.put(labels.getOrDefault(t, comp.get(t) + "#" + t), where);
        }
        return out;
    }

    static final class TestNimbus implements INimbus {
        @Override
        public void prepare(Map<String, Object> topoConf, String schedulerLocalDir) {
        }

        @Override
        public Collection<WorkerSlot> allSlotsAvailableForScheduling(Collection<SupervisorDetails> existingSupervisors,
                                                                     Topologies topologies, Set<String> missing) {
            return List.of();
        }

        @Override
        public void assignSlots(Topologies topologies, Map<String, Collection<WorkerSlot>> newSlotsByTopologyId) {
        }

        @Override
        public String getHostName(Map<String, SupervisorDetails> existingSupervisors, String nodeId) {
            return existingSupervisors.containsKey(nodeId) ? existingSupervisors.get(nodeId).getHost() : null;
        }

        @Override
        public IScheduler getForcedScheduler() {
            return null;
        }
    }
}
