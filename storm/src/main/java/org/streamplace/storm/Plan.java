package org.streamplace.storm;

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A placement plan: task label {@code op[i]} -> (cluster node, worker index on that node).
 *
 * <p>The file is what {@code streamplace schedule -o} writes: a JSON object whose {@code placement}
 * maps labels to {@code {"node": ..., "worker": ...}}; every other key is ignored, so
 * {@code {"placement": {...}}} alone is a plan. A bare label mapping is accepted too, as is a node
 * name alone in place of the object (worker 0), the same forms the Python loader takes.
 */
public final class Plan {
    /** Where one task goes: a cluster node name and a worker index (0 = the node's lowest port). */
    public record Target(String node, int worker) implements Comparable<Target> {
        @Override
        public int compareTo(Target o) {
            int c = node.compareTo(o.node);
            return c != 0 ? c : Integer.compare(worker, o.worker);
        }
    }

    private static final Pattern LABEL = Pattern.compile("(.+)\\[(0|[1-9][0-9]*)\\]");

    private final Map<String, Target> targets;

    public Plan(Map<String, Target> targets) {
        this.targets = Collections.unmodifiableMap(new LinkedHashMap<>(targets));
    }

    public Map<String, Target> targets() {
        return targets;
    }

    public static Plan read(Path file) throws SpecException {
        return fromDocument(Documents.read(file), file.toString());
    }

    public static Plan parse(String text, String source) throws SpecException {
        return fromDocument(Documents.parse(text, source), source);
    }

    static Plan fromDocument(Object doc, String source) throws SpecException {
        Map<String, Object> top = Documents.map(doc, source, "");
        String prefix = "";
        Map<String, Object> mapping = top;
        if (top.get("placement") instanceof Map) {
            mapping = Documents.map(top.get("placement"), source, "placement");
            prefix = "placement.";
        }
        if (mapping.isEmpty()) {
            throw new SpecException(source, prefix.isEmpty() ? "" : "placement", "the plan places no task");
        }
        Map<String, Target> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : mapping.entrySet()) {
            String label = String.valueOf(e.getKey());
            String where = prefix + label;
            if (!LABEL.matcher(label).matches()) {
                throw new SpecException(source, where, "not a task label op[i]");
            }
            Object entry = e.getValue();
            if (entry instanceof String) {
                out.put(label, new Target((String) entry, 0));
                continue;
            }
            Map<String, Object> rec = Documents.map(entry, source, where);
            String node = Documents.string(rec.get("node"), source, where + ".node");
            int worker = Documents.integer(rec.get("worker"), 0, source, where + ".worker");
            out.put(label, new Target(node, worker));
        }
        return new Plan(out);
    }
}
