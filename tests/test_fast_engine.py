"""The fast C engine against the readable reference engine, step by step; batch consistency; the
mask equals the set of actions ``step`` accepts. Mismatches name the seed and step."""

from __future__ import annotations

import random

import numpy as np
import pytest

from meld8_env.engine.fast import FastBatch
from meld8_env.engine.reference import Game
from meld8_env.observation import encode
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector

ONE_ROUND = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1)
CONFIGS = {
    "3p": ONE_ROUND,
    "3p-round4": RuleConfig(rounds=4, min_yaku_han=(2, 2, 2, 2), max_replays=0),
    "2p": RuleConfig.two_player(rounds=1, min_yaku_han=(1,), max_replays=1),
    "penalty": RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1, penalty_mode=True, placement_tie="share"),
    "kuikae-off": RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1, kuikae="off", value_triplet_han=2),
}


def compare_game(rules: RuleConfig, seed: int, all_seats: bool) -> int:
    """Play one random game on both engines; assert equality at every step. Returns steps."""
    ref = Game(rules, seed=seed)
    fast = FastBatch(1, rules)
    fast.reset(np.array([seed], np.uint64))
    rng = random.Random(seed)
    seats = range(ref.P) if all_seats else None
    steps = 0
    while True:
        where = f"seed {seed} step {steps}"
        assert fast.legal_actions(0) == ref.legal_actions(), where
        assert int(fast.acting[0]) == ref.acting_seat, where
        for seat in seats if seats is not None else [max(ref.acting_seat, 0)]:
            obs, _ = fast.observe(np.array([seat], np.int8))
            assert np.array_equal(obs[0], encode(ref, seat)), f"{where} seat {seat}"
        if ref.over:
            assert list(fast.state["final_scores"][0][: ref.P]) == ref.final_scores, where
            assert list(fast.state["placements"][0][: ref.P]) == ref.placements, where
            return steps
        legal = ref.legal_actions()
        action = rng.randrange(64) if rules.penalty_mode and rng.random() < 0.03 else rng.choice(legal)
        ref.step(action)
        fast.step(np.array([action]))
        steps += 1
        assert list(fast.state["scores"][0][: ref.P]) == ref.scores, where
        assert np.allclose(fast.state["rewards"][0][: ref.P], ref.rewards, atol=1e-6), where


def test_fast_equals_reference_2000_games():
    games = 0
    for name, rules in CONFIGS.items():
        n = 1200 if name == "3p" else 200
        for seed in range(n):
            compare_game(rules, seed, all_seats=seed % 10 == 0)
            games += 1
    assert games >= 2000


@pytest.mark.slow
def test_fast_equals_reference_100k_games():
    for seed in range(100_000):
        name = list(CONFIGS)[seed % len(CONFIGS)]
        compare_game(CONFIGS[name], 1_000_000 + seed, all_seats=seed % 20 == 0)


def test_full_length_games_match():
    for seed in range(6):
        compare_game(RuleConfig(max_replays=2), seed, all_seats=True)


def test_mask_equals_actions_step_accepts():
    rules = RuleConfig(rounds=2, min_yaku_han=(1, 2), max_replays=1)
    fb = FastBatch(1, rules)
    fb.reset(np.array([11], np.uint64))
    rng = random.Random(11)
    checked = 0
    while not fb.over[0] and checked < 400:
        saved = fb.state.copy()
        for a in range(64):
            fb.restore(slice(None), saved)
            rejected = fb.step(np.array([a]))[0]
            assert (not rejected) == (int(saved["mask"][0]) >> a & 1 == 1), f"action {a}"
            if rejected:  # a rejected action changes nothing
                assert all(np.array_equal(fb.state[f], saved[f]) for f in saved.dtype.names)
        fb.restore(slice(None), saved)
        fb.step(np.array([rng.choice(fb.legal_actions(0))]))
        checked += 1


def test_batch_of_64_equals_batches_of_one():
    B, S = 64, 500
    big = Meld8Vector(B, rules=ONE_ROUND, seed=S)
    big.reset()
    small = [Meld8Vector(1, rules=ONE_ROUND, seed=S + i) for i in range(B)]
    for v in small:
        v.reset()
    rng = np.random.default_rng(0)
    for _ in range(300):
        acts = big.sample_actions(rng)
        big.step(acts)
        for i, v in enumerate(small):
            v.step(acts[i : i + 1])
            assert np.array_equal(v.rewards[0], big.rewards[i]) and v.terminated[0] == big.terminated[i]
            assert np.array_equal(v.final_scores[0], big.final_scores[i])
            if big.terminated[i]:  # slot i's next game has the batch's next seed: follow it
                v.seeds[0] = big.seeds[i]
                v.engine.reset(big.seeds[i : i + 1])
                v._observe()
            assert np.array_equal(v.observation[0], big.observation[i])
            assert np.array_equal(v.action_mask[0], big.action_mask[i])


def test_invariants_after_every_step_of_thousands_of_games():
    from meld8_env.testing import check_batch_invariants

    rules = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1)
    v = Meld8Vector(256, rules=rules, seed=77, autoreset=True)
    v.reset()
    games = 0
    while games < 2000:
        v.step(v.sample_actions())
        games += int(v.terminated.sum())
        check_batch_invariants(v.engine.state, rules)
        if len(v.ended_states):
            assert (v.ended_states["final_scores"][:, :3].sum(axis=1) == 90_000).all()


def test_batch_invariant_checker_catches_corruption():
    from meld8_env.testing import check_batch_invariants

    v = Meld8Vector(4, rules=ONE_ROUND, seed=1)
    v.reset()
    for _ in range(30):
        v.step(v.sample_actions())
    st = v.engine.state
    check_batch_invariants(st, ONE_ROUND)
    for _field, mutate, message in [
        ("scores", lambda s: s["scores"].__setitem__((0, 0), 0), "zero-sum"),
        ("hands", lambda s: s["hands"].__setitem__((1, 0), s["hands"][1, 0] ^ np.uint64(1 << 40)), "accounted"),
        ("mask", lambda s: s["mask"].__setitem__(2, 0), "legal actions"),
    ]:
        bad = st.copy()
        mutate(bad)
        with pytest.raises(AssertionError, match=message):
            check_batch_invariants(bad, ONE_ROUND)
