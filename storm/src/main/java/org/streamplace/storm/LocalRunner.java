package org.streamplace.storm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.DaemonConfig;
import org.apache.storm.LocalCluster;
import org.apache.storm.daemon.supervisor.Supervisor;
import org.apache.storm.generated.Assignment;
import org.apache.storm.generated.NodeInfo;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.SubmitOptions;

/**
 * The embedded runner behind {@code streamplace storm run --mode embedded}: a LocalCluster with one
 * supervisor per cluster node (supervisor id and {@code supervisor.scheduler.meta node} = the
 * node's name, its slot count as ports) and {@link PlanScheduler} as Nimbus' scheduler, running the
 * job file with {@link JobRunner}. Every worker lives in this one JVM: right for checking plans,
 * task ids and the monitor, not for performance. Storm's logs go to the file named by
 * {@code -Dstreamplace.log.file}.
 */
public final class LocalRunner implements Engine {
    static final int SUBMIT_ATTEMPTS = 3;

    private final LocalCluster cluster;
    private final Map<String, String> nodeOfSupervisor = new HashMap<>();
    private final Map<String, List<Integer>> portsOfNode = new HashMap<>();

    private LocalRunner(JobFile job) throws Exception {
        CachedStormConfig.install();   // Storm's configuration files parsed once, not per executor
        Map<String, Object> daemon = JobRunner.daemonConf(job);
        daemon.put(Config.STORM_ZOOKEEPER_SESSION_TIMEOUT, 120_000);   // one JVM holds the whole cluster: be patient
        daemon.put(Config.STORM_ZOOKEEPER_CONNECTION_TIMEOUT, 60_000);
        // a slot checks its worker every supervisor.monitor.frequency.secs and gives a stopping
        // worker supervisor.worker.shutdown.sleep.secs (Storm's defaults 3 and 3): once a second
        // here, as on the testbed, so that a group's workers start soon after the last group's stop
        daemon.put(DaemonConfig.SUPERVISOR_MONITOR_FREQUENCY_SECS, 1);
        daemon.put(Config.SUPERVISOR_WORKER_SHUTDOWN_SLEEP_SECS, 1);
        // every supervisor.localizer.update.blob.interval.secs (Storm's default 30) a supervisor asks
        // for the version of every blob it holds (AsyncLocalizer.updateBlobs); a runner's topologies
        // never change a blob: once an hour (the plans-on-Storm test's JVM: 103 CPU s against
        // 119-125, one run each, 2026-11-29, before the supervisors shared a SupervisorBlobStore)
        daemon.put(DaemonConfig.SUPERVISOR_LOCALIZER_UPDATE_BLOB_INTERVAL_SECS, 3600);
        Events.emit("starting", Map.of());
        // never closed: main() halts the JVM once every job is reported (closing a LocalCluster
        // waits for every slot thread); the caller removes the temporary directories
        cluster = new LocalCluster.Builder().withSupervisors(0).withDaemonConf(daemon).build();
        for (JobFile.Node node : job.cluster()) {
            addNode(node);
        }
        Events.emit("cluster", Map.of("supervisors", portsOfNode.size()));
    }

    public static void main(String[] args) {
        JobRunner.main("LocalRunner", args, LocalRunner::new);
    }

    @SuppressWarnings("unchecked")
    private void addNode(JobFile.Node n) throws Exception {
        String node = n.name();
        Map<String, Object> conf = new HashMap<>();
        conf.put(DaemonConfig.SUPERVISOR_SCHEDULER_META, Map.of("node", node));
        conf.put(DaemonConfig.NIMBUS_BLOBSTORE, SupervisorBlobStore.class.getName());   // one store for all of them
        conf.putAll(n.supervisorConf());
        Supervisor s = cluster.addSupervisor(n.slots(), conf, node);
        nodeOfSupervisor.put(s.getId(), node);
        List<Integer> ports = new ArrayList<>();
        for (Object p : (List<Object>) s.getConf().get(DaemonConfig.SUPERVISOR_SLOTS_PORTS)) {
            ports.add(((Number) p).intValue());
        }
        ports.sort(null);
        portsOfNode.put(node, ports);
    }

    @Override
    public Nimbus.Iface nimbus() {
        return cluster;
    }

    /**
     * Submits, once more (up to {@link #SUBMIT_ATTEMPTS} times) when Storm's own blob store race
     * strikes: a LocalFsBlobStore's cleanup deletes every empty key directory at once, and can
     * delete the one Nimbus has just created for the new topology before its file is written
     * (FileBlobStoreImpl.fullCleanup against LocalFsBlobStoreFile.getOutputStream). Storm's local
     * mode ran such a cleanup each time a supervisor opened a store; the supervisors' shared {@link
     * SupervisorBlobStore} runs none, so only Nimbus' own periodic cleanup is left to race. The
     * failed submission set up nothing under the name.
     */
    @Override
    public void submit(String name, Map<String, Object> conf, StormTopology topology, SubmitOptions options)
            throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                cluster.submitTopologyWithOpts(name, conf, topology, options);
                return;
            } catch (RuntimeException e) {
                if (attempt == SUBMIT_ATTEMPTS || !isBlobStoreRace(e)) {
                    throw e;
                }
                Events.emit("note", Map.of("message", "Storm's local blob store cleanup removed the directory "
                        + "of " + name + " while it was submitted; submitting again (attempt " + (attempt + 1) + ")"));
                Thread.sleep(500L * attempt);
            }
        }
    }

    /** True when a file of Storm's blob store could not be created because its directory vanished. */
    static boolean isBlobStoreRace(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.io.IOException && String.valueOf(t.getMessage()).contains("No such file or directory")) {
                for (StackTraceElement frame : t.getStackTrace()) {
                    if (frame.getClassName().startsWith("org.apache.storm.blobstore.")) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** From the assignment in cluster state: all LocalCluster supervisors share one host name. */
    @Override
    public Map<List<Long>, Slot> placement(String topologyId) throws Exception {
        Map<List<Long>, Slot> out = new HashMap<>();
        Assignment a = cluster.getClusterState().assignmentInfo(topologyId, null);
        if (a == null) {
            return out;
        }
        for (Map.Entry<List<Long>, NodeInfo> e : a.get_executor_node_port().entrySet()) {
            String node = nodeOfSupervisor.getOrDefault(e.getValue().get_node(), e.getValue().get_node());
            int port = e.getValue().get_port_iterator().next().intValue();
            out.put(e.getKey(), new Slot(node, portsOfNode.getOrDefault(node, List.of()).indexOf(port)));
        }
        return out;
    }
}
