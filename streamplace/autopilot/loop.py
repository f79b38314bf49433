"""The autopilot's period: read the monitor's windows, calibrate, reschedule, decide, log.

Every period (:meth:`Autopilot.step`):

1. **Windows.** The traffic monitor's load and traffic records of the last ``horizon_windows``
   windows (a sliding horizon, re-read every period: the monitor writes whole windows, one file
   per worker, so nothing needs to be kept between periods). Before them, what Storm runs, as
   the plugin wrote it at Nimbus' last round (:func:`~streamplace.storm.plans.read_assigned`;
   without that record, the loop's last plan is taken as running): no plan while Nimbus has not
   scheduled for :data:`SILENT_ROUNDS` of its rounds, while a node that was alive has no live supervisor,
   while Storm has not assigned every task, or while Nimbus has not yet read the loop's newest
   plan; a Storm that runs another placement than the loop's plan (it rejected the plan, or
   moved tasks off a dead node) is taken as the running placement. No window newer than two windows
   ago (the monitor stopped), a window that not every task reported (a worker restarting), or a
   task label the topology does not have (it changed shape): no plan, the reason logged. Nor
   on a horizon that is not steady: one holding windows from before the loop's last plan, or
   whose newest window executed more than ``steady_tolerance`` above its oldest (a transient:
   the workers' JIT warm-up after the job's start, or the recovery after a move, a median
   30-38 s on the testbed). The calibration below takes the horizon for the placement's steady
   state; on a rising rate it takes the placement for slower than it is and credits a move with
   the difference (the testbed campaign ``2026-11-28-autopilot-shift``: every policy's first
   plan written 29-42 s after submission, while even's rate was still rising). Nor on a horizon
   whose load changed within it: more than ``load_change`` of a key-routed operator's tuples
   (below) moved between its tasks from its oldest window to its newest. Such a horizon mixes two
   loads, and a plan decided on it fits neither (the campaign ``2026-11-29-autopilot-confirm``: a
   2-move plan decided 13 s after a key shift, on a 15-s horizon holding both loads; as the
   reference of the load-change rule below it then hid the shift, and the plan for the shifted
   keys came 147 s after it). Nor, after a
   change, before the workers it restarted have run ``rewarm_s`` (counted from the first horizon
   after the change that every task reported in full): a restarted worker's JVM compiles its
   hot code anew, as at the job's start, and a calibration on its first minute takes its tasks
   for slower than they are (the campaign ``2026-11-29-autopilot-payback``: every run of our
   policy applied a second plan of 2-3 moves, predicted +11-18 %, on the first horizon after the
   first plan's recovery, with the restarted JVMs 15-20 s old, and it bought nothing measurable).
   Unless the load changed: when, in an operator whose every input is routed by key (fields,
   global, all: the data decide which task gets a tuple, not the tasks' speed), more than
   ``load_change`` of its tuples moved between its tasks since the horizon the last plan was
   decided on (the total variation distance of the tasks' shares), the wait is cut short. A
   restart does not move a key-routed operator's tuples; a shift of its keys does. Shuffle
   streams are left out: Storm 2's load-aware shuffle sends a restarted, slower worker's tasks
   fewer tuples. (The campaign ``2026-11-29-autopilot-rewarm``: a plan applied 2 s before a key
   shift held the loop in its re-warm wait for 108 s after the shift.) A change of rate or
   selectivity moves no tuple between tasks and does not cut the wait.
2. **Profile.** The horizon's traffic as the task graph's edge weights (tuples/s per task pair,
   what ``streamplace profile`` computes over a whole run), the topology's per-task loads kept.
3. **Calibration.** The model calibrated on the horizon as a run of the running placement
   (:func:`streamplace.model.calibration.calibrate`), at the operating point given.
4. **Candidate.** ``lns`` with the throughput objective on the calibrated model: a reschedule
   of the running placement with at most ``max_moves`` tasks moved, or (a policy that
   schedules ``from_scratch``) a new schedule; in a child process, so that a native solver
   that aborts fails one period (logged) and not the loop. ``time_limit`` is the search's
   budget of work, but ``lns`` counts wall-clock seconds: on a busy machine it does less in them
   and stops at a worse placement. A search that got less than three quarters of a core over its
   wall limit runs again with the limit divided by the share it got (at most ``search_stretch``,
   4, times ``time_limit``), and the reason says so. (The campaign ``2026-11-29-autopilot-straddle``: on
   the testbed, where the loop shares the spare CPU with Storm's daemons, three runs' first plans
   were a 5-move placement keeping even's 12 workers, predicted +34 % and measured about 0 %;
   re-decided on those runs' records on a quiet machine, 2 s of ``lns`` proposes a 16-move
   placement on 5 workers, +53 to +56 %, the kind of first plan that worked in every other run,
   and 0.4-1 s exactly the logged 5-move plan.)
5. **Decision.** gain = predicted candidate / predicted now - 1 - ``migration_s`` / ``payback_s``
   (the migration cost: Storm restarts every worker whose tasks change, and the job runs below its
   rate until they are back; that loss, in seconds of the running rate, must be repaid by the
   gain within ``payback_s``). One cost per plan, not per task moved: over the 27 plans of the
   testbed campaign ``2026-11-29-autopilot-joins`` the dip was a median 19 s of the rate before
   the plan (quartiles 11.6 and 20.3 s), 0-19 s for 1-move plans and 19-22 s for 16-18-move ones.
   ``payback_s`` (300 s, our policy's default cool-down: the least time a plan then holds) is a
   stated choice, not a measurement. A policy that does not declare ``pays_migration`` ([F]'s
   Greedy, which has no such cost) judges the gain before it. The policy
   (:mod:`.policy`) says apply or keep; an applied plan is written atomically into the plugin's
   plan directory, which Nimbus re-reads on its next round. A policy that confirms a gain over
   periods (ours) confirms one plan: while a candidate's count runs, each period judges that
   same placement on its own calibration (no new ``lns`` run), and only when it falls below the
   policy's threshold does a new candidate start the count again. (Until the campaign
   ``2026-11-29-autopilot-mingain`` the count confirmed the gain of whatever ``lns`` proposed
   each period: 6 of its 7 plans moved another number of tasks than the candidate the period
   before had counted, and one such 5-move plan, proposed once, took its run from 31,284 tuples/s
   under even to 18,075.) After a
   restart the count of the log goes on with the first period's candidate.
6. **Log.** One JSON line per period: ``t``, ``windows``, ``predicted_now``, ``predicted_new``,
   ``moves``, ``decision`` (``keep`` / ``apply``), ``reason`` (and the ``placement`` applied). A
   restart resumes from it: the last applied placement is the running one, the policy's count
   and cool-down go on.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..evaluate.scheduled import reschedule, schedule
from ..interrupt import cpu_seconds, in_child
from ..files import atomic_write_text, dumps_json, parse_document, quote
from ..model import Placement, Problem
from ..model.calibration import MeasuredRun, calibrate, offered_rate, rate_maps
from ..model.graph import TaskGraph
from ..model.operating_point import OperatingPoint
from ..model.specs import placement_from_dict
from ..storm import records
from ..storm.plans import on_fresh_ports, plan_document, read_assigned, storm_name
from .policy import History, Hysteresis, Policy


#: scheduling rounds missed after which Nimbus counts as away (its ``nimbus.monitor.freq.secs``
#: apart, which the plugin's record carries): one missed round is a slow round, three are not
SILENT_ROUNDS = 3


@dataclass(frozen=True)
class Settings:
    window_s: float = 10.0           # the monitor's window
    horizon_windows: int = 3         # windows the profile and the calibration use
    max_moves: int | None = 4        # tasks a reschedule may move (None: any)
    migration_s: float = 19.0        # seconds of the running rate one plan loses (measured, module docstring)
    payback_s: float = 300.0         # within which the gain must repay the migration (stated, module docstring)
    time_limit: float = 2.0          # seconds of lns per period, on a free core (module docstring, step 4)
    # at most how many times ``time_limit`` a starved search's wall limit is stretched (1: never);
    # 4 bounds a period's overrun to 5 x time_limit (module docstring, step 4)
    search_stretch: float = 4.0
    # a rise within the horizon (newest window over oldest) beyond this share is a transient, not a
    # steady state (module docstring); 5 %: half our policy's smallest gain acted on (Hysteresis'
    # min_gain, 10 %), so no rise that could alone account for an applied gain is calibrated on
    steady_tolerance: float = 0.05
    # the time restarted workers run before their windows are calibrated on (module docstring);
    # 60 s: the job's own warm-up on the testbed, its rate rising for about a minute after its
    # workers first ran (the campaign 2026-11-28-autopilot-shift, read before PLAN-autopilot-shift-3)
    rewarm_s: float = 60.0
    # the share of a key-routed operator's tuples that moved between its tasks (module docstring)
    # above which the load changed; 0.1: over the 436 complete horizons after a plan (restarts,
    # no shift) in the campaigns 2026-11-29-autopilot-payback and -rewarm, the count operator's
    # distance was at most 0.022; on horizons wholly after their key shift (uniform to Zipf 1.5)
    # 0.35-0.38
    load_change: float = 0.1
    point: OperatingPoint = field(default_factory=lambda: OperatingPoint("measured"))

    def __post_init__(self):
        if not (self.window_s > 0 and self.horizon_windows >= 1 and self.migration_s >= 0 and self.payback_s > 0
                and self.time_limit > 0 and self.steady_tolerance >= 0 and self.rewarm_s >= 0
                and 0 < self.load_change <= 1 and self.search_stretch >= 1):
            raise ValueError("window, payback and time limit must be > 0, horizon >= 1 window, migration cost, "
                             "steady tolerance and re-warm time >= 0, load change in (0, 1], search stretch >= 1")

    @property
    def migration_cost(self) -> float:
        """The share of throughput one plan costs: ``migration_s / payback_s`` (module docstring)."""
        return self.migration_s / self.payback_s


@dataclass(frozen=True)
class Decision:
    t: float
    windows: tuple[float, ...]
    predicted_now: float | None
    predicted_new: float | None
    moves: int
    decision: str                    # "keep" or "apply"
    reason: str
    placement: dict | None = None    # the placement applied
    history: History = History()     # the policy's state after this period (what a restart resumes from)
    storm_runs_plan: bool | None = None   # whether Storm ran the loop's plan at Nimbus' last round (None: no record)

    def to_dict(self) -> dict:
        out = {"t": self.t, "windows": list(self.windows), "predicted_now": self.predicted_now,
               "predicted_new": self.predicted_new, "moves": self.moves, "decision": self.decision, "reason": self.reason,
               "above": self.history.above, "last_change": self.history.last_change,
               "storm_runs_plan": self.storm_runs_plan}
        if self.placement is not None:
            out["placement"] = self.placement
        return out

    def line(self) -> str:
        """What the command prints per period."""
        now = "-" if self.predicted_now is None else f"{self.predicted_now:,.0f}"
        new = "-" if self.predicted_new is None else f"{self.predicted_new:,.0f}"
        return f"t={self.t:.0f} {self.decision}: {self.reason} (now {now}, candidate {new} tuples/s, {self.moves} moves)"


class Judged(NamedTuple):
    """A policy's verdict on one candidate in one period."""
    apply: bool
    why: str
    history: History                  # the policy's state after it
    candidate: Placement
    predicted_new: float | None
    moves: int
    gain: float | None


