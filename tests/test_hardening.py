"""Hardening: actions, numbers, seeds, replays and threads at every face refuse what they cannot take,
with one clear error - nothing silently truncated, wrapped or leaked."""

from __future__ import annotations

import hashlib
import json
import threading

import numpy as np
import pytest

import meld8_env
from meld8_env import hands
from meld8_env.actions import IllegalActionError
from meld8_env.engine.fast import FastBatch
from meld8_env.engine.reference import Game
from meld8_env.replay import ReplayError, load_replay, save_replay
from meld8_env.rules import RuleConfig, RuleConfigError
from meld8_env.vector import Meld8Vector

NOT_ACTIONS = [-1, 3.7, np.uint64(2**64 - 1), 64, 999, True, "5", None]


# -- actions (R43: illegal actions are refused; these are not actions at all) ----------------------
@pytest.mark.parametrize("bad", NOT_ACTIONS[:-1], ids=repr)
@pytest.mark.parametrize("penalty", [False, True])
def test_aec_refuses_non_actions_and_logs_nothing(bad, penalty):
    e = meld8_env.env(rules=RuleConfig(penalty_mode=penalty))
    e.reset(seed=3)
    agent = e.agent_selection
    with pytest.raises(IllegalActionError, match=r"illegal action .*; legal: \d+ \("):
        e.step(bad)
    assert e.unwrapped.action_log == [] and e.agent_selection == agent


def test_aec_legal_float_is_refused_not_truncated():
    e = meld8_env.env()
    e.reset(seed=3)
    legal = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])
    with pytest.raises(IllegalActionError, match="not an action id: a float"):
        e.step(legal + 0.7)


@pytest.mark.parametrize("bad", [-1, 3.7, 64, True], ids=repr)
def test_reference_engine_refuses_non_actions_in_every_mode(bad):
    for penalty in (False, True):
        g = Game(RuleConfig(penalty_mode=penalty), seed=1)
        with pytest.raises(IllegalActionError):
            g.step(bad)
        assert g.dead == [False] * g.P  # no penalty for something that is not an action


@pytest.mark.parametrize("penalty", [False, True])
def test_batched_faces_refuse_wrapped_and_out_of_range_actions(penalty):
    rules = RuleConfig(penalty_mode=penalty)
    v = Meld8Vector(2, rules=rules, seed=1)
    v.reset()
    fb = FastBatch(2, rules)
    fb.reset(np.array([1, 2], np.uint64))
    for face in (v.step, fb.step):
        for bad in (np.array([2**64 - 1, 0], np.uint64), np.array([999, 0]), np.array([0.5, 1.0]), np.array([1, 2, 3])):
            with pytest.raises((IllegalActionError, ValueError)):
                face(bad)


# -- numbers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "option",
    [
        {"starting_score": 5_000_000_000},
        {"starting_score": 2_147_483_647},
        {"points_per_han": 2_000_000_000},
        {"yakuman_value": 1_200_000_000},
        {"chombo_payment": 1_100_000_000},
        {"starting_score": 99999999999999999999999},
        {"counted_yakuman_han": 1000},
    ],
)
def test_rule_options_that_could_overflow_the_engine_are_refused(option):
    with pytest.raises(RuleConfigError):
        RuleConfig(**option)
    with pytest.raises(RuleConfigError):
        RuleConfig.load(option)


def test_largest_accepted_rules_play_without_overflow():
    """At the bound, the C engine's final scores equal the reference engine's (no wrap)."""
    rules = RuleConfig(starting_score=900_000_000, points_per_han=20_000_000, yakuman_value=100_000_000)
    v = Meld8Vector(8, rules=rules, seed=5, autoreset=False)
    v.reset()
    refs = [Game(rules, seed=5 + i) for i in range(8)]
    rng = np.random.default_rng(0)
    while not all(g.over for g in refs):
        acts = np.zeros(8, np.int64)
        for i, g in enumerate(refs):
            if not g.over:
                acts[i] = rng.choice(g.legal_actions())
                g.step(int(acts[i]))
        v.step(acts)
        for o in v.game_outcomes():
            assert list(o.final_scores) == refs[o.game].final_scores
            assert sum(o.final_scores) == 3 * 900_000_000


def test_list_options_are_accepted_on_every_path():
    a = RuleConfig(min_yaku_han=[1, 1, 1, 2, 2, 2], placement_points=[20_000, 0, -20_000])
    b = RuleConfig.load({"min_yaku_han": [1, 1, 1, 2, 2, 2]})
    assert a == b == RuleConfig()


@pytest.mark.parametrize("seed", [-1, 2**64, 11.5, "7", True])
def test_seeds_outside_0_to_2_63_are_refused(seed):
    with pytest.raises(ValueError, match=r"seed must be an integer 0..2\*\*63"):
        Meld8Vector(2, seed=seed)
    with pytest.raises(ValueError, match=r"seed must be an integer 0..2\*\*63"):
        Game(seed=seed)
    with pytest.raises(ValueError, match=r"seed must be an integer 0..2\*\*63"):
        meld8_env.env().reset(seed=seed)


# -- replays ---------------------------------------------------------------------------------------
def _forged(tmp_path, **changes):
    """A real replay with fields changed and the checksum recomputed (a checksum proves nothing)."""
    e = meld8_env.env()
    e.reset(seed=2)
    while e.agents:
        a = e.agent_selection
        if e.terminations[a]:
            e.step(None)
            continue
        e.step(int(np.flatnonzero(e.observe(a)["action_mask"])[0]))
    path = tmp_path / "r.json"
    e.unwrapped.save_replay(str(path))
    doc = json.loads(path.read_text())
    doc.update(changes)
    body = {k: v for k, v in doc.items() if k != "checksum"}
    doc["checksum"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    path.write_text(json.dumps(doc))
    return path, doc


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"seed": None}, "'seed' must be an integer"),
        ({"seed": 11.5}, "'seed' must be an integer"),
        ({"actions": None}, "'actions' must be a list"),
        ({"actions": [1.0, 2.5]}, "'actions' must be a list of action ids"),
        ({"result": []}, "'result' must hold"),
        ({"rules": "default"}, "'rules' must be a mapping"),
    ],
)
def test_forged_replays_are_refused_before_simulating(tmp_path, changes, message):
    path, _ = _forged(tmp_path, **changes)
    with pytest.raises(ReplayError, match=message):
        load_replay(path)


def test_an_honest_replay_still_loads(tmp_path):
    path, doc = _forged(tmp_path)
    _, game = load_replay(path)
    assert game.final_scores == doc["result"]["final_scores"]
    save_replay(tmp_path / "again.json", RuleConfig(), doc["seed"], doc["actions"])


# -- threads ---------------------------------------------------------------------------------------
def test_distance_threads_do_not_pile_up():
    rng = np.random.default_rng(1)
    h = np.array([sum(1 << int(c) for c in rng.choice(53, 7, replace=False)) for _ in range(300)], np.uint64)
    before = threading.active_count()
    ref = hands.distance_batch(h, threads=1)
    for k in range(2, 40):
        assert np.array_equal(hands.distance_batch(h, threads=k), ref)
    assert threading.active_count() - before <= hands.MAX_THREADS
