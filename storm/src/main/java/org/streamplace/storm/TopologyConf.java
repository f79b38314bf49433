package org.streamplace.storm;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.storm.validation.ConfigValidation;

/**
 * Checks a job's topology settings before it is submitted, so that a misspelt key or a value of
 * the wrong type stops the run with its name instead of a Nimbus stack trace (or, for a
 * misspelt key, silently doing nothing): every key outside {@code streamplace.*} must be one of
 * Storm's own settings (the {@code String} constants of its config classes), and the whole conf
 * must pass Storm's own {@link ConfigValidation#validateTopoConf}.
 */
final class TopologyConf {
    /** Storm's setting keys by the name of the constant that holds each (its validators' messages name the constant). */
    private static final Map<String, String> KEY_OF = known();
    private static final Set<String> KNOWN = new TreeSet<>(KEY_OF.values());
    private static final Pattern FIELD = Pattern.compile("^Field (\\w+) ");

    private TopologyConf() {
    }

    static void check(Map<String, Object> conf, String src) throws SpecException {
        for (String key : conf.keySet()) {
            if (!key.startsWith("streamplace.") && !KNOWN.contains(key)) {
                throw new SpecException(src, key, "not a Storm setting" + closest(key));
            }
        }
        try {
            ConfigValidation.validateTopoConf(conf);
        } catch (IllegalArgumentException e) {
            String why = String.valueOf(e.getMessage());
            Matcher m = FIELD.matcher(why);
            if (m.find() && KEY_OF.containsKey(m.group(1))) {
                throw new SpecException(src, KEY_OF.get(m.group(1)), "Storm rejects it: " + why.substring(m.end()));
            }
            throw new SpecException(src, "", "Storm rejects it: " + why);
        }
    }

    /** The known key nearest to {@code key} by edit distance, as a hint, if it is near. */
    private static String closest(String key) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : KNOWN) {
            int d = distance(k, key);
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(2, key.length() / 8) ? " (did you mean " + best + "?)" : "";
    }

    /** Levenshtein distance (hand-written: no string-distance library is on Storm's classpath). */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int swap = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(swap, Math.min(prev[j], cur[j - 1]) + 1);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    private static Map<String, String> known() {
        Map<String, String> keys = new java.util.HashMap<>();
        for (Class<?> c : ConfigValidation.getConfigClasses()) {
            for (Field f : c.getFields()) {
                if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                    try {
                        keys.put(f.getName(), (String) f.get(null));
                    } catch (IllegalAccessException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        }
        return keys;
    }
}