class Autopilot:
    """The loop's state: the job, where it reads and writes, the running placement, the policy's history."""

    def __init__(self, problem: Problem, monitor: Path, plan_dir: Path, log: Path, current: Placement,
                 policy: Policy | None = None, settings: Settings | None = None, history: History | None = None):
        self.problem, self.monitor, self.plan_dir, self.log = problem, Path(monitor), Path(plan_dir), Path(log)
        self.current = current
        self.planned = current.to_mapping(problem.topology.task_labels, problem.cluster)   # the loop's own plan
        self.observed: bool | None = None   # this period: whether Storm runs the loop's plan (None: no record)
        self.policy = policy or Hysteresis()
        self.settings = settings or Settings()
        self.history = history or History()
        self.back_at: float | None = None   # the first complete window after the last change (rewarm_s)
        self.decided_on: dict[str, np.ndarray] | None = None   # key shares of the horizon the last plan came from
        self.pending: tuple[Placement, float] | None = None   # the plan being confirmed, and when it was proposed
        storm_name(problem.topology)   # the plan's file name: a clear error now, not at the first apply

    @classmethod
    def resume(cls, problem: Problem, monitor: Path, plan_dir: Path, log: Path, current: Placement | None,
               policy: Policy | None = None, settings: Settings | None = None) -> "Autopilot":
        """The loop as its decision log left it (a new one when there is none): the policy's
        state from the last record; the running placement is the last plan the loop wrote (the
        plan file when it is newer than the log: the process stopped between the two writes),
        else ``current``, else the plan in ``plan_dir``."""
        history, applied = History(), None
        if Path(log).is_file():
            lines = [line for line in Path(log).read_text().splitlines() if line.strip()]
            for number, line in enumerate(lines, 1):
                try:
                    rec = json.loads(line)
                    if not isinstance(rec, dict) or rec.get("decision") not in ("keep", "apply"):
                        raise ValueError
                except ValueError:
                    if number == len(lines):   # a last line cut short by a crash: the records before it stand
                        break
                    raise ValueError(f"{log}: line {number}: not a decision record of the autopilot") from None
                history = History(int(rec.get("above", 0)), rec.get("last_change"))
                if rec["decision"] == "apply":
                    applied = rec.get("placement")
        plan = Path(plan_dir) / f"{storm_name(problem.topology)}.json"
        written = _plan_on_disk(plan)
        if written is not None and written[0] is not None and (history.last_change is None or written[0] > history.last_change):
            applied, history = written[1], History(0, written[0])   # applied, then stopped before its log line
        if applied is not None:
            current = placement_from_dict({"placement": applied}, problem.topology, problem.cluster, f"{log}: last applied plan")
        elif current is None:
            if written is None:
                raise ValueError(f"no running placement: give --current, or a plan {plan} to start from")
            current = placement_from_dict({"placement": written[1]}, problem.topology, problem.cluster, plan)
        return cls(problem, monitor, plan_dir, log, current, policy, settings, history)

    # -- one period --------------------------------------------------------------------
    def step(self, now: float) -> Decision:
        """One period at time ``now`` (seconds, the monitor's clock): the decision, logged."""
        self.observed = None
        decision = dataclasses.replace(self._decide(now), storm_runs_plan=self.observed)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "a") as fh:
            fh.write(dumps_json(decision.to_dict(), indent=None) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        return decision

    def _keep(self, now: float, windows, reason: str, now_pred=None, new_pred=None, moves: int = 0) -> Decision:
        return Decision(now, tuple(windows), now_pred, new_pred, moves, "keep", reason, history=self.history)

    def failed(self, now: float, error: BaseException) -> Decision:
        """A period that failed (a record being written, a solver error): logged as a keep."""
        decision = self._keep(now, (), f"period failed: {type(error).__name__}: {str(error)[:300]}")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "a") as fh:
            fh.write(dumps_json(decision.to_dict(), indent=None) + "\n")
        return decision

    def _decide(self, now: float) -> Decision:
        s, topo = self.settings, self.problem.topology
        foreign = self._foreign_plan()
        if foreign:
            return self._keep(now, (), foreign)
        not_now = self._storm_runs(now)
        if not_now:
            return self._keep(now, (), not_now)
        margin = max(1.0, 0.2 * s.window_s)   # workers write a window a moment after it ends
        start = now - (s.horizon_windows + 2) * s.window_s - margin
        load = records.read_monitor(self.monitor, "load", start, now, live=True)
        traffic = records.read_monitor(self.monitor, "traffic", start, now, live=True)
        ended = sorted({float(w) for w in load["window_start"]}) if len(load) else []
        ended = [w for w in ended if w + s.window_s <= now - margin]
        if not ended or ended[-1] + s.window_s < now - margin - 2 * s.window_s:
            last = f"; the last ends at t={ended[-1] + s.window_s:.0f}" if ended else ""
            return self._keep(now, ended[-1:], f"monitor gap: no window in the last {2 * s.window_s:g} s{last}")
        labels = set(topo.task_labels)
        unknown = sorted((set(load["task"]) | set(traffic.get("src_task", [])) | set(traffic.get("dst_task", []))) - labels)
        if unknown:
            return self._keep(now, ended[-1:], f"the topology changed shape: task {quote(unknown[0])} is not one of "
                                              f"{quote(topo.name)}'s")
        reported = {w: load.loc[load["window_start"] == w, "task"].nunique() for w in ended}
        if reported[ended[-1]] < topo.n_tasks and len(ended) > 1:
            ended = ended[:-1]   # the newest window not yet written by every worker: the ones before it
        windows = ended[-s.horizon_windows:]
        if windows[-1] + s.window_s < now - margin - 2 * s.window_s:
            return self._keep(now, windows[-1:], f"monitor gap: no complete window in the last {2 * s.window_s:g} s")
        partial = [w for w in windows if reported[w] < topo.n_tasks]
        if partial:
            return self._keep(now, windows, f"partial window at t={partial[0]:.0f}: {reported[partial[0]]} of "
                                            f"{topo.n_tasks} tasks reported")
        if self.history.last_change is not None and windows[0] < self.history.last_change:
            return self._keep(now, windows, f"settling: the horizon still holds windows from before the change at "
                                            f"t={self.history.last_change:.0f}")
        load = load[load["window_start"].isin(windows)]
        shares = key_shares(load, topo)
        cut = ""
        if self.history.last_change is not None:
            self.back_at = windows[0] if self.back_at is None else self.back_at
            if windows[0] < self.back_at + s.rewarm_s:
                moved = load_moved(self.decided_on, shares)
                if moved is None or moved[1] <= s.load_change:
                    return self._keep(now, windows, f"settling: the workers restarted by the change at "
                                                    f"t={self.history.last_change:.0f} have run {windows[0] - self.back_at:.0f} "
                                                    f"of the {s.rewarm_s:g} s they need to warm up")
                cut = (f"; the load changed ({moved[1]:.0%} of {moved[0]}'s tuples moved between its tasks): "
                       "re-warm wait cut short")
        ends = [load[load["window_start"] == w] for w in (windows[0], windows[-1])]   # the oldest and newest window
        rising = _rise(*ends, topo, s.window_s)
        if rising > s.steady_tolerance:
            return self._keep(now, windows, f"settling: the rate rose {rising:.0%} over the horizon (above "
                                            f"{s.steady_tolerance:.0%}): not a steady state yet")
        changing = load_moved(*(key_shares(end, topo) for end in ends))
        if changing is not None and changing[1] > s.load_change:
            return self._keep(now, windows, f"settling: the load is changing ({changing[1]:.0%} of {changing[0]}'s tuples "
                                            f"moved between its tasks within the horizon, above {s.load_change:.0%})")
        traffic = traffic[traffic["window_start"].isin(windows)] if len(traffic) else traffic
        seconds = len(windows) * s.window_s
        problem = Problem.from_topology(topo, self.problem.cluster, graph=self._graph(traffic, seconds))
        bolts, spouts = records.throughput(load, topo, seconds)
        if bolts + spouts <= 0:
            return self._keep(now, windows, "no tuple executed in the horizon")
        rates = records.rates(load, traffic, topo, seconds)
        run = MeasuredRun(s.point, self.current, bolts, spouts,
                          *rate_maps(rates),
                          cpu_budget=s.point.cpu_budget,
                          offered_source_rate=offered_rate(s.point, topo))
        model = calibrate(problem, run)
        predicted_now = model.predict(self.current).throughput
        if not (math.isfinite(predicted_now) and predicted_now > 0):
            return self._keep(now, windows, "no finite prediction of the running placement")
        history, judged = self.history, None
        if self.pending is not None and history.above > 0:   # the plan being confirmed, on this period's model
            plan, proposed = self.pending
            judged = self._judge(plan, model, predicted_now, now, history)
            if judged.apply or judged.history.above > history.above:   # it holds: its count goes on
                judged = judged._replace(why=f"{judged.why} (the plan proposed at t={proposed:.0f})")
            else:
                history, judged = judged.history, None   # it no longer holds: the count starts again on a new candidate
        if judged is None:
            candidate, why_not, searched = in_child(_candidate, problem, self.current, model, s, self.policy.from_scratch)
            if candidate is None:
                self.history, self.pending = history, None
                return self._keep(now, windows, f"no candidate ({why_not}){searched}")
            judged = self._judge(candidate, model, predicted_now, now, history)
            judged = judged._replace(why=judged.why + searched)
            self.pending = (candidate, now) if judged.history.above > 0 else None
        apply, why, history, candidate, predicted_new, moves, gain = judged
        why += cut
        if not apply:
            self.history = history
            return self._keep(now, windows, why, predicted_now, predicted_new, moves)
        candidate = on_fresh_ports(self.current, candidate, problem.cluster)   # the same plan, no port reused
        document = plan_document(topo, problem.cluster, candidate,
                                 streamplace_autopilot={"t": now, "policy": self.policy.name, "gain": gain})
        self.plan_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.plan_dir / f"{storm_name(topo)}.json", dumps_json(document) + "\n")
        self.current, self.history, self.planned, self.back_at = candidate, history, document["placement"], None
        self.decided_on, self.pending = shares, None
        return Decision(now, tuple(windows), predicted_now, predicted_new, moves, "apply", why, document["placement"],
                        history)

    def _judge(self, candidate: Placement, model, predicted_now: float, now: float, history: History) -> "Judged":
        """The policy's verdict on ``candidate``, on this period's calibrated ``model``."""
        moves = int(np.count_nonzero((candidate.node != self.current.node) | (candidate.worker != self.current.worker)))
        predicted_new = model.predict(candidate).throughput
        if not math.isfinite(predicted_new):
            return Judged(False, "no finite prediction of the candidate", History(0, history.last_change), candidate,
                          None, moves, None)
        gain = predicted_new / predicted_now - 1 - (self.settings.migration_cost if self.policy.pays_migration else 0.0)
        return Judged(*self.policy.decide(gain, moves, now, history), candidate, predicted_new, moves, gain)

    def _foreign_plan(self) -> str | None:
        """Why the plan file is not the loop's own (it does not parse, or holds another placement
        than the running one), or None. Someone else wrote it: the loop writes no plan over it
        until it is the running placement again or removed (the plugin, for its part, keeps the
        running assignment when a plan does not parse)."""
        plan = self.plan_dir / f"{storm_name(self.problem.topology)}.json"
        try:
            on_disk = _plan_on_disk(plan)
        except (ValueError, OSError) as exc:
            return f"the plan file is not a plan ({str(exc)[:200]}): someone else wrote it; no plan until it is removed"
        if on_disk is not None and on_disk[1] != self.planned:
            return ("the plan file holds another placement than the loop's plan: someone else wrote it; no plan "
                    "until it is the loop's plan again or removed")
        return None

    def _storm_runs(self, now: float) -> str | None:
        """Why no plan can be made now from what Storm runs (the plugin's record), or None. When
        Storm runs another placement than the loop's plan, and Nimbus has read the plan, that
        placement becomes the running one (the plugin rejected the plan, or Storm moved tasks)."""
        topo, cluster = self.problem.topology, self.problem.cluster
        try:
            seen = read_assigned(self.plan_dir, topo)
        except (ValueError, OSError) as exc:
            return f"what Storm runs cannot be read: {str(exc)[:200]}"
        if seen is None:
            return None
        self.observed = seen.assignment == self.planned
        if now - seen.round_s > SILENT_ROUNDS * seen.round_every_s:
            return (f"Nimbus has not scheduled for {now - seen.round_s:.0f} s ({SILENT_ROUNDS} rounds of "
                    f"{seen.round_every_s:g} s): no plan until it does")
        if seen.dead:
            return (f"node {', '.join(seen.dead)} has no live supervisor (Nimbus' round at t={seen.round_s:.0f}): "
                    "no plan while the cluster is short of it")
        if len(seen.assignment) < topo.n_tasks:
            return f"Storm has assigned {len(seen.assignment)} of {topo.n_tasks} tasks ({seen.status})"
        if seen.assignment == self.current.to_mapping(topo.task_labels, cluster):
            return None
        plan = self.plan_dir / f"{storm_name(topo)}.json"
        if plan.is_file() and (seen.plan_modified_s is None or plan.stat().st_mtime > seen.plan_modified_s + 1e-3):
            return "waiting for Nimbus' next round to read the plan"
        try:
            self.current = placement_from_dict({"placement": seen.assignment}, topo, cluster, "Storm's assignment")
            self.pending = None
        except ValueError as exc:
            return f"Storm's assignment is not a placement of this job: {str(exc)[:200]}"
        return f"Storm runs another placement than the loop's plan ({seen.status}): taken as the running one"

    def _graph(self, traffic, seconds: float) -> TaskGraph:
        """The horizon's measured tuples/s per task pair as edge weights."""
        topo = self.problem.topology
        if not len(traffic):
            return TaskGraph.from_edges(topo.n_tasks, [], [], [], topo.task_loads)
        pairs = traffic.groupby(["src_task", "dst_task"])["tuples"].sum() / seconds
        src = [topo.task_id(a) for a, _ in pairs.index]
        dst = [topo.task_id(b) for _, b in pairs.index]
        return TaskGraph.from_edges(topo.n_tasks, src, dst, pairs.to_numpy(dtype=float), topo.task_loads)


