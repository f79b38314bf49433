package org.streamplace.storm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a job file against {@code job.schema.json} (beside this class), the one declaration of
 * the file between the Python side and the runners; the Python side checks with the same file
 * ({@code streamplace.storm.jobfile}) before it writes one.
 *
 * <p>A small checker of the subset of JSON Schema that file uses ({@link #KEYWORDS}), not a JSON
 * Schema library: the libraries on Maven Central (e.g. networknt's json-schema-validator) bring
 * Jackson and more into the runner's class path for a dozen fields, and a hand-written check
 * gives the one-line {@code FILE: FIELD: problem} message the project uses. Any other keyword in
 * the schema is refused, so a schema that needs more than this checker understands fails loudly.
 */
final class JobSchema {
    static final String RESOURCE = "job.schema.json";
    /** The keywords checked; the others allowed are annotations ({@code title}, {@code description}, {@code default}, {@code $...}). */
    static final Set<String> KEYWORDS = Set.of("type", "required", "properties", "additionalProperties", "items",
                                               "minimum", "exclusiveMinimum", "minLength");
    private static final Set<String> ANNOTATIONS = Set.of("title", "description", "default");

    private JobSchema() {
    }

    /** The schema as shipped in this jar. */
    static Map<String, Object> load() {
        try (InputStream in = JobSchema.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the class path");
            }
            return Documents.map(Documents.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), RESOURCE),
                                 RESOURCE, "");
        } catch (IOException | SpecException e) {
            throw new IllegalStateException("cannot read " + RESOURCE + ": " + e.getMessage(), e);
        }
    }

    /** Refuses {@code doc} with the first field (in schema order) that breaks {@code schema}. */
    static void check(Object doc, Map<String, Object> schema, String source) throws SpecException {
        check(doc, schema, source, "");
    }

    @SuppressWarnings("unchecked")
    private static void check(Object value, Map<String, Object> schema, String source, String field) throws SpecException {
        for (String key : schema.keySet()) {
            if (!KEYWORDS.contains(key) && !ANNOTATIONS.contains(key) && !key.startsWith("$")) {
                throw new IllegalStateException(RESOURCE + ": keyword " + key + " at " + (field.isEmpty() ? "the top" : field)
                                                + " is not one JobSchema checks");
            }
        }
        Object type = schema.get("type");
        List<Object> types = type instanceof List ? (List<Object>) type : type == null ? List.of() : List.of(type);
        if (!types.isEmpty() && types.stream().noneMatch(t -> is(value, String.valueOf(t)))) {
            throw new SpecException(source, field, "must be " + String.join(" or ", types.stream().map(t -> article(String.valueOf(t))).toList())
                                                   + ", got " + Json.write(value));
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> props = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
            for (Object name : (List<Object>) schema.getOrDefault("required", List.of())) {
                if (!map.containsKey(name)) {
                    throw new SpecException(source, join(field, String.valueOf(name)), "required");
                }
            }
            if (Boolean.FALSE.equals(schema.get("additionalProperties"))) {
                for (Object name : map.keySet()) {
                    if (!props.containsKey(String.valueOf(name))) {
                        throw new SpecException(source, join(field, String.valueOf(name)),
                                                "unknown field (known: " + String.join(", ", props.keySet()) + ")");
                    }
                }
            }
            for (Map.Entry<String, Object> p : props.entrySet()) {
                if (map.containsKey(p.getKey())) {
                    check(map.get(p.getKey()), (Map<String, Object>) p.getValue(), source, join(field, p.getKey()));
                }
            }
        } else if (value instanceof List<?> list && schema.get("items") != null) {
            for (int i = 0; i < list.size(); i++) {
                check(list.get(i), (Map<String, Object>) schema.get("items"), source, field + "[" + i + "]");
            }
        } else if (value instanceof Number n) {
            double d = n.doubleValue();
            if (schema.get("minimum") instanceof Number min && d < min.doubleValue()) {
                throw new SpecException(source, field, "must be >= " + Json.write(min) + ", got " + Json.write(value));
            }
            if (schema.get("exclusiveMinimum") instanceof Number min && d <= min.doubleValue()) {
                throw new SpecException(source, field, "must be > " + Json.write(min) + ", got " + Json.write(value));
            }
        } else if (value instanceof String s && schema.get("minLength") instanceof Number min && s.length() < min.intValue()) {
            throw new SpecException(source, field, s.isEmpty() ? "must not be empty" : "must have at least " + min + " characters");
        }
    }

    /** JSON Schema's types over what the YAML/JSON reader yields. */
    private static boolean is(Object v, String type) {
        return switch (type) {
            case "object" -> v instanceof Map;
            case "array" -> v instanceof List;
            case "string" -> v instanceof String;
            case "boolean" -> v instanceof Boolean;
            case "null" -> v == null;
            case "integer" -> v instanceof Integer || v instanceof Long || v instanceof java.math.BigInteger;
            case "number" -> (v instanceof Integer || v instanceof Long || v instanceof java.math.BigInteger
                              || v instanceof Double) && Double.isFinite(((Number) v).doubleValue());
            default -> throw new IllegalStateException(RESOURCE + ": unknown type " + type);
        };
    }

    private static String article(String type) {
        return switch (type) {
            case "object" -> "an object";
            case "array" -> "a list";
            case "integer" -> "an integer";
            case "null" -> "null";
            default -> "a " + type;
        };
    }

    private static String join(String field, String name) {
        return field.isEmpty() ? name : field + "." + name;
    }
}
