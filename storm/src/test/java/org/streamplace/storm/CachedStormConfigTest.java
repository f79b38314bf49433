package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.Config;
import org.apache.storm.DaemonConfig;
import org.apache.storm.utils.ConfigUtils;
import org.apache.storm.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CachedStormConfigTest {
    @Test
    @SuppressWarnings("unchecked")
    void everyReadingEqualsStormsOwnAndIsACopyOfItsOwn() {
        CachedStormConfig cached = new CachedStormConfig();
        Map<String, Object> first = cached.readStormConfigImpl();
        assertEquals(new ConfigUtils().readStormConfigImpl(), first);
        ((List<Object>) first.get(DaemonConfig.SUPERVISOR_SLOTS_PORTS)).add(1);   // what a caller may do to its map
        first.put("streamplace.added", true);
        Map<String, Object> second = cached.readStormConfigImpl();
        assertEquals(new ConfigUtils().readStormConfigImpl(), second);
        assertNotSame(first.get(DaemonConfig.SUPERVISOR_SLOTS_PORTS), second.get(DaemonConfig.SUPERVISOR_SLOTS_PORTS));
    }

    @Test
    void aTopologyConfEqualsStormsReadingAlsoAfterTheFileChanged(@TempDir Path tmp) throws IOException {
        Map<String, Object> supervisor = new HashMap<>(Map.of(Config.STORM_LOCAL_DIR, tmp.toString(), "supervisor.only", 1));
        String path = ConfigUtils.supervisorStormConfPath(ConfigUtils.supervisorStormDistRoot(supervisor, "topo-1"));
        CachedStormConfig cached = new CachedStormConfig();
        for (int version = 0; version < 2; version++) {
            Map<String, Object> topology = new HashMap<>(Map.of("topology.workers", 3 + version,
                                                               "topology.list", new ArrayList<>(List.of("a", "b"))));
            Files.createDirectories(new File(path).getParentFile().toPath());
            Files.write(Path.of(path), Utils.toCompressedJsonConf(topology));
            Map<String, Object> expected = ConfigUtils.readSupervisorStormConfGivenPath(supervisor, path);
            assertEquals(expected, cached.readSupervisorStormConfImpl(supervisor, "topo-1"));
            assertEquals(expected, cached.readSupervisorStormConfImpl(supervisor, "topo-1"));   // the kept parse
            assertEquals(((Number) expected.get("topology.workers")).intValue(), 3 + version);
        }
        assertThrows(IOException.class, () -> cached.readSupervisorStormConfImpl(supervisor, "topo-missing"));
    }
}