#: groupings by which the data decide the receiving task (the module docstring's load change)
KEY_ROUTED = ("fields", "global", "all")


def key_shares(load, topo) -> dict[str, np.ndarray]:
    """Each operator whose every input is key-routed (:data:`KEY_ROUTED`), with more than one
    task: the share of its tuples each of its tasks executed in ``load`` (the load records)."""
    if not len(load):
        return {}
    executed = load.groupby("task")["executed"].sum().reindex(topo.task_labels, fill_value=0).to_numpy(dtype=float)
    out = {}
    for op in topo.operators:
        inputs = topo.upstream(op.name)
        if op.parallelism < 2 or not inputs or any(st.grouping not in KEY_ROUTED for st in inputs):
            continue
        tasks = topo.tasks_of(op.name)
        counts = executed[tasks.start:tasks.stop]
        if counts.sum() > 0:
            out[op.name] = counts / counts.sum()
    return out


def load_moved(before: dict[str, np.ndarray] | None, after: dict[str, np.ndarray]) -> tuple[str, float] | None:
    """(the operator, the share of its tuples) that moved most between its tasks from ``before``
    to ``after`` (:func:`key_shares`): the total variation distance, half the shares' absolute
    differences summed. None without an operator in both."""
    moved = [(name, 0.5 * float(np.abs(after[name] - before[name]).sum()))
             for name in sorted(after) if before is not None and name in before]
    return max(moved, key=lambda m: m[1]) if moved else None


