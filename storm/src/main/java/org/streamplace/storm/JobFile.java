package org.streamplace.storm;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A job file, read and checked against {@code job.schema.json} ({@link JobSchema}), as typed
 * records. Optional fields take the schema's {@code default}s (JobFileTest holds the two together).
 *
 * @param source   the file, for messages
 * @param cluster  one entry per node; {@code host} and {@code ports} are only in testbed files
 * @param nimbus   where Nimbus listens (testbed files), else null
 */
record JobFile(String source, String planDir, double startTimeoutS, List<Node> cluster, Address nimbus, List<Job> jobs) {
    static final double START_TIMEOUT_S = 120;

    /**
     * A cluster node: its name, slot count, (testbed) its supervisor's address and ports, and
     * (LocalRunner) settings of its supervisor, such as the capacity it offers Storm's
     * ResourceAwareScheduler.
     */
    record Node(String name, int slots, String host, List<Integer> ports, Map<String, Object> supervisorConf) {
    }

    record Address(String host, int port) {
    }

    /**
     * One topology to run.
     *
     * @param monitorDir where the traffic monitor writes, or null for no monitor
     * @param monitorUrl the receiver the monitor's windows go to through Storm's metrics path
     *                   ({@link RecordsConsumer}) instead of files, or null
     * @param durationS  0: placed, not measured
     * @param group      consecutive jobs with the same non-null group run at once
     */
    record Job(String name, Path topology, int workers, int ackers, boolean loadAware, String monitorDir,
               String monitorUrl, double windowS, double warmupS, double durationS, Map<String, Object> conf, Long group) {
    }

    static JobFile read(Path file) throws SpecException {
        String src = file.toString();
        Object doc = Documents.read(file);
        JobSchema.check(doc, JobSchema.load(), src);
        return of(Documents.map(doc, src, ""), src);
    }

    /** The records of a document that passed the schema (so every cast below holds). */
    @SuppressWarnings("unchecked")
    static JobFile of(Map<String, Object> doc, String src) throws SpecException {
        List<Node> nodes = new ArrayList<>();
        int i = 0;
        for (Object o : (List<Object>) doc.get("cluster")) {
            Map<String, Object> n = (Map<String, Object>) o;
            List<Integer> ports = null;
            if (n.get("ports") != null) {
                ports = new ArrayList<>();
                for (Object p : (List<Object>) n.get("ports")) {
                    ports.add(integer(p, 0, src, "cluster[" + i + "].ports"));
                }
            }
            nodes.add(new Node((String) n.get("node"), integer(n.get("slots"), 1, src, "cluster[" + i + "].slots"),
                               (String) n.get("host"), ports,
                               n.get("supervisor_conf") == null ? Map.of() : (Map<String, Object>) n.get("supervisor_conf")));
            i++;
        }
        Address nimbus = null;
        if (doc.get("nimbus") != null) {
            Map<String, Object> at = (Map<String, Object>) doc.get("nimbus");
            nimbus = new Address((String) at.get("host"), integer(at.get("port"), 0, src, "nimbus.port"));
        }
        List<Job> jobs = new ArrayList<>();
        i = 0;
        for (Object o : (List<Object>) doc.get("jobs")) {
            Map<String, Object> j = (Map<String, Object>) o;
            String at = "jobs[" + i++ + "].";
            if (j.get("monitor_url") != null) {
                try {
                    RecordsConsumer.receiverUri(j.get("monitor_url"));
                } catch (IllegalArgumentException e) {
                    throw new SpecException(src, at + "monitor_url", "must be an http:// or https:// URL with a host");
                }
            }
            jobs.add(new Job((String) j.get("name"), Path.of((String) j.get("topology")),
                             integer(j.get("workers"), 1, src, at + "workers"), integer(j.get("ackers"), 0, src, at + "ackers"),
                             Boolean.TRUE.equals(j.get("load_aware")), (String) j.get("monitor_dir"),
                             (String) j.get("monitor_url"),
                             number(j.get("window_s"), 10.0), number(j.get("warmup_s"), 0), number(j.get("duration_s"), 0),
                             j.get("conf") == null ? Map.of() : (Map<String, Object>) j.get("conf"),
                             j.get("group") == null ? null : ((Number) j.get("group")).longValue()));
        }
        return new JobFile(src, (String) doc.get("plan_dir"), number(doc.get("start_timeout_s"), START_TIMEOUT_S), nodes,
                           nimbus, jobs);
    }

    /** ClusterRunner's needs beyond the schema: Nimbus' address and each node's host and ports. */
    void requireTestbed() throws SpecException {
        if (nimbus == null) {
            throw new SpecException(source, "nimbus", "required by the cluster runner");
        }
        for (int i = 0; i < cluster.size(); i++) {
            if (cluster.get(i).host() == null) {
                throw new SpecException(source, "cluster[" + i + "].host", "required by the cluster runner");
            }
            if (cluster.get(i).ports() == null) {
                throw new SpecException(source, "cluster[" + i + "].ports", "required by the cluster runner");
            }
        }
    }

    private static int integer(Object value, int dflt, String src, String field) throws SpecException {
        if (value == null) {
            return dflt;
        }
        if (((Number) value).doubleValue() > Integer.MAX_VALUE) {
            throw new SpecException(src, field, "must be at most " + Integer.MAX_VALUE + ", got " + value);
        }
        return ((Number) value).intValue();
    }

    private static double number(Object value, double dflt) {
        return value == null ? dflt : ((Number) value).doubleValue();
    }
}
