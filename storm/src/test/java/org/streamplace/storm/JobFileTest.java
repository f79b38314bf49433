package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobFileTest {
    /** A job file as streamplace.storm.run writes one for the embedded runner (two nodes, two jobs). */
    private static final String FULL = """
        {"plan_dir": "/w/plans", "start_timeout_s": 150,
         "cluster": [{"node": "big", "slots": 2}, {"node": "small", "slots": 1}],
         "jobs": [{"name": "a", "topology": "/w/topology-a.json", "workers": 3, "ackers": 1, "load_aware": false,
                   "window_s": 2.5, "monitor_dir": "/w/monitor", "warmup_s": 4, "duration_s": 6,
                   "conf": {"streamplace.seed": 7, "topology.max.spout.pending": 100}, "group": 0},
                  {"name": "b", "topology": "/w/topology-b.json", "workers": 1, "ackers": 0, "load_aware": true,
                   "window_s": 10, "monitor_dir": null, "warmup_s": 0, "duration_s": 0, "conf": {}, "group": null}]}
        """;

    private static Path write(Path dir, String text) throws IOException {
        Path file = dir.resolve("job.json");
        Files.writeString(file, text, StandardCharsets.UTF_8);
        return file;
    }

    /** The one-line message a job file is refused with. */
    private static String refusal(Path dir, String text) throws IOException {
        Path file = write(dir, text);
        return assertThrows(SpecException.class, () -> JobFile.read(file)).getMessage()
            .substring(file.toString().length() + 2);
    }

    private static String withJob(String jobFields) {
        return "{\"plan_dir\": \"/p\", \"cluster\": [], \"jobs\": [{\"name\": \"a\", \"topology\": \"t.json\"" + jobFields + "}]}";
    }

    @Test
    void aFileAsPythonWritesItReadsIntoItsRecords(@TempDir Path tmp) throws Exception {
        JobFile f = JobFile.read(write(tmp, FULL));
        assertEquals("/w/plans", f.planDir());
        assertEquals(150.0, f.startTimeoutS());
        assertEquals(List.of(new JobFile.Node("big", 2, null, null, Map.of()), new JobFile.Node("small", 1, null, null, Map.of())), f.cluster());
        assertNull(f.nimbus());
        JobFile.Job a = f.jobs().get(0);
        assertEquals(new JobFile.Job("a", Path.of("/w/topology-a.json"), 3, 1, false, "/w/monitor", null, 2.5, 4.0, 6.0,
                                     Map.of("streamplace.seed", 7, "topology.max.spout.pending", 100), 0L), a);
        assertEquals(new JobFile.Job("b", Path.of("/w/topology-b.json"), 1, 0, true, null, null, 10.0, 0.0, 0.0, Map.of(), null),
                     f.jobs().get(1));
    }

    @Test
    void optionalFieldsTakeTheirDefaults(@TempDir Path tmp) throws Exception {
        JobFile f = JobFile.read(write(tmp, withJob("")));
        assertEquals(JobFile.START_TIMEOUT_S, f.startTimeoutS());
        assertEquals(new JobFile.Job("a", Path.of("t.json"), 1, 0, false, null, null, 10.0, 0.0, 0.0, Map.of(), null), f.jobs().get(0));
    }

    /** Each optional field the schema gives a {@code default} gets exactly that value in the records. */
    @Test
    @SuppressWarnings("unchecked")
    void theDefaultsAreTheSchemas(@TempDir Path tmp) throws Exception {
        Map<String, Object> schema = JobSchema.load();
        Map<String, Object> top = (Map<String, Object>) schema.get("properties");
        Map<String, Object> jobProps = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) top.get("jobs"))
            .get("items")).get("properties");
        JobFile f = JobFile.read(write(tmp, withJob("")));
        JobFile.Job j = f.jobs().get(0);
        Map<String, Object> got = new java.util.HashMap<>();
        got.put("workers", j.workers());
        got.put("ackers", j.ackers());
        got.put("load_aware", j.loadAware());
        got.put("window_s", j.windowS());
        got.put("monitor_dir", j.monitorDir());
        got.put("monitor_url", j.monitorUrl());
        got.put("warmup_s", j.warmupS());
        got.put("duration_s", j.durationS());
        got.put("conf", j.conf());
        got.put("group", j.group());
        int checked = 0;
        for (Map.Entry<String, Object> p : jobProps.entrySet()) {
            Map<String, Object> rule = (Map<String, Object>) p.getValue();
            if (rule.containsKey("default")) {
                assertEquals(comparable(rule.get("default")), comparable(got.get(p.getKey())), p.getKey());
                checked++;
            }
        }
        assertEquals(got.size(), checked);   // every optional job field has its default in the schema
        assertEquals(comparable(((Map<String, Object>) top.get("start_timeout_s")).get("default")), f.startTimeoutS());
    }

    @Test
    void aNodeCarriesItsSupervisorsSettings(@TempDir Path tmp) throws Exception {
        String doc = "{\"plan_dir\": \"/p\", \"jobs\": [],"
                     + " \"cluster\": [{\"node\": \"x\", \"slots\": 1, \"supervisor_conf\": {\"supervisor.cpu.capacity\": 250.0}}]}";
        assertEquals(Map.of("supervisor.cpu.capacity", 250.0), JobFile.read(write(tmp, doc)).cluster().get(0).supervisorConf());
        assertEquals("cluster[0].supervisor_conf: must be an object, got 3",
                     refusal(tmp, doc.replace("{\"supervisor.cpu.capacity\": 250.0}", "3")));
    }

    private static Object comparable(Object v) {
        return v instanceof Number n ? (Object) n.doubleValue() : v;
    }

    @Test
    void aMissingFieldIsRefusedByName(@TempDir Path tmp) throws Exception {
        assertEquals("jobs[0].topology: required",
                     refusal(tmp, "{\"plan_dir\": \"/p\", \"cluster\": [], \"jobs\": [{\"name\": \"a\"}]}"));
        assertEquals("plan_dir: required", refusal(tmp, "{\"cluster\": [], \"jobs\": []}"));
        assertEquals("cluster[1].slots: required",
                     refusal(tmp, "{\"plan_dir\": \"/p\", \"cluster\": [{\"node\": \"x\", \"slots\": 1}, {\"node\": \"y\"}], \"jobs\": []}"));
    }

    @Test
    void aMistypedFieldIsRefusedByNameWithItsValue(@TempDir Path tmp) throws Exception {
        assertEquals("jobs[0].duration_s: must be a number, got \"60\"", refusal(tmp, withJob(", \"duration_s\": \"60\"")));
        assertEquals("jobs[0].workers: must be an integer, got 2.5", refusal(tmp, withJob(", \"workers\": 2.5")));
        assertEquals("jobs[0].load_aware: must be a boolean, got \"yes\"", refusal(tmp, withJob(", \"load_aware\": \"yes\"")));
        assertEquals("jobs[0].group: must be an integer or null, got \"g\"", refusal(tmp, withJob(", \"group\": \"g\"")));
        assertEquals("jobs[0].conf: must be an object, got [1,2]", refusal(tmp, withJob(", \"conf\": [1, 2]")));
        assertEquals("jobs: must be a list, got {}", refusal(tmp, "{\"plan_dir\": \"/p\", \"cluster\": [], \"jobs\": {}}"));
        assertEquals("must be an object, got [1]", refusal(tmp, "[1]"));
    }

    @Test
    void valuesOutOfRangeAreRefused(@TempDir Path tmp) throws Exception {
        assertEquals("jobs[0].warmup_s: must be >= 0, got -1", refusal(tmp, withJob(", \"warmup_s\": -1")));
        assertEquals("jobs[0].window_s: must be > 0, got 0", refusal(tmp, withJob(", \"window_s\": 0")));
        assertEquals("jobs[0].workers: must be >= 1, got 0", refusal(tmp, withJob(", \"workers\": 0")));
        assertEquals("jobs[0].name: must not be empty",
                     refusal(tmp, "{\"plan_dir\": \"/p\", \"cluster\": [], \"jobs\": [{\"name\": \"\", \"topology\": \"t\"}]}"));
    }

    @Test
    void anUnknownFieldIsRefusedSoATypoDoesNotPassSilently(@TempDir Path tmp) throws Exception {
        String msg = refusal(tmp, withJob(", \"duraton_s\": 60"));
        assertTrue(msg.startsWith("jobs[0].duraton_s: unknown field (known: name, topology, workers,"), msg);
    }

    @Test
    void theClusterRunnerNeedsTheTestbedFields(@TempDir Path tmp) throws Exception {
        JobFile embedded = JobFile.read(write(tmp, FULL));
        assertEquals("job.json: nimbus: required by the cluster runner",
                     assertThrows(SpecException.class, embedded::requireTestbed).getMessage().substring(tmp.toString().length() + 1));
        JobFile testbed = JobFile.read(write(tmp, """
            {"plan_dir": "/p", "nimbus": {"host": "10.0.0.1", "port": 6627}, "storm_jar": "/h.jar", "jobs": [],
             "cluster": [{"node": "big", "host": "10.0.0.2", "slots": 2, "ports": [6701, 6700]}, {"node": "s", "slots": 1}]}
            """));
        assertEquals(new JobFile.Address("10.0.0.1", 6627), testbed.nimbus());
        assertEquals(List.of(6701, 6700), testbed.cluster().get(0).ports());
        assertTrue(assertThrows(SpecException.class, testbed::requireTestbed).getMessage()
                       .endsWith("job.json: cluster[1].host: required by the cluster runner"));
    }

    @Test
    void theCheckerRefusesASchemaKeywordItDoesNotImplement() {
        Map<String, Object> schema = Map.of("type", "string", "enum", List.of("a"));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> JobSchema.check("b", schema, "f"));
        assertTrue(e.getMessage().contains("keyword enum"), e.getMessage());
    }

    @Test
    void aBadJobFileStopsTheRunnerWithOneLineAndExit2BeforeAnyClusterStarts(@TempDir Path tmp) throws Exception {
        Path file = write(tmp, withJob(", \"ackers\": \"two\""));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = JobRunner.run("LocalRunner", new String[] {file.toString()},
                                 job -> fail("the cluster must not start for a bad job file"),
                                 new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(2, code);
        assertEquals("streamplace: " + file + ": jobs[0].ackers: must be an integer, got \"two\"\n",
                     err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aJobsStormSettingsAreCheckedBeforeAnyClusterStarts(@TempDir Path tmp) throws Exception {
        Path file = write(tmp, withJob(", \"conf\": {\"topology.wokers\": 2}"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = JobRunner.run("LocalRunner", new String[] {file.toString()},
                                 job -> fail("the cluster must not start"), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(2, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("streamplace: topology settings of a: topology.wokers: not a Storm setting"),
                   err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void consecutiveJobsOfOneGroupRunTogether() {
        JobFile.Job a = job("a", 1L);
        JobFile.Job b = job("b", 1L);
        JobFile.Job c = job("c", null);
        JobFile.Job d = job("d", null);
        JobFile.Job e = job("e", 2L);
        JobFile.Job f = job("f", 1L);
        assertEquals(List.of(List.of(a, b), List.of(c), List.of(d), List.of(e), List.of(f)),
                     JobRunner.groups(List.of(a, b, c, d, e, f)));
    }

    private static JobFile.Job job(String name, Long group) {
        return new JobFile.Job(name, Path.of("t"), 1, 0, false, null, null, 10, 0, 0, Map.of(), group);
    }
}
