package org.streamplace.storm;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.storm.Config;
import org.apache.storm.StormSubmitter;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.Nimbus;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.SubmitOptions;
import org.apache.storm.generated.SupervisorSummary;
import org.apache.storm.thrift.transport.TTransportException;
import org.apache.storm.utils.NimbusClient;
import org.apache.storm.utils.Utils;

/**
 * The testbed runner behind {@code streamplace storm run --mode cluster}: a client of a running
 * distributed Storm cluster (Nimbus with {@link PlanScheduler}, one supervisor per cluster node,
 * each reporting the node's own address as its host), which the Python testbed started. It waits
 * until every node's supervisor has registered, then runs the job file with {@link JobRunner},
 * uploading the harness jar (system property {@code storm.jar}) as each topology's code.
 *
 * <p>Its Nimbus client follows Nimbus through a restart: a call whose connection broke is made
 * again on a new connection, for up to {@link TopologyWatch#TIMEOUT_MS} (a fault the autopilot is
 * tested against; the workers run on meanwhile).
 *
 * <p>It needs the job file's testbed fields ({@link JobFile#requireTestbed}): {@code nimbus}
 * ({@code host}, {@code port}) and {@code host} and {@code ports} in each {@code cluster[]} entry.
 */
public final class ClusterRunner implements Engine {
    private final Nimbus.Iface nimbus;
    private final Map<String, Object> conf;
    private NimbusClient client;
    private final Map<String, Object> clientConf = new HashMap<>();
    private final Map<String, String> nodeOfHost = new HashMap<>();
    private final Map<String, List<Integer>> portsOfNode = new HashMap<>();

    private ClusterRunner(JobFile job) throws Exception {
        job.requireTestbed();
        clientConf.put(Config.NIMBUS_SEEDS, List.of(job.nimbus().host()));
        clientConf.put(Config.NIMBUS_THRIFT_PORT, job.nimbus().port());
        for (JobFile.Node node : job.cluster()) {
            nodeOfHost.put(node.host(), node.name());
            List<Integer> ports = new java.util.ArrayList<>(node.ports());
            ports.sort(null);
            portsOfNode.put(node.name(), ports);
        }
        Events.emit("starting", Map.of());
        conf = Utils.readStormConfig();
        conf.putAll(clientConf);
        client = NimbusClient.getConfiguredClient(conf);
        nimbus = (Nimbus.Iface) Proxy.newProxyInstance(Nimbus.Iface.class.getClassLoader(),
            new Class<?>[] {Nimbus.Iface.class}, (proxy, method, args) -> call(method, args));
        awaitSupervisors();
        Events.emit("cluster", Map.of("supervisors", nodeOfHost.size()));
    }

    public static void main(String[] args) {
        JobRunner.main("ClusterRunner", args, ClusterRunner::new);
    }

    /** Every node's supervisor registered with all its ports. */
    private void awaitSupervisors() throws Exception {
        long deadline = System.currentTimeMillis() + TopologyWatch.TIMEOUT_MS;
        Set<String> seen = new HashSet<>();
        while (System.currentTimeMillis() < deadline) {
            seen.clear();
            for (SupervisorSummary s : nimbus.getClusterInfo().get_supervisors()) {
                String node = nodeOfHost.get(s.get_host());
                if (node != null && s.get_num_workers() >= portsOfNode.get(node).size()) {
                    seen.add(node);
                }
            }
            if (seen.size() == nodeOfHost.size()) {
                return;
            }
            Thread.sleep(200);
        }
        Set<String> missing = new HashSet<>(portsOfNode.keySet());
        missing.removeAll(seen);
        throw new IllegalStateException("the supervisors of " + missing + " did not register with Nimbus within "
                                        + TopologyWatch.TIMEOUT_MS / 1000 + " s");
    }

    /** One Nimbus call; a broken connection (Nimbus restarting) is opened again and the call repeated. */
    private synchronized Object call(java.lang.reflect.Method method, Object[] args) throws Throwable {
        long deadline = System.currentTimeMillis() + TopologyWatch.TIMEOUT_MS;
        while (true) {
            try {
                if (client == null) {
                    client = NimbusClient.getConfiguredClient(conf);
                }
                return method.invoke(client.getClient(), args);
            } catch (InvocationTargetException e) {
                if (!(e.getCause() instanceof TTransportException) || System.currentTimeMillis() > deadline) {
                    throw e.getCause();
                }
            } catch (RuntimeException e) {   // NimbusClient: no leader found while Nimbus starts
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
            }
            if (client != null) {
                client.close();
                client = null;
            }
            Thread.sleep(1000);
        }
    }

    @Override
    public Nimbus.Iface nimbus() {
        return nimbus;
    }

    @Override
    public void submit(String name, Map<String, Object> conf, StormTopology topology, SubmitOptions options)
            throws Exception {
        Map<String, Object> withNimbus = new HashMap<>(conf);
        withNimbus.putAll(clientConf);   // StormSubmitter finds Nimbus through the topology's conf
        StormSubmitter.submitTopology(name, withNimbus, topology, options);
    }

    /** From the topology's executor summaries: host = the node's address, port = its worker slot. */
    @Override
    public Map<List<Long>, Slot> placement(String topologyId) throws Exception {
        Map<List<Long>, Slot> out = new HashMap<>();
        for (ExecutorSummary e : nimbus.getTopologyInfo(topologyId).get_executors()) {
            String node = nodeOfHost.getOrDefault(e.get_host(), e.get_host());
            int worker = portsOfNode.getOrDefault(node, List.of()).indexOf(e.get_port());
            out.put(List.of((long) e.get_executor_info().get_task_start(), (long) e.get_executor_info().get_task_end()),
                    new Slot(node, worker));
        }
        return out;
    }
}
