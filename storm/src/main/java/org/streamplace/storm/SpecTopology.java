package org.streamplace.storm;

import java.util.List;
import org.apache.storm.Config;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.topology.BoltDeclarer;
import org.apache.storm.topology.ComponentConfigurationDeclarer;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.tuple.Fields;

/**
 * Builds the Storm topology of a spec: operators without upstream streams are spouts, the others
 * bolts; one task per executor (parallelism = tasks); the five groupings map to Storm's shuffle,
 * fields (on the stream's key field), global, all and localOrShuffle.
 */
public final class SpecTopology {
    private SpecTopology() {
    }

    public static StormTopology build(Spec spec) {
        TopologyBuilder builder = new TopologyBuilder();
        for (Spec.Operator op : spec.operators) {
            List<Spec.Stream> inputs = spec.upstream(op.name());
            if (inputs.isEmpty()) {
                declare(builder.setSpout(op.name(), new SpecComponents.SpecSpout(spec, op.name()), op.parallelism())
                               .setNumTasks(op.parallelism()), op);
                continue;
            }
            BoltDeclarer bolt = builder.setBolt(op.name(), new SpecComponents.SpecBolt(spec, op.name()), op.parallelism())
                                       .setNumTasks(op.parallelism());
            declare(bolt, op);
            for (Spec.Stream s : inputs) {
                switch (s.grouping()) {
                    case "fields" -> bolt.fieldsGrouping(s.from(), new Fields(s.keyField()));
                    case "global" -> bolt.globalGrouping(s.from());
                    case "all" -> bolt.allGrouping(s.from());
                    case "local_or_shuffle" -> bolt.localOrShuffleGrouping(s.from());
                    default -> bolt.shuffleGrouping(s.from());
                }
            }
        }
        return builder.createTopology();
    }

    /**
     * The operator's declared resources, as Storm's ResourceAwareScheduler reads them: CPU in
     * percent of a core per executor, on-heap memory in MB; what the spec leaves out keeps Storm's
     * defaults ({@code topology.component.cpu.pcore.percent} 10, {@code
     * topology.component.resources.onheap.memory.mb} 128).
     */
    private static void declare(ComponentConfigurationDeclarer<?> component, Spec.Operator op) {
        if (op.cpuDemand() > 0) {
            component.setCPULoad(op.cpuDemand() * 100.0);
        }
        if (op.memoryMb() > 0) {
            component.setMemoryLoad(op.memoryMb());
        }
    }

    /**
     * The topology conf of a streamplace run: {@code workers} worker processes, {@code ackers}
     * acker executors (0: no acking; tuples carry their emit time instead), load-aware shuffle off
     * unless asked for (Storm 2's default prefers the sender's own worker, unlike the papers'
     * Storm 1.x and our model's uniform shuffle), the traffic monitor installed when
     * {@code monitorDir} or {@code monitorUrl} is given: writing files in {@code monitorDir}, or
     * sending its windows through Storm's metrics path to a {@link RecordsConsumer} that forwards
     * them to {@code monitorUrl}.
     */
    public static Config conf(int workers, int ackers, boolean loadAware, String monitorDir, String monitorUrl,
                              double windowSeconds) {
        Config conf = new Config();
        conf.setNumWorkers(workers);
        conf.setNumAckers(ackers);
        conf.put(Config.TOPOLOGY_DISABLE_LOADAWARE_MESSAGING, !loadAware);
        if (monitorUrl != null) {
            conf.put(TrafficMonitor.VIA_METRICS, true);
            conf.registerMetricsConsumer(RecordsConsumer.class, monitorUrl, 1);
        } else if (monitorDir != null) {
            conf.put(TrafficMonitor.DIR, monitorDir);
        }
        if (monitorDir != null || monitorUrl != null) {
            conf.put(Config.TOPOLOGY_AUTO_TASK_HOOKS, List.of(TrafficMonitor.class.getName()));
            conf.put(TrafficMonitor.WINDOW_SECS, windowSeconds);
        }
        return conf;
    }
}
