package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A spec's phases: each a whole spec with the changes so far, and the clock that switches a task between them. */
class PhasesTest {
    private static final String SHIFT = """
        name: shift
        operators:
          - {name: spout, parallelism: 2, source_rate: 1000, tuple_bytes: 50}
          - {name: count, parallelism: 4, cpu_per_tuple: 0.0001}
        streams:
          - {from: spout, to: count, grouping: fields, key: k}
        phases:
          - {at: 60, streams: [{from: spout, to: count, key_distribution: zipf, zipf_s: 1.5}]}
          - {at: 120, operators: [{name: spout, source_rate: 3000}, {name: count, cpu_per_tuple: 0.0002}]}
        """;

    @Test
    void eachPhaseIsTheSpecWithEveryChangeSoFar() throws Exception {
        Spec spec = Fixtures.spec(SHIFT);
        assertEquals("uniform", spec.streams.get(0).keyDistribution());
        assertEquals(2, spec.phases.size());
        Spec zipf = spec.phases.get(0).spec();
        assertEquals(60.0, spec.phases.get(0).at());
        assertEquals("zipf", zipf.streams.get(0).keyDistribution());
        assertEquals(1.5, zipf.streams.get(0).zipfS());
        assertEquals(1000.0, zipf.operator("spout").sourceRate());
        Spec busy = spec.phases.get(1).spec();
        assertEquals("zipf", busy.streams.get(0).keyDistribution());   // the first phase's change stays
        assertEquals(3000.0, busy.operator("spout").sourceRate());
        assertEquals(0.0002, busy.operator("count").cpuPerTuple());
        assertEquals(50.0, busy.operator("spout").tupleBytes());        // what no phase names is as declared
    }

    @Test
    void everyShapeDeclaresTheSameFields() throws Exception {
        SpecComponents.Phased phased = SpecComponents.Phased.of(Fixtures.spec(SHIFT), "spout");
        assertArrayEquals(new double[] {0, 60, 120}, phased.atSeconds());
        for (SpecComponents.Shape shape : phased.shapes()) {
            assertEquals(phased.first().fields(), shape.fields());
        }
    }

    @Test
    void theClockSwitchesOnceAtEachStartAndSkipsAPhaseItSlept() {
        SpecComponents.PhaseClock clock = new SpecComponents.PhaseClock(new double[] {0, 60, 120}, 1_000_000);
        assertEquals(-1, clock.advance(1_000_000));   // a task starts in the first phase
        assertEquals(-1, clock.advance(1_059_999));
        assertEquals(1, clock.advance(1_060_000));
        assertEquals(-1, clock.advance(1_060_001));
        assertTrue(clock.pending());
        assertEquals(2, clock.advance(1_500_000));
        assertFalse(clock.pending());
        SpecComponents.PhaseClock late = new SpecComponents.PhaseClock(new double[] {0, 60, 120}, 1_000_000);
        assertEquals(2, late.advance(1_200_000));   // a task that starts after two phases began is in the last
    }

    private static String refused(String phases) {
        String yaml = SHIFT.substring(0, SHIFT.indexOf("phases:")) + phases;
        return assertThrows(SpecException.class, () -> Fixtures.spec(yaml)).getMessage();
    }

    @Test
    void badPhasesAreRefusedByField() {
        assertEquals("test: phases[0].at: must be a number of seconds > 0.0, got 0",
                     refused("phases: [{at: 0, operators: [{name: spout, source_rate: 1}]}]"));
        assertEquals("test: phases[1].at: must be a number of seconds > 60.0, got 30",
                     refused("phases: [{at: 60, operators: [{name: spout, source_rate: 1}]}, "
                             + "{at: 30, operators: [{name: spout, source_rate: 2}]}]"));
        assertEquals("test: phases[0].operators[0]: names no name of the topology",
                     refused("phases: [{at: 5, operators: [{name: spot, source_rate: 1}]}]"));
        assertEquals("test: phases[0].streams[0].grouping: a phase cannot change this field (it can change "
                     + "key_distribution, zipf_s, num_keys)",
                     refused("phases: [{at: 5, streams: [{from: spout, to: count, grouping: all}]}]"));
        assertEquals("test: phases[0].operators[0].cpu_per_tuple: a phase's cpu_per_tuple must be a number",
                     refused("phases: [{at: 5, operators: [{name: count, cpu_per_tuple: {a: 1}}]}]"));
        assertEquals("test: phases[0]: leaves streams[0].key_distribution: unknown distribution zipff",
                     refused("phases: [{at: 5, streams: [{from: spout, to: count, key_distribution: zipff}]}]"));
    }
}
