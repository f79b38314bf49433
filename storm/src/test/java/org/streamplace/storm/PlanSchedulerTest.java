package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.EvenScheduler;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The plugin on scheduler inputs built as Nimbus builds them (no cluster needed). */
class PlanSchedulerTest {
    static final String PLAN = """
        {"placement": {
          "spout[0]": {"node": "a", "worker": 0}, "spout[1]": {"node": "b", "worker": 0},
          "split[0]": {"node": "a", "worker": 1}, "split[1]": {"node": "b", "worker": 0}, "split[2]": {"node": "b", "worker": 1},
          "count[0]": {"node": "a", "worker": 0}, "count[1]": {"node": "b", "worker": 1}}}""";

    @TempDir
    Path dir;
    Map<String, SupervisorDetails> sups;

    @BeforeEach
    void setUp() {
        sups = Fixtures.supervisors(Map.of("a", 2, "b", 3));
    }

    private Cluster round(PlanScheduler s, Cluster previous, TopologyDetails... tops) {
        Cluster c = Fixtures.cluster(sups, previous == null ? Map.of() : previous.getAssignments(), tops);
        s.schedule(new org.apache.storm.scheduler.Topologies(tops), c);
        return c;
    }

    /** A round after b's supervisor died, the topology's running assignment being {@code assignment}. */
    private Cluster roundAfterBDied(PlanScheduler s, TopologyDetails td, Map<ExecutorDetails, WorkerSlot> assignment) {
        sups = new TreeMap<>(Map.of("sup-a", sups.get("sup-a")));
        Cluster c = Fixtures.cluster(sups, Map.of(td.getId(),
            new org.apache.storm.scheduler.SchedulerAssignmentImpl(td.getId(), assignment, null, null)), td);
        s.schedule(new org.apache.storm.scheduler.Topologies(td), c);
        return c;
    }

    /** The word-count topology (4 workers, no ackers) with {@link #PLAN} written as its plan. */
    private TopologyDetails wordcountWithPlan() throws Exception {
        Fixtures.writePlan(dir, "wc", PLAN);
        return Fixtures.topology(Fixtures.WORDCOUNT, "wc-1-1", 4, 0);
    }

    @Test
    void appliesThePlanExactlyWithWorkersAsAscendingPorts() throws Exception {
        TopologyDetails td = wordcountWithPlan();
        Cluster c = round(Fixtures.scheduler(dir), null, td);
        assertEquals(Map.of("spout[0]", "a:6700", "spout[1]", "b:6700", "split[0]", "a:6701", "split[1]", "b:6700",
                            "split[2]", "b:6701", "count[0]", "a:6700", "count[1]", "b:6701"), Fixtures.placed(c, td));
        assertTrue(c.getStatus(td.getId()).startsWith("streamplace: plan applied: 7 executors on 4 workers"), c.getStatus(td.getId()));
        assertTrue(!c.needsScheduling(td));
    }

    @Test
    void ackersAreDealtOverThePlansWorkersInterleavedByNode() throws Exception {
        Fixtures.writePlan(dir, "wc", PLAN);
        TopologyDetails td = Fixtures.topology(Fixtures.WORDCOUNT, "wc-1-1", 4, 5);
        Map<String, String> placed = Fixtures.placed(round(Fixtures.scheduler(dir), null, td), td);
        // __acker tasks 1-5 over the first worker of a and of b, then the second of each, then a's first again
        assertEquals(List.of("a:6700", "b:6700", "a:6701", "b:6701", "a:6700"),
            List.of(placed.get("__acker#1"), placed.get("__acker#2"), placed.get("__acker#3"), placed.get("__acker#4"),
                    placed.get("__acker#5")));
        assertEquals("a:6701", placed.get("split[0]"));
    }

    @Test
    void workersInterleaveByNodeInTheOrderOfTheirIndexWithinEach() {
        // a's workers 0, 2, 7 and b's 5: a's lowest, b's, then a's next two (sparse indexes rank as given)
        assertEquals(List.of(new Plan.Target("a", 0), new Plan.Target("b", 5), new Plan.Target("a", 2), new Plan.Target("a", 7)),
            PlanAssignment.interleaved(List.of(new Plan.Target("a", 7), new Plan.Target("b", 5), new Plan.Target("a", 0),
                                               new Plan.Target("a", 2))));
    }

