package org.streamplace.storm;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.generated.SubmitOptions;
import org.apache.storm.generated.TopologyInitialStatus;

/** Turns a job into a submitted Storm topology: its spec topology and its checked topology conf. */
final class Submitter {
    private Submitter() {
    }

    /** The topology conf of a job: streamplace's settings, then the job's own {@code conf}, checked against Storm's. */
    static Config conf(JobFile.Job j) throws SpecException {
        Config conf = SpecTopology.conf(j.workers(), j.ackers(), j.loadAware(), j.monitorDir(), j.monitorUrl(), j.windowS());
        if (j.durationS() == 0) {
            idle(conf);
        }
        Object ours = conf.get(Config.TOPOLOGY_METRICS_CONSUMER_REGISTER);
        conf.putAll(j.conf());
        if (ours instanceof List<?> records && conf.get(Config.TOPOLOGY_METRICS_CONSUMER_REGISTER) instanceof List<?> theirs
                && theirs != ours) {   // the job's own consumers beside the monitor's, not instead of it
            List<Object> both = new ArrayList<>(records);
            both.addAll(theirs);
            conf.put(Config.TOPOLOGY_METRICS_CONSUMER_REGISTER, both);
        }
        TopologyConf.check(conf, "topology settings of " + j.name());
        return conf;
    }

    /**
     * Submits the job's topology: active, or inactive when the job is only placed (duration 0):
     * Nimbus assigns an inactive topology and its workers start as usual, but its spouts are
     * never asked for a tuple, so the JVM's CPU stays with Storm's daemons.
     */
    static void submit(Engine engine, JobFile.Job j) throws Exception {
        Spec spec = Spec.read(j.topology());
        SubmitOptions options = new SubmitOptions(
                j.durationS() == 0 ? TopologyInitialStatus.INACTIVE : TopologyInitialStatus.ACTIVE);
        Config conf = conf(j);
        long origin = System.currentTimeMillis();
        if (!spec.phases.isEmpty()) {   // the phases' clock starts now, the same instant for every task
            conf.put(SpecComponents.PHASE_ORIGIN, origin);
        }
        engine.submit(j.name(), conf, SpecTopology.build(spec), options);
        Events.emit("submitted", Map.of("job", j.name(), "t", origin / 1000.0));
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
}
