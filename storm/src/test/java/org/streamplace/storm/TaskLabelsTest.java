package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.Config;
import org.apache.storm.daemon.StormCommon;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The label mapping against Storm's own task numbering ({@code StormCommon.stormTaskInfo}). */
class TaskLabelsTest {
    /** Declared b, Z, a_x, a: Java order is Z < __acker < a < a_x < b, unlike declaration order. */
    static final String MIXED = """
        name: mixed
        operators:
          - {name: b, parallelism: 3}
          - {name: Z, parallelism: 2}
          - {name: a_x, parallelism: 1}
          - {name: a, parallelism: 2}
        streams:
          - {from: b, to: Z}
          - {from: Z, to: a_x}
          - {from: a_x, to: a, grouping: global}
        """;

    @ParameterizedTest
    @ValueSource(ints = {0, 2})
    void labelsFollowStormsNumbering(int ackers) throws Exception {
        Map<String, Object> conf = Fixtures.stormConf(SpecTopology.conf(3, ackers, false, null, null, 10));
        conf.put(Config.TOPOLOGY_NAME, "mixed");
        Map<Integer, String> storm = StormCommon.stormTaskInfo(SpecTopology.build(Fixtures.spec(MIXED)), conf);
        // Storm: Z 1-2, [__acker 3-4], a next, then a_x, then b
        int base = ackers;
        Map<Integer, String> expected = new TreeMap<>(Map.of(1, "Z[0]", 2, "Z[1]", base + 3, "a[0]", base + 4, "a[1]",
            base + 5, "a_x[0]", base + 6, "b[0]", base + 7, "b[1]", base + 8, "b[2]"));
        assertEquals(expected, new TreeMap<>(TaskLabels.labels(storm)));
        assertEquals(ackers + 8, storm.size());
        if (ackers > 0) {
            assertEquals("__acker", storm.get(3));
        }
    }
}