    @Test
    void withoutAPlanStormsEvenSchedulerPlacesTheTopology() throws Exception {
        TopologyDetails td = Fixtures.topology(Fixtures.WORDCOUNT, "wc-1-1", 3, 0);
        Cluster c = round(Fixtures.scheduler(dir), null, td);
        Cluster even = Fixtures.cluster(sups, Map.of(), td);
        EvenScheduler.scheduleTopologiesEvenly(new org.apache.storm.scheduler.Topologies(td), even);
        assertEquals(Fixtures.placed(even, td), Fixtures.placed(c, td));
        assertEquals(7, Fixtures.placed(c, td).size());
        assertTrue(c.getStatus(td.getId()).contains("no plan"), c.getStatus(td.getId()));
    }

    private void assertFallback(String plan, String reason) throws Exception {
        Fixtures.writePlan(dir, "wc", plan);
        TopologyDetails td = Fixtures.topology(Fixtures.WORDCOUNT, "wc-1-1", 3, 0);
        Cluster c = round(Fixtures.scheduler(dir), null, td);
        Cluster even = Fixtures.cluster(sups, Map.of(), td);
        EvenScheduler.scheduleTopologiesEvenly(new org.apache.storm.scheduler.Topologies(td), even);
        assertEquals(Fixtures.placed(even, td), Fixtures.placed(c, td), "falls back to the even placement, whole");
        String status = c.getStatus(td.getId());
        assertTrue(status.startsWith("streamplace: plan rejected: ") && status.contains(reason) && status.endsWith("; EvenScheduler"), status);
    }

