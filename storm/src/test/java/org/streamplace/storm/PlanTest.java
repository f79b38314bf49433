package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PlanTest {
    @Test
    void readsTheScheduleOutputIgnoringOtherKeys() throws Exception {
        Plan plan = Plan.parse("""
            {"scheduler": "metis", "status": "heuristic", "inter_node_cost": 3.0,
             "placement": {"a[0]": {"node": "n1", "worker": 1}, "a[1]": {"node": "n2"}, "b[0]": "n1"}}""", "p.json");
        assertEquals(Map.of("a[0]", new Plan.Target("n1", 1), "a[1]", new Plan.Target("n2", 0),
                            "b[0]", new Plan.Target("n1", 0)), plan.targets());
    }

    /** The plan `streamplace export --to storm-plan` writes (tests/test_export.py keeps this file in step). */
    @Test
    void readsThePlanStreamplaceExports() throws Exception {
        String text;
        try (var in = PlanTest.class.getResourceAsStream("/export/pipe.json")) {
            text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        assertEquals(Map.of("a[0]", new Plan.Target("n1", 0), "a[1]", new Plan.Target("n1", 1),
                            "b[0]", new Plan.Target("n1", 0), "b[1]", new Plan.Target("n1", 1),
                            "c[0]", new Plan.Target("n2", 0)), Plan.parse(text, "pipe.json").targets());
    }

    @Test
    void aBareLabelMappingIsAPlanToo() throws Exception {
        assertEquals(Map.of("x[10]", new Plan.Target("n", 2)), Plan.parse("{\"x[10]\": {\"node\": \"n\", \"worker\": 2}}", "p").targets());
    }

    @Test
    void badPlansNameFileAndField() {
        assertEquals("p.json: placement.a[0].worker: must be an integer >= 0, got -1", assertThrows(SpecException.class,
            () -> Plan.parse("{\"placement\": {\"a[0]\": {\"node\": \"n\", \"worker\": -1}}}", "p.json")).getMessage());
        assertEquals("p.json: placement.a[00]: not a task label op[i]", assertThrows(SpecException.class,
            () -> Plan.parse("{\"placement\": {\"a[00]\": \"n\"}}", "p.json")).getMessage());
        assertEquals("p.json: placement.a[0].node: must be a non-empty string", assertThrows(SpecException.class,
            () -> Plan.parse("{\"placement\": {\"a[0]\": {\"worker\": 1}}}", "p.json")).getMessage());
        assertEquals("p.json: placement: the plan places no task", assertThrows(SpecException.class,
            () -> Plan.parse("{\"placement\": {}}", "p.json")).getMessage());
        assertThrows(SpecException.class, () -> Plan.parse("{\"placement\": ", "p.json"));
        assertThrows(SpecException.class, () -> Plan.parse("[1, 2]", "p.json"));
    }
}
