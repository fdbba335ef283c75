"""The rollout's external seats (``meld8_env.rollout.rollout(..., external=f)``): a Python policy inside a C rollout.

Where a seat's policy is ``"external"`` the C rollout stops, ``f(obs, masks)`` decides every waiting record at once
and the rollout goes on. Played by the C bots' Python twins (``act_batch_python``), the external seats must give
exactly what the C bots give in those seats: the same records (every field), steps and score changes, whatever the
threads, with ``random`` seats beside them (their splitmix streams carry across the pauses).
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.defensive import DefensiveAgent
from agents.greedy import GreedyAgent
from meld8_env.codes import Phase
from meld8_env.engine.fast import STATE_DTYPE
from meld8_env.engine.records import check_conservation, step_records
from meld8_env.policies import EXTERNAL, POLICY, policy_act
from meld8_env.rollout import rollout
from meld8_env.rules import RuleConfig
from tests.test_cbots import RULES, collect_states


def _as_external(pol: np.ndarray, seat_mask: np.ndarray) -> np.ndarray:
    out = pol.astype(object)
    out[seat_mask] = EXTERNAL
    return out.astype(str)


@pytest.mark.parametrize("key", sorted(RULES))
@pytest.mark.parametrize("until", ["hand", "game"])
@pytest.mark.parametrize("twin", ["greedy", "defensive"])
def test_external_twin_seats_play_exactly_as_the_c_bot(key, until, twin):
    rules = RULES[key]
    recs, _, _ = collect_states(rules, 300, seed=44)
    rng = np.random.default_rng(9)
    pick = rng.choice(len(recs), 40 if until == "hand" else 6, replace=False)
    P = rules.num_players
    names = np.array(["random", "greedy", "defensive"])
    pol = names[rng.integers(0, 3, (len(pick), P))]
    ext = rng.random((len(pick), P)) < 0.5  # about half the seats decided in Python
    pol[ext] = twin
    seeds = rng.integers(0, 2**63, len(pick), dtype=np.uint64)
    agent = (GreedyAgent if twin == "greedy" else DefensiveAgent)(rules)
    calls = []

    def external(obs, masks):
        calls.append(len(obs))
        return agent.act_batch_python(obs, masks)

    want, got = recs[pick].copy(), recs[pick].copy()
    res_c = rollout(rules, want, pol, seeds, until=until)
    res_x = rollout(rules, got, _as_external(pol, ext), seeds, until=until, external=external)
    assert calls, "the external seats were never asked"
    differ = [f for f in STATE_DTYPE.names if not np.array_equal(want[f], got[f])]
    assert not differ, f"external seats changed the records' fields {differ}"
    np.testing.assert_array_equal(res_x.steps, res_c.steps)
    np.testing.assert_array_equal(res_x.deltas, res_c.deltas)
    np.testing.assert_array_equal(res_x.placements, res_c.placements)


def test_external_rollout_is_thread_independent():
    rules = RULES["3p"]
    recs, _, _ = collect_states(rules, 64, seed=3)
    seeds = np.arange(len(recs), dtype=np.uint64)
    pol = np.array([EXTERNAL, "random", "defensive"])
    agent = GreedyAgent(rules)
    a, b = recs.copy(), recs.copy()
    ra = rollout(rules, a, pol, seeds, until="game", threads=1, external=agent.act_batch)
    rb = rollout(rules, b, pol, seeds, until="game", threads=2, external=agent.act_batch)
    assert all(np.array_equal(a[f], b[f]) for f in STATE_DTYPE.names)
    np.testing.assert_array_equal(ra.steps, rb.steps)


def _states(n: int = 16):
    rules = RuleConfig()  # without penalty mode an illegal action is refused (with it, played as a chombo, R41)
    recs, _, _ = collect_states(rules, 64, seed=1, illegal_rate=0.0)
    return rules, recs[:n].copy()


def test_external_seats_need_a_policy_in_one_line():
    rules, recs = _states()
    before = recs.tobytes()
    with pytest.raises(ValueError, match="seat_policies name 'external' seats: pass external="):
        rollout(rules, recs, [EXTERNAL, "greedy", "greedy"], np.zeros(len(recs), np.uint64))
    with pytest.raises(TypeError, match="external must be a function"):
        rollout(rules, recs, [EXTERNAL, "greedy", "greedy"], np.zeros(len(recs), np.uint64), external=3)
    assert recs.tobytes() == before, "nothing is stepped before every check passed"


@pytest.mark.parametrize(
    "answer, message",
    [
        (lambda obs, masks: np.zeros(len(obs) + 1, np.int64), "external returned int64 of shape"),
        (lambda obs, masks: np.zeros(len(obs), np.float64), "give .* integer actions"),
        (lambda obs, masks: np.full(len(obs), 61, np.int64), "external: action 61 is not legal in record"),
        # -1 is the engine's "hold still": as an answer it would leave the record waiting forever
        (lambda obs, masks: np.full(len(obs), -1, np.int64), "action -1 for record 0 is not an action id 0..63"),
        (lambda obs, masks: np.full(len(obs), 2**64 - 1, np.uint64), "action 18446744073709551615 for record 0 is"),
        (lambda obs, masks: np.full(len(obs), 64, np.int64), "action 64 for record 0 is not an action id 0..63"),
    ],
)
def test_external_answers_are_checked_and_leave_the_records_as_they_were(answer, message):
    rules, recs = _states()
    before = recs.copy()
    with pytest.raises(ValueError, match=message):
        rollout(rules, recs, [EXTERNAL] * 3, np.zeros(len(recs), np.uint64), external=answer)
    # the first C pass ran before the answer could be checked: it ran on a copy
    differ = [f for f in STATE_DTYPE.names if not np.array_equal(recs[f], before[f])]
    assert not differ, f"a refused answer changed the caller's records: {differ}"


def test_an_error_inside_external_leaves_the_records_as_they_were():
    rules, recs = _states()
    before = recs.copy()

    def broken(obs, masks):
        raise ZeroDivisionError("inside the policy")

    with pytest.raises(ZeroDivisionError):
        rollout(rules, recs, [EXTERNAL, "greedy", "greedy"], np.zeros(len(recs), np.uint64), external=broken)
    assert all(np.array_equal(recs[f], before[f]) for f in STATE_DTYPE.names)


@pytest.mark.parametrize("key", sorted(RULES))
def test_records_carrying_the_last_hands_result_play_their_live_deal_as_the_c_rollout_does(key):
    """A record whose previous hand has just ended keeps its ``result`` while the next deal is live; the C rollout
    plays that deal to its end (every step clears the result first), so an external seat acting first must too."""
    rules = RULES[key]
    recs, _, _ = collect_states(rules, 600, seed=44)
    sel = np.flatnonzero((recs["result"] != 0) & (recs["phase"] != int(Phase.OVER)) & (recs["acting"] >= 0))
    assert len(sel) >= 5, "the bot games should hold records right after a hand"
    P = rules.num_players
    agent = GreedyAgent(rules)
    seeds = np.arange(len(sel), dtype=np.uint64)
    want, got = recs[sel].copy(), recs[sel].copy()
    res_c = rollout(rules, want, ["greedy"] * P, seeds, until="hand")
    res_x = rollout(rules, got, [EXTERNAL] * P, seeds, until="hand", external=agent.act_batch_python)
    assert (res_c.steps > 0).all()
    np.testing.assert_array_equal(res_x.steps, res_c.steps)
    assert all(np.array_equal(want[f], got[f]) for f in STATE_DTYPE.names)


def test_the_step_cap_holds_across_external_pauses(monkeypatch):
    """Each C call counts its steps from the pause: the per-record safety stop must count the whole rollout."""
    import meld8_env.rollout as ro

    rules, recs = _states(4)
    monkeypatch.setattr(ro, "MAX_STEPS", 40)
    agent = GreedyAgent(rules)
    with pytest.raises(RuntimeError, match="did not finish"):
        ro.rollout(rules, recs.copy(), [EXTERNAL, "greedy", "greedy"], np.zeros(4, np.uint64), until="game",
                   external=agent.act_batch_python)  # fmt: skip


def test_a_seat_that_died_in_a_claim_window_leaves_a_consistent_record():
    """Penalty mode (R41): an illegal claim answer kills the seat and plays PASS; the seats still to be asked in
    that window stay asked. The record is the engine's own, so the state check must accept it."""
    rules = RULES["3p"]
    assert rules.penalty_mode
    recs, _, _ = collect_states(rules, 2000, seed=3, illegal_rate=0.0)
    win = np.flatnonzero((recs["phase"] == int(Phase.CLAIM)) & (recs["claim_n"] >= 2) & (recs["claim_idx"] == 0))
    assert len(win)
    one = recs[win[:4]].copy()
    illegal = np.array([next(a for a in range(64) if not int(m) >> a & 1) for m in one["mask"]])
    step_records(rules, one, illegal)  # checks the records after stepping
    assert (one["claim_idx"] == 1).all() and (one["phase"] == int(Phase.CLAIM)).all()
    check_conservation(one, rules)
    first = {"done": False}

    def once_illegal(obs, masks):
        out = masks.argmax(1)
        if not first["done"]:
            first["done"] = True
            out = np.array([int(np.flatnonzero(~m)[0]) for m in masks])
        return out

    res = rollout(rules, recs[win[:4]].copy(), [EXTERNAL] * 3, np.zeros(4, np.uint64), external=once_illegal)
    assert (res.steps > 0).all()


def test_only_rollouts_take_the_external_code():
    rules, recs = _states(4)
    with pytest.raises(ValueError, match="unknown policy 'external'"):
        policy_act(rules, recs, [EXTERNAL] * 4, np.zeros(4, np.uint64))
    with pytest.raises(ValueError, match=f"policy codes must be 0..{len(POLICY) - 1}, got 6"):
        policy_act(rules, recs, np.full(4, 6), np.zeros(4, np.uint64))