def _rise(oldest, newest, topo, window_s: float) -> float:
    """How much more the horizon's newest window executed than its oldest (their load records;
    every task's tuples, :func:`~streamplace.storm.records.throughput`), as a share of the
    oldest's; 0 for one window."""
    first, last = (sum(records.throughput(w, topo, window_s)) for w in (oldest, newest))
    return last / first - 1 if first > 0 else (math.inf if last > 0 else 0.0)


#: a search that got less than this share of a core over its wall-clock budget was starved
#: (module docstring, step 4): a free core's search got 0.87 (1.61 CPU s in 1.84 s, 2026-11-29,
#: beside a test run), the testbed's starved ones did under 1 s of a free core's work in 2 s
STARVED_SHARE = 0.75


def _candidate(problem: Problem, current: Placement, model, s: Settings, from_scratch: bool):
    """(the placement ``lns`` proposes on the calibrated ``model``, or None; why not; a note on a
    starved search, or ""). Run in a child process (:func:`~streamplace.interrupt.in_child`): native
    code that ends it fails one period, which is logged, instead of the loop and the job's run
    beside it (a CP-SAT abort, as one ended a process mid-campaign, already ends only ``lns``'s own
    child: no candidate, its reason naming the failed check). ``time_limit`` is a budget of work: ``lns`` counts wall-clock seconds, so a search that got
    less than :data:`STARVED_SHARE` of a core over them (a busy machine) runs again with its wall
    limit divided by the share it got, at most ``search_stretch`` times ``time_limit``."""
    params = {"objective": "throughput", "seed": 0}
    mapping = None if from_scratch else {lab: (w["node"], w["worker"]) for lab, w in
                                         current.to_mapping(problem.topology.task_labels, problem.cluster).items()}
    limit, note = s.time_limit, ""
    while True:
        cpu, wall = cpu_seconds(), time.perf_counter()   # lns searches in a child process: its CPU counts
        if from_scratch:
            result = schedule(problem, "lns", params, time_limit=limit, model=model).result
        else:
            result = reschedule(problem, mapping, "lns", params, time_limit=limit, max_moves=s.max_moves,
                                model=model).result
        cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
        share = cpu / wall if wall > 0 else 1.0
        if note or share >= STARVED_SHARE or wall < 0.8 * limit or s.search_stretch <= 1:
            break   # not starved, or ended on its own, or stretched once already, or never to be
        limit = s.time_limit * min(s.search_stretch, 1.0 / max(share, 1e-3))
        note = f"; the search got {share:.0%} of a core, so it ran again with {limit:.1f} s"
    if result.placement is None:
        return None, f"{result.status}: {result.message}", note
    return result.placement, "", note


