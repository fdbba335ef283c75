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
from meld8_env.engine.fast import STATE_DTYPE
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
    ],
)
def test_external_answers_are_checked(answer, message):
    rules, recs = _states()
    with pytest.raises(ValueError, match=message):
        rollout(rules, recs, [EXTERNAL] * 3, np.zeros(len(recs), np.uint64), external=answer)


def test_only_rollouts_take_the_external_code():
    rules, recs = _states(4)
    with pytest.raises(ValueError, match="unknown policy 'external'"):
        policy_act(rules, recs, [EXTERNAL] * 4, np.zeros(4, np.uint64))
    with pytest.raises(ValueError, match=f"policy codes must be 0..{len(POLICY) - 1}, got 6"):
        policy_act(rules, recs, np.full(4, 6), np.zeros(4, np.uint64))
