package org.streamplace.storm;

import java.io.Serializable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A streamplace topology spec (the YAML/JSON schema of {@code streamplace workload ... -o}), the
 * fields the Storm topology needs. The Python side validates specs fully before it starts a run;
 * this reader checks what it uses and reports a problem as {@code FILE: FIELD: problem}.
 *
 * <p>A spec's {@code phases} change fields while the topology runs: from {@code at} seconds after
 * submission on, the named operators and streams take the phase's values, on top of the phases
 * before it. Each phase is read into a whole {@link Spec} of its own ({@link #phases}).
 */
public final class Spec {
    public static final List<String> GROUPINGS = List.of("shuffle", "fields", "global", "all", "local_or_shuffle");
    /** What a phase may change (the Python model's {@code PHASE_OPERATOR_FIELDS} and {@code PHASE_STREAM_FIELDS}). */
    public static final List<String> PHASE_OPERATOR_FIELDS = List.of("source_rate", "selectivity", "cpu_per_tuple", "tuple_bytes");
    public static final List<String> PHASE_STREAM_FIELDS = List.of("key_distribution", "zipf_s", "num_keys");
    /** Largest key space a Zipf key stream may have: its CDF is a table of this many doubles. */
    public static final int MAX_ZIPF_KEYS = 10_000_000;

    /**
     * An operator; {@code cpuDemand} (cores per task) and {@code memoryMb} (on-heap MB per task) are
     * its declared resources, 0 when the spec gives none (Storm's defaults then apply).
     */
    public record Operator(String name, int parallelism, double selectivity, double tupleBytes,
                           double cpuPerTuple, Map<String, Double> cpuPerTupleByType, double sourceRate,
                           double cpuDemand, double memoryMb)
            implements Serializable {
    }

    public record Stream(String from, String to, String grouping, String key, String keyDistribution,
                         double zipfS, int numKeys) implements Serializable {
        /** The tuple field carrying this stream's key ({@code k_<key>}). */
        public String keyField() {
            return "k_" + (key == null ? "key" : key);
        }
    }

    /** From {@code at} seconds after submission on, the topology runs as {@code spec}. */
    public record Phase(double at, Spec spec) {
    }

    public final String name;
    public final List<Operator> operators;
    public final List<Stream> streams;
    /** The phases after the first (the spec's own fields), in order of {@code at}. */
    public final List<Phase> phases;

    private Spec(String name, List<Operator> operators, List<Stream> streams, List<Phase> phases) {
        this.name = name;
        this.operators = Collections.unmodifiableList(operators);
        this.streams = Collections.unmodifiableList(streams);
        this.phases = Collections.unmodifiableList(phases);
    }

    public static Spec read(Path file) throws SpecException {
        return fromDocument(Documents.read(file), file.toString());
    }

    static Spec fromDocument(Object doc, String src) throws SpecException {
        Map<String, Object> top = Documents.map(doc, src, "");
        Spec first = fromFields(top, src);
        List<Phase> phases = new ArrayList<>();
        Map<String, Object> current = new LinkedHashMap<>(top);
        current.remove("phases");
        List<Object> rawPhases = Documents.list(top.get("phases"), src, "phases");
        double previous = 0.0;
        for (int k = 0; k < rawPhases.size(); k++) {
            String w = "phases[" + k + "]";
            Map<String, Object> ph = Documents.map(rawPhases.get(k), src, w);
            double at = Documents.number(ph.get("at"), -1.0, src, w + ".at");
            if (!(at > previous)) {
                throw new SpecException(src, w + ".at", "must be a number of seconds > " + previous + ", got " + ph.get("at"));
            }
            previous = at;
            current.put("operators", changed(current.get("operators"), ph.get("operators"), List.of("name"),
                                             PHASE_OPERATOR_FIELDS, src, w + ".operators"));
            current.put("streams", changed(current.get("streams"), ph.get("streams"), List.of("from", "to"),
                                           PHASE_STREAM_FIELDS, src, w + ".streams"));
            Spec spec;
            try {
                spec = fromFields(current, src);
            } catch (SpecException e) {
                throw new SpecException(src, w, "leaves " + e.getMessage().substring(src.length() + 2));
            }
            phases.add(new Phase(at, spec));
        }
        return phases.isEmpty() ? first : new Spec(first.name, first.operators, first.streams, phases);
    }

    /**
     * A copy of the raw list {@code items} (operators or streams) with a phase's {@code changes}
     * applied: each change names its item by the {@code key} fields and sets only {@code allowed} ones.
     */
    private static List<Object> changed(Object items, Object changes, List<String> key, List<String> allowed,
                                        String src, String where) throws SpecException {
        List<Object> out = new ArrayList<>(Documents.list(items, src, where));
        List<Object> raw = Documents.list(changes, src, where);
        for (int i = 0; i < raw.size(); i++) {
            String w = where + "[" + i + "]";
            Map<String, Object> change = Documents.map(raw.get(i), src, w);
            int target = -1;
            for (int j = 0; j < out.size() && target < 0; j++) {
                Map<String, Object> item = Documents.map(out.get(j), src, where);
                boolean same = true;
                for (String field : key) {
                    same &= change.get(field) != null && change.get(field).equals(item.get(field));
                }
                target = same ? j : -1;
            }
            if (target < 0) {
                throw new SpecException(src, w, "names no " + String.join("/", key) + " of the topology");
            }
            Map<String, Object> item = new LinkedHashMap<>(Documents.map(out.get(target), src, where));
            for (Map.Entry<String, Object> e : change.entrySet()) {
                if (key.contains(e.getKey())) {
                    continue;
                }
                if (!allowed.contains(e.getKey())) {
                    throw new SpecException(src, w + "." + e.getKey(), "a phase cannot change this field (it can change "
                                                                       + String.join(", ", allowed) + ")");
                }
                if (e.getKey().equals("cpu_per_tuple") && !(e.getValue() instanceof Number)) {
                    throw new SpecException(src, w + ".cpu_per_tuple", "a phase's cpu_per_tuple must be a number");
                }
                item.put(e.getKey(), e.getValue());
            }
            out.set(target, item);
        }
        return out;
    }

    /** The spec of one phase: the document's operators and streams as they are. */
    private static Spec fromFields(Map<String, Object> top, String src) throws SpecException {
        String name = Documents.string(top.get("name"), src, "name");
        List<Operator> ops = new ArrayList<>();
        Map<String, Operator> byName = new HashMap<>();
        List<Object> rawOps = Documents.list(top.get("operators"), src, "operators");
        if (rawOps.isEmpty()) {
            throw new SpecException(src, "operators", "a topology needs at least one operator");
        }
        for (int i = 0; i < rawOps.size(); i++) {
            String w = "operators[" + i + "]";
            Map<String, Object> o = Documents.map(rawOps.get(i), src, w);
            String opName = Documents.string(o.get("name"), src, w + ".name");
            if (TaskLabels.isSystem(opName) || opName.contains("[") || opName.contains("]")) {
                throw new SpecException(src, w + ".name", "Storm reserves names starting with __, and [ ] end labels");
            }
            if (byName.containsKey(opName)) {
                throw new SpecException(src, w + ".name", "duplicate operator name " + opName);
            }
            int p = Documents.integer(o.get("parallelism"), -1, src, w + ".parallelism");
            if (p < 1) {
                throw new SpecException(src, w + ".parallelism", "must be an integer >= 1");
            }
            double cpu = 0.0;
            Map<String, Double> byType = null;
            Object c = o.get("cpu_per_tuple");
            if (c instanceof Map) {
                byType = new LinkedHashMap<>();
                for (Map.Entry<String, Object> e : Documents.map(c, src, w + ".cpu_per_tuple").entrySet()) {
                    byType.put(e.getKey(), Documents.number(e.getValue(), 0, src, w + ".cpu_per_tuple." + e.getKey()));
                }
            } else {
                cpu = Documents.number(c, 0.0, src, w + ".cpu_per_tuple");
            }
            Operator op = new Operator(opName, p, Documents.number(o.get("selectivity"), 1.0, src, w + ".selectivity"),
                Documents.number(o.get("tuple_bytes"), 100.0, src, w + ".tuple_bytes"), cpu, byType,
                Documents.number(o.get("source_rate"), 1.0, src, w + ".source_rate"),
                Documents.number(o.get("cpu_demand"), 0.0, src, w + ".cpu_demand"),
                Documents.number(o.get("memory_mb"), 0.0, src, w + ".memory_mb"));
            ops.add(op);
            byName.put(opName, op);
        }
        List<Stream> streams = new ArrayList<>();
        List<Object> rawStreams = Documents.list(top.get("streams"), src, "streams");
        for (int i = 0; i < rawStreams.size(); i++) {
            String w = "streams[" + i + "]";
            Map<String, Object> s = Documents.map(rawStreams.get(i), src, w);
            String from = Documents.string(s.get("from"), src, w + ".from");
            String to = Documents.string(s.get("to"), src, w + ".to");
            for (String end : new String[] {from, to}) {
                if (!byName.containsKey(end)) {
                    throw new SpecException(src, w, "unknown operator " + end);
                }
            }
            String grouping = s.get("grouping") == null ? "shuffle" : Documents.string(s.get("grouping"), src, w + ".grouping");
            if (!GROUPINGS.contains(grouping)) {
                throw new SpecException(src, w + ".grouping", "unknown grouping " + grouping);
            }
            String dist = s.get("key_distribution") == null ? "uniform"
                : Documents.string(s.get("key_distribution"), src, w + ".key_distribution");
            if (!dist.equals("uniform") && !dist.equals("zipf")) {
                throw new SpecException(src, w + ".key_distribution", "unknown distribution " + dist);
            }
            int numKeys = Documents.integer(s.get("num_keys"), 1000, src, w + ".num_keys");
            if (numKeys < 1 || (dist.equals("zipf") && numKeys > MAX_ZIPF_KEYS)) {
                throw new SpecException(src, w + ".num_keys", "must be 1.." + (dist.equals("zipf") ? MAX_ZIPF_KEYS : Integer.MAX_VALUE));
            }
            String key = s.get("key") == null ? null : Documents.string(s.get("key"), src, w + ".key");
            streams.add(new Stream(from, to, grouping, key, dist, Documents.number(s.get("zipf_s"), 1.0, src, w + ".zipf_s"), numKeys));
        }
        return new Spec(name, ops, streams, List.of());
    }

    public Operator operator(String name) {
        for (Operator op : operators) {
            if (op.name.equals(name)) {
                return op;
            }
        }
        throw new IllegalArgumentException("no operator " + name);
    }

    public List<Stream> downstream(String op) {
        return streams(s -> s.from.equals(op));
    }

    public List<Stream> upstream(String op) {
        return streams(s -> s.to.equals(op));
    }

    private List<Stream> streams(java.util.function.Predicate<Stream> keep) {
        return streams.stream().filter(keep).toList();
    }

    /**
     * The key fields an operator's tuples carry: one per distinct key of its outgoing fields
     * streams, with the first such stream's distribution (declaration order).
     */
    public Map<String, Stream> keyFields(String op) {
        Map<String, Stream> out = new LinkedHashMap<>();
        for (Stream s : downstream(op)) {
            if (s.grouping.equals("fields")) {
                out.putIfAbsent(s.keyField(), s);
            }
        }
        return out;
    }

    public Set<String> names() {
        Set<String> out = new java.util.LinkedHashSet<>();
        operators.forEach(o -> out.add(o.name));
        return out;
    }
}