def run(pilot: Autopilot, *, period_s: float, periods: int | None = None, on_decision=None, clock=None, sleep=None) -> int:
    """Runs ``pilot`` every ``period_s`` seconds (the first period at once), ``periods`` times
    (None: until interrupted: Ctrl-C or SIGTERM stop it between two writes, every write being
    atomic or one appended line); ``on_decision`` hears each decision. Returns the periods run."""
    clock, sleep = clock or time.time, sleep or time.sleep
    done = 0
    next_at = clock()
    while periods is None or done < periods:
        delay = next_at - clock()
        if delay > 0:
            sleep(delay)
        now = clock()
        try:
            decision = pilot.step(now)
        except (ValueError, OSError, RuntimeError) as exc:   # a record being written, a solver error: the next period
            decision = pilot.failed(now, exc)
        done += 1
        if on_decision is not None:
            on_decision(decision)
        next_at = max(next_at + period_s, clock())   # a long period delays the next, never a burst of them
    return done


def _plan_on_disk(plan: Path):
    """(the time the autopilot wrote it, or None; its placement) of the plan file, or None when
    there is none. Read without recording it as an input: the loop replaces it."""
    if not plan.is_file():
        return None
    doc = parse_document(plan.read_bytes(), plan, "json")
    if not isinstance(doc, dict) or not isinstance(doc.get("placement"), dict):
        raise ValueError(f"{plan}: not a plan (no placement mapping)")
    stamp = doc.get("streamplace_autopilot", {})
    t = stamp.get("t") if isinstance(stamp, dict) and isinstance(stamp.get("t"), (int, float)) else None
    return t, doc["placement"]


