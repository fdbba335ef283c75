"""Meld8Vector: shapes, illegal actions, autoreset, seeds, rewards."""

import numpy as np
import pytest

from meld8_env.engine.reference import IllegalActionError
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector

SHORT = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=0)


def test_shapes_after_reset():
    v = Meld8Vector(8, seed=1)
    v.reset()
    assert v.observation.shape == (8, v.obs_size) and v.observation.dtype == np.uint8
    assert v.action_mask.shape == (8, 64) and v.action_mask.dtype == bool
    assert v.current_seat.shape == (8,) and v.rewards.shape == (8, 3)
    assert v.action_mask.any(axis=1).all()


def test_illegal_action_raises_and_no_game_moves():
    v = Meld8Vector(4, seed=2)
    v.reset()
    before = v.engine.state.copy()
    acts = v.sample_actions()
    acts[2] = 52 if not v.action_mask[2, 52] else 63
    with pytest.raises(IllegalActionError, match=r"game 2: illegal action .* legal: "):
        v.step(acts)
    assert all(np.array_equal(v.engine.state[f], before[f]) for f in before.dtype.names)


def test_autoreset_same_step_and_final_scores():
    v = Meld8Vector(16, rules=SHORT, seed=3)
    v.reset()
    seen = 0
    for _ in range(2000):
        v.step(v.sample_actions())
        for i in np.flatnonzero(v.terminated):
            seen += 1
            assert v.final_scores[i].sum() == 90_000
            assert v.action_mask[i].any()  # already the next game's first observation
        if seen >= 10:
            break
    assert seen >= 10
    assert len(set(v.seeds.tolist())) == 16 and v.seeds.max() >= 16 + 3


def test_no_autoreset_keeps_game_over():
    v = Meld8Vector(2, rules=SHORT, seed=4, autoreset=False)
    v.reset()
    for _ in range(5000):
        if v.engine.over.all():
            break
        v.step(v.sample_actions())  # a finished game's action (0) is ignored
    assert v.engine.over.all() and not v.action_mask.any()
    v.step(np.zeros(2, np.int64))  # still fine: nothing moves
    v.reset()
    assert v.action_mask.any(axis=1).all()


def test_returns_sum_to_score_change():
    v = Meld8Vector(32, rules=SHORT, seed=5)
    v.reset()
    total = np.zeros((32, 3))
    done = np.zeros(32, bool)
    finals = np.zeros((32, 3))
    for _ in range(5000):
        v.step(v.sample_actions())
        total[~done] += v.rewards[~done]
        newly = v.terminated & ~done
        finals[newly] = v.final_scores[newly]
        done |= v.terminated
        if done.all():
            break
    assert done.all()
    assert np.allclose(total, (finals - 30_000) / 10_000, atol=1e-4)
    assert np.allclose(total.sum(axis=1), 0, atol=1e-4)


def test_same_seed_same_run():
    runs = []
    for _ in range(2):
        v = Meld8Vector(8, seed=9)
        v.reset()
        obs = []
        for _ in range(50):
            v.step(v.sample_actions())
            obs.append(v.observation.copy())
        runs.append(np.stack(obs))
    assert np.array_equal(runs[0], runs[1])
