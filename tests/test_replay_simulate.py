"""Replay files (exact re-simulation, clear errors) and the simulate command."""

import json

import numpy as np
import pytest

import meld8_env
from meld8_app.cli import main
from meld8_env.replay import ReplayError, load_replay, make_replay
from meld8_env.rules import RuleConfig
from meld8_env.simulate import simulate

SHORT = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=2)


def finished_env(seed=3, rules=SHORT):
    e = meld8_env.env(rules=rules)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not all(e.terminations.values()):
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        e.step(int(rng.choice(legal)))
    return e


def test_round_trip_from_the_aec_env(tmp_path):
    e = finished_env()
    path = tmp_path / "game.json"
    e.unwrapped.save_replay(str(path))
    doc, game = load_replay(path)
    finals = [e.infos[a]["final_score"] for a in e.possible_agents]
    assert game.final_scores == finals == doc["result"]["final_scores"]
    assert doc["rules_hash"] == SHORT.rules_hash


def _write(tmp_path, doc):
    p = tmp_path / "r.json"
    p.write_text(json.dumps(doc))
    return p


def test_tampered_edited_or_foreign_files_are_clear_errors(tmp_path):
    e = finished_env()
    doc = make_replay(SHORT, e.unwrapped.game_seed, e.unwrapped.action_log)
    bad = dict(doc, actions=doc["actions"][:-1] + [63])
    with pytest.raises(ReplayError, match="checksum mismatch"):
        load_replay(_write(tmp_path, bad))
    with pytest.raises(ReplayError, match="made by meld8 0.0.1"):
        load_replay(_write(tmp_path, dict(doc, version="0.0.1")))
    with pytest.raises(ReplayError, match="not a meld8 replay"):
        load_replay(_write(tmp_path, {"hello": 1}))
    with pytest.raises(ReplayError, match="not found"):
        load_replay(tmp_path / "nope.json")


def test_rules_hash_mismatch(tmp_path):
    from meld8_env.replay import _checksum

    e = finished_env()
    doc = make_replay(SHORT, e.unwrapped.game_seed, e.unwrapped.action_log)
    body = {k: v for k, v in doc.items() if k != "checksum"}
    body["rules"] = dict(body["rules"], value_triplet_han=2)  # edited rules, checksum recomputed
    with pytest.raises(ReplayError, match="rules hash"):
        load_replay(_write(tmp_path, {**body, "checksum": _checksum(body)}))


def test_cli_replay_prints_hand_by_hand(tmp_path, capsys):
    e = finished_env()
    path = tmp_path / "game.json"
    e.unwrapped.save_replay(str(path))
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "== round 1" in out and "final scores" in out and "seat " in out
    assert main(["replay", str(tmp_path / "missing.json")]) == 2


def test_simulate_counts_every_round_ending():
    stats = simulate(20, seed=4, rules=RuleConfig(rounds=2, min_yaku_han=(1, 1), max_replays=None), progress=False)
    assert stats["games"] == 20
    # without a replay cap only wins end a round: 2 per game
    assert stats["ron"] + stats["tsumo"] == 40
    assert 0 < stats["draw_rate"] < 1 and stats["average_han"] >= 1


def test_simulate_is_reproducible():
    a = simulate(10, seed=7, rules=SHORT, progress=False)
    b = simulate(10, seed=7, rules=SHORT, progress=False)
    a.pop("seconds"), b.pop("seconds")
    assert a == b
