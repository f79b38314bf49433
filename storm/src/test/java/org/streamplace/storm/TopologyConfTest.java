package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.junit.jupiter.api.Test;

/** The check of a job's topology settings against Storm's own keys and validators. */
class TopologyConfTest {
    private static Config base() {
        return SpecTopology.conf(2, 0, false, "/tmp/monitor", null, 10);
    }

    @Test
    void stormsOwnSettingsAndStreamplacesPass() {
        Config conf = base();
        conf.put("topology.bolt.wait.progressive.level2.count", 0);
        conf.put("topology.executor.receive.buffer.size", 1024);
        conf.put("streamplace.seed", 3);
        assertDoesNotThrow(() -> TopologyConf.check(conf, "job"));
    }

    /** Through Storm's metrics path: the consumer registered once with the receiver's URL, no directory. */
    @Test
    @SuppressWarnings("unchecked")
    void theMonitorViaMetricsRegistersTheRecordsConsumer() {
        Config conf = SpecTopology.conf(2, 0, false, null, "http://10.0.0.1:7071/records", 10);
        List<Map<String, Object>> consumers =
            (List<Map<String, Object>>) conf.get(Config.TOPOLOGY_METRICS_CONSUMER_REGISTER);
        assertEquals(1, consumers.size());
        assertEquals(RecordsConsumer.class.getName(), consumers.get(0).get("class"));
        assertEquals("http://10.0.0.1:7071/records", consumers.get(0).get("argument"));
        assertEquals(1L, ((Number) consumers.get(0).get("parallelism.hint")).longValue());
        assertEquals(true, conf.get(TrafficMonitor.VIA_METRICS));
        assertEquals(null, conf.get(TrafficMonitor.DIR));
        assertEquals(List.of(TrafficMonitor.class.getName()), conf.get(Config.TOPOLOGY_AUTO_TASK_HOOKS));
        assertDoesNotThrow(() -> TopologyConf.check(conf, "job"));
    }

    /** A job that registers metrics consumers of its own keeps the monitor's beside them. */
    @Test
    @SuppressWarnings("unchecked")
    void aJobsOwnMetricsConsumersJoinTheMonitorsInsteadOfReplacingIt() throws Exception {
        String logging = "org.apache.storm.metric.LoggingMetricsConsumer";
        Map<String, Object> own = Map.of(Config.TOPOLOGY_METRICS_CONSUMER_REGISTER,
                                         List.of(Map.of("class", logging, "parallelism.hint", 1)));
        JobFile.Job job = new JobFile.Job("a", Path.of("t"), 1, 0, false, null, "http://h:1/records", 10, 0, 5, own, null);
        List<Map<String, Object>> consumers = (List<Map<String, Object>>) Submitter.conf(job).get(Config.TOPOLOGY_METRICS_CONSUMER_REGISTER);
        assertEquals(List.of(RecordsConsumer.class.getName(), logging), consumers.stream().map(c -> c.get("class")).toList());
    }

    @Test
    void aMisspeltKeyIsNamedWithTheNearestStormSetting() {
        Config conf = base();
        conf.put("topology.bolt.wait.progresive.level2.count", 0);
        SpecException e = assertThrows(SpecException.class, () -> TopologyConf.check(conf, "job"));
        assertEquals("job: topology.bolt.wait.progresive.level2.count: not a Storm setting "
                     + "(did you mean topology.bolt.wait.progressive.level2.count?)", e.getMessage());
    }

    @Test
    void aKeyFarFromEveryStormSettingGetsNoHint() {
        Config conf = base();
        conf.put("my.own.setting", 1);
        SpecException e = assertThrows(SpecException.class, () -> TopologyConf.check(conf, "job"));
        assertEquals("job: my.own.setting: not a Storm setting", e.getMessage());
    }

    @Test
    void aValueOfTheWrongTypeIsRejectedByStormsValidator() {
        Config conf = base();
        conf.put(Config.TOPOLOGY_EXECUTOR_RECEIVE_BUFFER_SIZE, "large");
        SpecException e = assertThrows(SpecException.class, () -> TopologyConf.check(conf, "job"));
        assertEquals("job: topology.executor.receive.buffer.size: Storm rejects it: must be a Positive Number", e.getMessage());
    }

    @Test
    void editDistance() {
        assertEquals(0, TopologyConf.distance("abc", "abc"));
        assertEquals(1, TopologyConf.distance("progressive", "progresive"));
        assertEquals(3, TopologyConf.distance("kitten", "sitting"));
        assertEquals(4, TopologyConf.distance("", "abcd"));
    }
}
