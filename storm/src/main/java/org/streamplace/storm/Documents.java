package org.streamplace.storm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.storm.shade.org.yaml.snakeyaml.LoaderOptions;
import org.apache.storm.shade.org.yaml.snakeyaml.Yaml;
import org.apache.storm.shade.org.yaml.snakeyaml.constructor.SafeConstructor;
import org.apache.storm.shade.org.yaml.snakeyaml.error.YAMLException;

/**
 * Reads the YAML or JSON documents streamplace writes (topology specs, plan files) with a safe
 * loader (plain maps, lists, strings and numbers only), and checks their fields.
 */
final class Documents {
    private Documents() {
    }

    static Object read(Path file) throws SpecException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new SpecException(file.toString(), "", "cannot read: " + e.getMessage());
        }
        return parse(text, file.toString());
    }

    static Object parse(String text, String source) throws SpecException {
        try {
            return new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
        } catch (YAMLException e) {
            String msg = e.getMessage() == null ? "" : e.getMessage().split("\n", 2)[0];
            throw new SpecException(source, "", "not valid YAML/JSON: " + msg);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value, String source, String field) throws SpecException {
        if (!(value instanceof Map)) {
            throw new SpecException(source, field, "must be a mapping");
        }
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object value, String source, String field) throws SpecException {
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List)) {
            throw new SpecException(source, field, "must be a list");
        }
        return (List<Object>) value;
    }

    static String string(Object value, String source, String field) throws SpecException {
        if (!(value instanceof String) || ((String) value).isEmpty()) {
            throw new SpecException(source, field, "must be a non-empty string");
        }
        return (String) value;
    }

    static double number(Object value, double dflt, String source, String field) throws SpecException {
        if (value == null) {
            return dflt;
        }
        if (!(value instanceof Number) || value instanceof Boolean) {
            throw new SpecException(source, field, "must be a number, got " + value);
        }
        double d = ((Number) value).doubleValue();
        if (!Double.isFinite(d) || d < 0) {
            throw new SpecException(source, field, "must be a finite number >= 0, got " + value);
        }
        return d;
    }

    static int integer(Object value, int dflt, String source, String field) throws SpecException {
        if (value == null) {
            return dflt;
        }
        if (!(value instanceof Integer) && !(value instanceof Long)) {
            throw new SpecException(source, field, "must be an integer, got " + value);
        }
        long v = ((Number) value).longValue();
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new SpecException(source, field, "must be an integer >= 0, got " + value);
        }
        return (int) v;
    }
}
