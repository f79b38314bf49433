"""When each policy applies a candidate, worked by hand."""

import pytest

from streamplace.autopilot.policy import EveryPeriod, Greedy, History, Hysteresis


def run(policy, gains, moves=3, step=10.0):
    history, out = History(), []
    for i, gain in enumerate(gains):
        apply, why, history = policy.decide(gain, moves, i * step, history)
        out.append(apply)
    return out


def test_hysteresis_needs_the_gain_confirmed_and_never_flaps_around_the_threshold():
    ours = Hysteresis(min_gain=0.05, confirm=2, cooldown_s=0)
    assert run(ours, [0.06, 0.06]) == [False, True]
    # a gain hovering around the threshold: one period below starts the count again
    assert run(ours, [0.06, 0.04, 0.06, 0.04, 0.06]) == [False] * 5
    # [F]'s Greedy follows every change (its reschedule timeout set to the period here)
    assert run(Greedy(timeout_s=10.0), [0.06, 0.04, 0.06, 0.04, 0.06]) == [True] * 5


def test_greedy_fires_above_one_percent_at_most_once_a_minute():
    """[F]'s configuration: an improvement above 1 % triggers, a reschedule timeout of 60 s.
    Periods of 10 s: +0.5 % and +1 % do not fire; +2 % at t=20 does; t=30-70 are within 60 s of
    it; t=80 is 60 s after it and fires."""
    assert run(Greedy(), [0.005, 0.01, 0.02, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]) == [False] * 2 + [True] + [False] * 5 + [True]
    assert Hysteresis.pays_migration and EveryPeriod.pays_migration and not Greedy.pays_migration


def test_hysteresis_cools_down_after_a_change():
    ours = Hysteresis(min_gain=0.05, confirm=1, cooldown_s=25)
    # applied at t=0; t=10 and t=20 are within 25 s; t=30 is not
    assert run(ours, [0.1, 0.1, 0.1, 0.1]) == [True, False, False, True]


def test_nothing_to_move_is_never_applied():
    for policy in (Hysteresis(confirm=1), EveryPeriod(), Greedy()):
        assert run(policy, [0.5], moves=0) == [False]
    assert run(EveryPeriod(), [-0.2, 0.0]) == [True, True]   # Aniello's: whatever differs, every period
    assert EveryPeriod.from_scratch and not Hysteresis.from_scratch


def test_bad_thresholds_are_refused():
    with pytest.raises(ValueError):
        Hysteresis(confirm=0)


def test_a_policy_takes_the_thresholds_it_has_and_no_others():
    """The command offers every policy the same thresholds; each takes its own fields of them."""
    from streamplace.autopilot.policy import POLICIES, EveryPeriod, Greedy, Hysteresis
    options = {"min_gain": 0.1, "confirm": 3, "cooldown_s": 5.0}
    assert POLICIES["hysteresis"].from_options(**options) == Hysteresis(min_gain=0.1, confirm=3, cooldown_s=5.0)
    assert POLICIES["greedy"].from_options(**options) == Greedy()
    assert POLICIES["every-period"].from_options(**options) == EveryPeriod()
    with pytest.raises(ValueError):
        Hysteresis.from_options(confirm=0)