    static Stream<Arguments> misfits() {
        return Stream.of(
            Arguments.of("unknown node", PLAN.replace("\"node\": \"b\", \"worker\": 1}}", "\"node\": \"zz\", \"worker\": 1}}"),
                         "unknown node zz"),
            Arguments.of("missing task", PLAN.replace("\"count[1]\": {", "\"count[7]\": {"), "task count[1] is not in the plan"),
            Arguments.of("extra task", PLAN.replace("}}}", "}, \"sink[0]\": \"a\"}}"),
                         "1 task(s) the topology does not have, first sink[0]"),
            Arguments.of("more workers than ports", PLAN.replace("\"split[0]\": {\"node\": \"a\", \"worker\": 1}",
                                                                 "\"split[0]\": {\"node\": \"a\", \"worker\": 2}"),
                         "worker 2 of node a, which has 2 assignable port(s)"),
            Arguments.of("broken file", "{\"placement\": [", "not valid YAML/JSON"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("misfits")
    void aPlanThatDoesNotFitFallsBackWholeWithItsReason(String what, String plan, String reason) throws Exception {
        assertFallback(plan, reason);
    }

    @Test
    void occupiedSlotFallsBackWithTheOtherTopologyNamed() throws Exception {
        TopologyDetails td = wordcountWithPlan();
        TopologyDetails other = Fixtures.topology(Fixtures.WORDCOUNT.replace("name: wc", "name: other"), "other-2-2", 1, 0);
        Cluster c = Fixtures.cluster(sups, Map.of(), td, other);
        c.assign(new WorkerSlot("sup-b", 6701), other.getId(), new ArrayList<>(other.getExecutors()));
        Fixtures.scheduler(dir).schedule(new org.apache.storm.scheduler.Topologies(td, other), c);
        String status = c.getStatus(td.getId());
        assertTrue(status.contains("worker 1 of node b (port 6701) is used by topology other-2-2"), status);
        assertTrue(Fixtures.placed(c, td).values().stream().noneMatch("b:6701"::equals));
        assertEquals(7, Fixtures.placed(c, td).size());
    }

    @Test
    void twoTopologiesOneWithAPlanOneWithoutEachGetTheirs() throws Exception {
        TopologyDetails td = wordcountWithPlan();
        TopologyDetails other = Fixtures.topology(Fixtures.WORDCOUNT.replace("name: wc", "name: other"), "other-2-2", 1, 0);
        Cluster c = round(Fixtures.scheduler(dir), null, td, other);
        assertEquals("a:6700", Fixtures.placed(c, td).get("spout[0]"));
        assertEquals(1, new java.util.HashSet<>(Fixtures.placed(c, other).values()).size());
        assertEquals("b:6702", Fixtures.placed(c, other).get("spout[0]"), "the one free slot left after the plan");
    }

    @Test
    void aChangedPlanIsReappliedAndAnUnchangedOneLeftAlone() throws Exception {
        TopologyDetails td = wordcountWithPlan();
        PlanScheduler s = Fixtures.scheduler(dir);
        Cluster first = round(s, null, td);
        Cluster same = round(s, first, td);
        assertEquals(first.getAssignmentById(td.getId()).getExecutorToSlot(), same.getAssignmentById(td.getId()).getExecutorToSlot());
        Path file = dir.resolve("wc.json");
        Files.writeString(file, PLAN.replace("\"count[0]\": {\"node\": \"a\", \"worker\": 0}", "\"count[0]\": {\"node\": \"b\", \"worker\": 2}"));
        Files.setLastModifiedTime(file, FileTime.fromMillis(Files.getLastModifiedTime(file).toMillis() + 5000));
        Cluster moved = round(s, same, td);
        assertEquals("b:6702", Fixtures.placed(moved, td).get("count[0]"));
        assertEquals("a:6700", Fixtures.placed(moved, td).get("spout[0]"));
    }

    @Test
    void aDeadSupervisorIsNamedAndARunningAssignmentLeftShortWithNoFreeLiveSlotGoesWhole() throws Exception {
        // b's supervisor died and Nimbus took b's executors off the assignment: keeping what is left
        // would leave them unassigned (the testbed's job stalled so), and a has no free slot for them: the
        // topology goes whole to a's slots
        TopologyDetails td = wordcountWithPlan();
        PlanScheduler s = Fixtures.scheduler(dir);
        Cluster first = round(s, null, td);
        Map<ExecutorDetails, WorkerSlot> before = new HashMap<>(first.getAssignmentById(td.getId()).getExecutorToSlot());
        Map<ExecutorDetails, WorkerSlot> onA = new HashMap<>();
        before.forEach((e, slot) -> {
            if (slot.getNodeId().equals("sup-a")) {
                onA.put(e, slot);
            }
        });
        Cluster c = roundAfterBDied(s, td, onA);
        String status = c.getStatus(td.getId());
        assertTrue(status.contains("the supervisor of node b is not alive"), status);
        assertTrue(status.endsWith("; " + (before.size() - onA.size()) + " executor(s) without a running worker and no free slot "
                                   + "for them: the whole topology to the EvenScheduler on the live nodes"), status);
        assertEquals(td.getExecutors(), c.getAssignmentById(td.getId()).getExecutorToSlot().keySet(), "every executor assigned");
    }

    /** b's executors, count[1] (task 2), split[1] (4), split[2] (5), spout[1] (7), dealt by the EvenScheduler over a's free 6702, 6703. */
    static final Map<String, String> B_ON_A_FREE_SLOTS = Map.of("count[1]", "a:6702", "split[1]", "a:6703", "split[2]", "a:6702",
                                                                "spout[1]", "a:6703");

    /** {@link #PLAN}'s placement of a's executors, which go on running. */
    static final Map<String, String> A_KEPT = Map.of("spout[0]", "a:6700", "count[0]", "a:6700", "split[0]", "a:6701");

    private static Map<String, String> merged(Map<String, String> x, Map<String, String> y) {
        Map<String, String> out = new HashMap<>(x);
        out.putAll(y);
        return out;
    }

    @Test
    void executorsNimbusTookOffADeadNodeArePlacedOnFreeLiveSlotsAndTheRestKeepsRunning() throws Exception {
        sups = Fixtures.supervisors(Map.of("a", 4, "b", 3));
        TopologyDetails td = wordcountWithPlan();
        PlanScheduler s = Fixtures.scheduler(dir);
        Cluster first = round(s, null, td);
        Map<ExecutorDetails, WorkerSlot> onA = new HashMap<>();
        first.getAssignmentById(td.getId()).getExecutorToSlot().forEach((e, slot) -> {
            if (slot.getNodeId().equals("sup-a")) {
                onA.put(e, slot);
            }
        });
        Cluster c = roundAfterBDied(s, td, onA);
        assertEquals(merged(A_KEPT, B_ON_A_FREE_SLOTS), Fixtures.placed(c, td));
        String status = c.getStatus(td.getId());
        assertTrue(status.endsWith("; 4 executor(s) without a running worker placed by the EvenScheduler on free slots of the live "
                                   + "nodes, the other 2 worker(s) kept"), status);
    }

    /** Rounds at {@code ms} times of a scheduler whose config holds Storm's defaults (session timeout 20 s, supervisor period 3 s). */
    private PlanScheduler clocked(long[] now) {
        PlanScheduler s = new PlanScheduler(() -> now[0]);
        s.prepare(Fixtures.stormConf(Map.of(PlanScheduler.PLAN_DIR, dir.toString())), new org.apache.storm.metric.StormMetricsRegistry());
        return s;
    }

    @ParameterizedTest(name = "b last seen alive {0} ms after the plan was applied")
    @org.junit.jupiter.params.provider.ValueSource(longs = {0, 22_000})
    void workersOfASupervisorThatDiedBeforeItCouldStartThemAreReplacedOnTheLiveNodes(long lastAlive) throws Exception {
        // Nimbus still counts their executors alive (nimbus.task.launch.secs), but b may never have started
        // them: it was alive less than 20 s (ZooKeeper session) + 3 s (supervisor period) after the plan
        sups = Fixtures.supervisors(Map.of("a", 4, "b", 3));
        TopologyDetails td = wordcountWithPlan();
        long[] now = {0};
        PlanScheduler s = clocked(now);
        Cluster c = round(s, null, td);
        now[0] = lastAlive;
        c = round(s, c, td);
        now[0] = lastAlive + 2_000;
        c = roundAfterBDied(s, td, new HashMap<>(c.getAssignmentById(td.getId()).getExecutorToSlot()));
        assertEquals(merged(A_KEPT, B_ON_A_FREE_SLOTS), Fixtures.placed(c, td));
        String status = c.getStatus(td.getId());
        assertTrue(status.endsWith("; 4 executor(s) without a running worker (2 worker(s) of a supervisor that is gone, not started) "
                                   + "placed by the EvenScheduler on free slots of the live nodes, the other 2 worker(s) kept"), status);
    }

    @Test
    void workersThatStartedBeforeTheirSupervisorDiedAreKeptRunning() throws Exception {
        // b alive 23 s after the plan: it had the plan 20 + 3 s before Nimbus could have noticed it gone
        sups = Fixtures.supervisors(Map.of("a", 4, "b", 3));
        TopologyDetails td = wordcountWithPlan();
        long[] now = {0};
        PlanScheduler s = clocked(now);
        Cluster c = round(s, null, td);
        Map<String, String> applied = Fixtures.placed(c, td);
        now[0] = 23_000;
        c = round(s, c, td);
        now[0] = 25_000;
        c = roundAfterBDied(s, td, new HashMap<>(c.getAssignmentById(td.getId()).getExecutorToSlot()));
        assertEquals(applied, Fixtures.placed(c, td), "every worker kept where it runs, b's too");
        String status = c.getStatus(td.getId());
        assertTrue(status.endsWith("; keeping the current assignment; 2 worker(s) of a supervisor that is gone kept (started before it "
                                   + "died)"), status);
    }

    @Test
    void aPlanThatDoesNotFitKeepsARunningAssignmentThatRunsWhole() throws Exception {
        TopologyDetails td = wordcountWithPlan();
        PlanScheduler s = Fixtures.scheduler(dir);
        Cluster first = round(s, null, td);
        Fixtures.writePlan(dir, "wc", PLAN.replace("\"node\": \"b\"", "\"node\": \"zz\""));
        Files.setLastModifiedTime(dir.resolve("wc.json"), FileTime.fromMillis(System.currentTimeMillis() + 5000));
        Cluster c = round(s, first, td);
        assertTrue(c.getStatus(td.getId()).endsWith("keeping the current assignment"), c.getStatus(td.getId()));
        assertEquals(first.getAssignmentById(td.getId()).getExecutorToSlot(), c.getAssignmentById(td.getId()).getExecutorToSlot());
    }

    @Test
    void eachRoundWritesWhatStormRunsInThePlansOwnFormForAProcessBesideNimbus() throws Exception {
        TopologyDetails td = wordcountWithPlan();
        PlanScheduler s = Fixtures.scheduler(dir);
        round(s, null, td);
        String written = Files.readString(dir.resolve("assigned").resolve("wc.json"));
        Map<?, ?> doc = (Map<?, ?>) Documents.parse(written, "assigned/wc.json");
        // the plan read back: every label at the plan's node and worker (the plan's PLAN, by hand)
        assertEquals(Plan.parse(PLAN, "plan").targets(), Plan.fromDocument(doc.get("assignment"), "assigned").targets());
        assertEquals(List.of("a", "b"), doc.get("alive_nodes"));
        assertEquals(List.of(), doc.get("dead_nodes"));
        assertEquals(10.0, ((Number) doc.get("round_every_s")).doubleValue(), "Storm's default nimbus.monitor.freq.secs");
        assertEquals(Files.getLastModifiedTime(dir.resolve("wc.json")).toMillis(), ((Number) doc.get("plan_modified_ms")).longValue());
        assertTrue(String.valueOf(doc.get("status")).startsWith("streamplace: plan applied"), String.valueOf(doc.get("status")));
        try (Stream<Path> left = Files.list(dir.resolve("assigned"))) {
            assertEquals(List.of("wc.json"), left.map(f -> f.getFileName().toString()).toList(), "no temporary file left");
        }
    }

    @Test
    void aDeadNodeIsListedInWhatStormRuns() throws Exception {
        TopologyDetails td = wordcountWithPlan();
        PlanScheduler s = Fixtures.scheduler(dir);
        round(s, null, td);
        sups = new TreeMap<>(Map.of("sup-a", sups.get("sup-a")));
        round(s, null, td);
        Map<?, ?> doc = (Map<?, ?>) Documents.parse(Files.readString(dir.resolve("assigned").resolve("wc.json")), "assigned");
        assertEquals(List.of("a"), doc.get("alive_nodes"));
        assertEquals(List.of("b"), doc.get("dead_nodes"));
    }

    @Test
    void aDeadSupervisorsUnstartedWorkersWithNoFreeLiveSlotSendTheWholeTopologyToTheLiveNodes() throws Exception {
        // the plan was applied, then b's supervisor died (during the move): b's executors do not run
        TopologyDetails td = wordcountWithPlan();
        PlanScheduler s = Fixtures.scheduler(dir);
        Cluster first = round(s, null, td);
        Map<ExecutorDetails, WorkerSlot> applied = new HashMap<>(first.getAssignmentById(td.getId()).getExecutorToSlot());
        assertTrue(applied.values().stream().anyMatch(slot -> slot.getNodeId().equals("sup-b")));
        Cluster c = roundAfterBDied(s, td, applied);
        String status = c.getStatus(td.getId());
        assertTrue(status.contains("the supervisor of node b is not alive"), status);
        assertTrue(status.endsWith("; 4 executor(s) without a running worker (2 worker(s) of a supervisor that is gone, not started) "
                                   + "and no free slot for them: the whole topology to the EvenScheduler on the live nodes"), status);
        Map<ExecutorDetails, WorkerSlot> now = c.getAssignmentById(td.getId()).getExecutorToSlot();
        assertEquals(td.getExecutors(), now.keySet(), "every executor assigned");
        assertTrue(now.values().stream().allMatch(slot -> slot.getNodeId().equals("sup-a")), now.toString());
    }
}

