package org.streamplace.storm;

import java.util.List;
import java.util.Map;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.SubmitOptions;

/** What {@link JobRunner} needs from a Storm cluster: {@link LocalRunner} (embedded) or {@link ClusterRunner} (testbed). */
interface Engine {
    /** Where an executor runs: the cluster node's name and the worker's index on that node. */
    record Slot(String node, int worker) {
    }

    /** Starts (or connects to) the cluster a job file describes. */
    interface Factory {
        Engine start(JobFile job) throws Exception;
    }

    Nimbus.Iface nimbus();

    /** Submits the topology with Storm's submit options (its initial status, active or inactive). */
    void submit(String name, Map<String, Object> conf, StormTopology topology, SubmitOptions options) throws Exception;

    /** Storm's assignment of the topology: executor [first task, last task] -> slot. */
    Map<List<Long>, Slot> placement(String topologyId) throws Exception;
}
