package org.streamplace.storm;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.storm.scheduler.Cluster;
import org.apache.storm.scheduler.ExecutorDetails;
import org.apache.storm.scheduler.SchedulerAssignment;
import org.apache.storm.scheduler.SupervisorDetails;
import org.apache.storm.scheduler.TopologyDetails;
import org.apache.storm.scheduler.WorkerSlot;

/**
 * Turns a {@link Plan} into Storm slots for one topology, or says why it cannot: all or nothing.
 *
 * <p>Cluster node -> supervisor: the supervisor whose {@code supervisor.scheduler.meta} has that
 * {@code node}, else the one whose host name is the node's name. Worker index w -> the node's w-th
 * assignable port in ascending order.
 *
 * <p>System executors ({@code __acker}, {@code __eventlogger}, {@code __metrics_*}) are not in a plan.
 * Rule: in order of their first task id they are dealt round-robin over the plan's workers,
 * interleaved by node: the first worker (lowest index) of each node in node-name order, then the
 * second of each, and so on ({@link #interleaved}), as Storm's EvenScheduler interleaves the
 * nodes' slots ({@code EvenScheduler.sortSlots}). So three ackers on a plan over four nodes go to
 * three nodes, not all to the first node's workers (the rule until 2026-11-30, which put the
 * ackers' work on one node), and a plan with one worker keeps all of them local.
 */
public final class PlanAssignment {
    /** The plan cannot be applied; the message is what the user sees as the topology's status. */
    public static final class Misfit extends Exception {
        private static final long serialVersionUID = 1L;

        Misfit(String message) {
            super(message);
        }
    }

    private PlanAssignment() {
    }

    /** Node name -> supervisor, by scheduler meta {@code node}, else host name. */
    public static Map<String, SupervisorDetails> nodes(Cluster cluster, Set<String> ambiguous) {
        Map<String, SupervisorDetails> out = new TreeMap<>();
        List<SupervisorDetails> sups = new ArrayList<>(cluster.getSupervisors().values());
        sups.sort(Comparator.comparing(SupervisorDetails::getId));
        for (SupervisorDetails sd : sups) {
            String name = nodeName(sd);
            if (name == null) {
                continue;
            }
            if (out.containsKey(name)) {
                ambiguous.add(name);
            }
            out.put(name, sd);
        }
        return out;
    }

    public static String nodeName(SupervisorDetails sd) {
        Object meta = sd.getSchedulerMeta();
        if (meta instanceof Map && ((Map<?, ?>) meta).get("node") != null) {
            return String.valueOf(((Map<?, ?>) meta).get("node"));
        }
        return sd.getHost();
    }

    /**
     * The slots the plan asks for, each with its executors. {@code deadNodes} are nodes seen alive
     * earlier (to tell "dead" from "unknown" in the message).
     */
    public static Map<WorkerSlot, List<ExecutorDetails>> compute(
            Plan plan, TopologyDetails td, Cluster cluster, Set<String> deadNodes) throws Misfit {
        Map<ExecutorDetails, String> execToComp = td.getExecutorToComponent();
        Map<Integer, String> taskToComp = new HashMap<>();
        for (Map.Entry<ExecutorDetails, String> e : execToComp.entrySet()) {
            for (int t = e.getKey().getStartTask(); t <= e.getKey().getEndTask(); t++) {
                taskToComp.put(t, e.getValue());
            }
        }
        Map<Integer, String> labels = TaskLabels.labels(taskToComp);
        Set<String> planned = new HashSet<>(plan.targets().keySet());
        Set<String> ambiguous = new HashSet<>();
        Map<String, SupervisorDetails> nodes = nodes(cluster, ambiguous);
        Map<String, List<WorkerSlot>> portsOf = new HashMap<>();
        Set<WorkerSlot> own = new HashSet<>();
        SchedulerAssignment current = cluster.getAssignmentById(td.getId());
        if (current != null) {
            own.addAll(current.getSlots());
        }

        Map<Plan.Target, WorkerSlot> slotOf = new TreeMap<>();
        Map<WorkerSlot, List<ExecutorDetails>> out = new LinkedHashMap<>();
        List<ExecutorDetails> system = new ArrayList<>();
        List<ExecutorDetails> executors = new ArrayList<>(execToComp.keySet());
        executors.sort(Comparator.comparingInt(ExecutorDetails::getStartTask));
        for (ExecutorDetails exec : executors) {
            if (TaskLabels.isSystem(execToComp.get(exec))) {
                system.add(exec);
                continue;
            }
            Plan.Target target = null;
            for (int t = exec.getStartTask(); t <= exec.getEndTask(); t++) {
                String label = labels.get(t);
                Plan.Target tt = plan.targets().get(label);
                if (tt == null) {
                    throw new Misfit("task " + label + " is not in the plan");
                }
                if (target != null && !target.equals(tt)) {
                    throw new Misfit("executor " + exec + " runs several tasks the plan puts in different workers ("
                                     + labels.get(exec.getStartTask()) + ", " + label + ")");
                }
                target = tt;
                planned.remove(label);
            }
            WorkerSlot slot = slotOf.get(target);
            if (slot == null) {
                slot = resolve(target, nodes, ambiguous, portsOf, cluster, own, deadNodes, td);
                slotOf.put(target, slot);
            }
            out.computeIfAbsent(slot, s -> new ArrayList<>()).add(exec);
        }
        if (!planned.isEmpty()) {
            String first = new TreeSet<>(planned).first();
            throw new Misfit("the plan names " + planned.size() + " task(s) the topology does not have, first " + first);
        }
        if (out.isEmpty()) {
            throw new Misfit("the topology has no task to place");
        }
        List<WorkerSlot> order = new ArrayList<>();
        for (Plan.Target t : interleaved(slotOf.keySet())) {
            order.add(slotOf.get(t));
        }
        for (int i = 0; i < system.size(); i++) {
            out.get(order.get(i % order.size())).add(system.get(i));
        }
        return out;
    }

