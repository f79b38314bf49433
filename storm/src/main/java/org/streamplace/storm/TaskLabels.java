package org.streamplace.storm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.storm.task.GeneralTopologyContext;

/**
 * The one mapping between Storm task ids and streamplace task labels {@code op[i]}.
 *
 * <p>streamplace numbers the tasks of each operator 0..p-1; Storm numbers all tasks of a topology
 * from 1, contiguously per component, components in Java {@code String} order (system components
 * such as {@code __acker} included). So the label of a Storm task is its component id and its rank
 * among that component's sorted task ids. The plugin, the monitor and the runner all go through
 * this class; the Python side has the same rule in {@code streamplace.model.storm_ids}.
 */
public final class TaskLabels {
    private TaskLabels() {
    }

    /** Storm reserves component and stream ids starting with {@code __} for its own executors. */
    public static boolean isSystem(String componentOrStream) {
        return componentOrStream.startsWith("__");
    }

    public static String label(String component, int index) {
        return component + "[" + index + "]";
    }

    /**
     * Task id -> label for every task of a user component, from Storm's own task -> component map
     * (e.g. {@code TopologyContext.getTaskToComponent()} or {@code StormCommon.stormTaskInfo}).
     */
    public static Map<Integer, String> labels(Map<Integer, String> taskToComponent) {
        Map<String, List<Integer>> byComponent = new TreeMap<>();
        for (Map.Entry<Integer, String> e : taskToComponent.entrySet()) {
            if (!isSystem(e.getValue())) {
                byComponent.computeIfAbsent(e.getValue(), k -> new ArrayList<>()).add(e.getKey());
            }
        }
        Map<Integer, String> out = new HashMap<>();
        for (Map.Entry<String, List<Integer>> e : byComponent.entrySet()) {
            List<Integer> tasks = e.getValue();
            Collections.sort(tasks);
            for (int i = 0; i < tasks.size(); i++) {
                out.put(tasks.get(i), label(e.getKey(), i));
            }
        }
        return out;
    }

    /** The label of a task inside a running worker: its component and rank in the component's sorted task ids. */
    public static String label(GeneralTopologyContext context, int taskId) {
        String component = context.getComponentId(taskId);
        List<Integer> tasks = new ArrayList<>(context.getComponentTasks(component));
        Collections.sort(tasks);
        return label(component, tasks.indexOf(taskId));
    }
}
