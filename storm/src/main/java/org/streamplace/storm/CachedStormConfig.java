package org.streamplace.storm;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.org.apache.commons.io.FileUtils;
import org.apache.storm.utils.ConfigUtils;
import org.apache.storm.utils.Utils;

/**
 * Storm's configuration parsed once, not at every look-up, in the embedded runner's JVM. Installed
 * through {@link ConfigUtils#setInstance}, Storm's own hook for replacing it. Measured with JFR on
 * the plans-on-Storm test's 35 jobs (2026-11-29), in local mode:
 * <ul>
 * <li>{@link ConfigUtils#readStormConfig()} is called for every executor, every blob download and
 *     every worker directory Storm looks up ({@code ClusterUtils.mkStormClusterState}, {@code
 *     LocalFsBlobStore.prepare}, {@code ConfigUtils.getLogDir}), and each call parses {@code
 *     defaults.yaml} and {@code storm.yaml} again and validates every field: 43 % of the JVM's CPU
 *     samples. The files cannot change while the JVM lives: the first reading is kept.</li>
 * <li>{@link ConfigUtils#readSupervisorStormConf} unzips and parses a topology's {@code
 *     stormconf.ser} for every worker start and every timer round that looks at an assignment: 17 %
 *     of the samples once the first was gone. The file is still read every time; only bytes already
 *     parsed are not parsed again.</li>
 * </ul>
 * Every call gets its own deep copy (callers add to the map they get).
 */
final class CachedStormConfig extends ConfigUtils {
    /** topology confs kept parsed: a few per group of jobs; the oldest is dropped beyond this */
    static final int TOPOLOGY_CONFS = 64;

    private Map<String, Object> read;
    private final Map<ByteBuffer, Map<String, Object>> parsed = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ByteBuffer, Map<String, Object>> eldest) {
            return size() > TOPOLOGY_CONFS;
        }
    };

    CachedStormConfig() {
    }

    /** Makes every later reading of Storm's configuration and of a topology's conf in this JVM go through this cache. */
    static void install() {
        ConfigUtils.setInstance(new CachedStormConfig());
    }

    @Override
    public synchronized Map<String, Object> readStormConfigImpl() {
        if (read == null) {
            read = super.readStormConfigImpl();
        }
        return copy(read);
    }

    /** What {@link ConfigUtils#readSupervisorStormConfGivenPath} returns: {@code conf}, then the file's settings. */
    @Override
    public Map<String, Object> readSupervisorStormConfImpl(Map<String, Object> conf, String stormId) throws IOException {
        String path = ConfigUtils.supervisorStormConfPath(ConfigUtils.supervisorStormDistRoot(conf, stormId));
        ByteBuffer bytes = ByteBuffer.wrap(FileUtils.readFileToByteArray(new File(path)));
        Map<String, Object> topology;
        synchronized (parsed) {
            topology = parsed.get(bytes);
            if (topology == null) {
                topology = Utils.fromCompressedJsonConf(bytes.array());
                parsed.put(bytes, topology);
            }
        }
        Map<String, Object> out = new HashMap<>(conf);
        out.putAll(copy(topology));
        return out;
    }

    @SuppressWarnings("unchecked")
    static <T> T copy(T value) {
        if (value instanceof Map<?, ?> map) {
            Map<Object, Object> out = new HashMap<>(map.size() * 2);
            map.forEach((k, v) -> out.put(k, copy(v)));
            return (T) out;
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>(list.size());
            list.forEach(v -> out.add(copy(v)));
            return (T) out;
        }
        return value;   // strings, numbers, booleans, null: immutable
    }
}