    /** The workers in the order system executors are dealt over them (the class comment's rule). */
    static List<Plan.Target> interleaved(Collection<Plan.Target> workers) {
        Map<String, List<Plan.Target>> byNode = new TreeMap<>();
        for (Plan.Target t : new TreeSet<>(workers)) {
            byNode.computeIfAbsent(t.node(), n -> new ArrayList<>()).add(t);
        }
        List<Plan.Target> out = new ArrayList<>();
        for (int rank = 0; out.size() < byNode.values().stream().mapToInt(List::size).sum(); rank++) {
            for (List<Plan.Target> ofNode : byNode.values()) {
                if (rank < ofNode.size()) {
                    out.add(ofNode.get(rank));
                }
            }
        }
        return out;
    }

    private static WorkerSlot resolve(Plan.Target target, Map<String, SupervisorDetails> nodes, Set<String> ambiguous,
                                      Map<String, List<WorkerSlot>> portsOf, Cluster cluster, Set<WorkerSlot> own,
                                      Set<String> deadNodes, TopologyDetails td) throws Misfit {
        String node = target.node();
        SupervisorDetails sd = nodes.get(node);
        if (sd == null) {
            throw new Misfit(deadNodes.contains(node)
                ? "the supervisor of node " + node + " is not alive"
                : "unknown node " + node + " (no supervisor has scheduler meta node=" + node + " or host " + node + ")");
        }
        if (ambiguous.contains(node)) {
            throw new Misfit("node " + node + " names several supervisors");
        }
        List<WorkerSlot> ports = portsOf.computeIfAbsent(node, n -> {
            List<WorkerSlot> slots = new ArrayList<>(cluster.getAssignableSlots(sd));
            slots.sort(Comparator.comparingInt(WorkerSlot::getPort));
            return slots;
        });
        if (target.worker() >= ports.size()) {
            throw new Misfit("the plan uses worker " + target.worker() + " of node " + node + ", which has "
                             + ports.size() + " assignable port(s)" + (cluster.isBlackListed(sd.getId()) ? " (blacklisted)" : ""));
        }
        WorkerSlot slot = ports.get(target.worker());
        if (cluster.isSlotOccupied(slot) && !own.contains(slot)) {
            String user = "another topology";
            for (SchedulerAssignment a : cluster.getAssignments().values()) {
                if (a.getSlots().contains(slot) && !a.getTopologyId().equals(td.getId())) {
                    user = "topology " + a.getTopologyId();
                }
            }
            throw new Misfit("worker " + target.worker() + " of node " + node + " (port " + slot.getPort()
                             + ") is used by " + user);
        }
        return slot;
    }
}