class BesideRun:
    """The autopilot beside a measured ``storm run`` (``--autopilot``): it starts when the job's
    workers run, steps every ``period_s`` on the run's monitor directory, rewrites the run's plan
    file (which the plugin applies on Nimbus' next round), logs to ``DIR/autopilot.jsonl``, and
    adds ``plans`` to ``run.json``: each applied plan's ``t``, ``placement`` and ``matched``:
    whether Storm ran it before the next plan, as the periods after it read the plugin's record
    (``storm_runs_plan``); without that record, for the last plan whether Storm's assignment at
    the end of the run is that plan, and null for the others. ``after_s`` > 0 joins the job that
    long after its workers run, as an operator starts the loop beside a job already running: its
    first period then reads a full horizon of the running job."""

    def __init__(self, problem: Problem, placement: Placement, policy: Policy, settings: Settings, period_s: float,
                 after_s: float = 0.0):
        if not after_s >= 0:
            raise ValueError(f"the autopilot's start after the job's must be >= 0 s, got {after_s}")
        self.problem, self.placement, self.policy, self.settings, self.period_s = problem, placement, policy, settings, period_s
        self.after_s = after_s
        self.pilot: Autopilot | None = None
        self._stop = None
        self._thread = None
        self.error: str | None = None

    def start(self, monitor: Path, plan_dir: Path, out_dir: Path) -> None:
        import threading
        self.pilot = Autopilot(self.problem, monitor, plan_dir, Path(out_dir) / "autopilot.jsonl", self.placement,
                               self.policy, self.settings)
        self._stop = threading.Event()

        def loop():
            import time
            next_at = time.time() + self.after_s + self.period_s
            while not self._stop.wait(max(0.0, next_at - time.time())):
                now = time.time()
                try:
                    self.pilot.step(now)
                except Exception as exc:   # one period failed (a window being written, a solver error): logged, go on
                    self.error = f"{type(exc).__name__}: {exc}"
                    self.pilot.failed(now, exc)
                next_at = max(next_at + self.period_s, time.time())
        self._thread = threading.Thread(target=loop, name="autopilot", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=60.0)   # a period's lns is bounded by its time limit
            self._thread = None

    def summary(self, run: dict) -> dict:
        log = self.pilot.log if self.pilot is not None else None
        records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] \
            if log is not None and log.is_file() else []
        applied = [r for r in records if r["decision"] == "apply"]
        plans = []
        for i, r in enumerate(applied):
            nxt = applied[i + 1]["t"] if i + 1 < len(applied) else math.inf
            seen = [x.get("storm_runs_plan") for x in records if r["t"] < x["t"] < nxt and x.get("storm_runs_plan") is not None]
            if seen:   # the plugin's record, read every period: did Storm run this plan before the next one?
                matched = any(seen)
            elif i == len(applied) - 1:
                matched = run.get("assignment") == r["placement"]
            else:
                matched = None
            plans.append({"t": r["t"], "placement": r["placement"], "matched": matched})
        out = {"plans": plans, "autopilot_policy": self.policy.name}
        if self.error:
            out["autopilot_error"] = self.error
        return out
