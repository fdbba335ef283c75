"""The engine's public surface (issue: one engine surface): every fact shared by C and Python is
checked both ways, typed outcomes equal the reference engine's, and no face reaches inside."""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path

import numpy as np
import pytest

from meld8_env import calls, observation
from meld8_env.codes import Phase, Result, constant_mismatches, python_constants
from meld8_env.engine import _fast
from meld8_env.engine.fast import FastBatch, check_obs_layout, pack_rules, rules_record
from meld8_env.engine.reference import Game
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector

ROOT = Path(__file__).resolve().parents[1]
RULE_SETS = {
    "default": RuleConfig(),
    "two_player": RuleConfig.two_player(),
    "kuikae_off": RuleConfig(kuikae="off", rounds=3, min_yaku_han=(1, 2, 3)),
}


# -- codes ----------------------------------------------------------------------------------------
def test_c_and_python_codes_agree():
    assert constant_mismatches(_fast.constants()) == []
    assert set(_fast.constants()) == set(python_constants())


@pytest.mark.parametrize("name", sorted(python_constants()))
def test_a_code_changed_on_one_side_is_named(name):
    native = dict(_fast.constants())
    native[name] += 1
    assert constant_mismatches(native) == [f"{name}: C has {native[name]}, Python has {native[name] - 1}"]


def test_enums_match_the_engine_records():
    v = Meld8Vector(8, seed=3)
    v.reset()
    assert set(np.unique(v.state["phase"])) <= {int(p) for p in Phase}
    seen = set()
    for _ in range(3000):
        v.step(v.sample_actions())
        seen.update(int(r) for r in v.result)
    assert seen == {int(Result.NONE), int(Result.RON), int(Result.TSUMO), int(Result.DRAW)}


# -- rules record ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_rules_record_has_exactly_the_c_fields(name):
    rec = rules_record(RULE_SETS[name])
    fields = dict(_fast.rules_fields())
    assert set(rec) == set(fields)
    for key, count in fields.items():
        assert (count == 1 and isinstance(rec[key], int)) or len(rec[key]) == count, key


def test_rules_record_refuses_a_missing_extra_or_misshapen_field():
    rec = rules_record(RuleConfig())
    with pytest.raises(KeyError, match="lacks field sp.points_per_han"):
        _fast.pack_rules({k: v for k, v in rec.items() if k != "sp.points_per_han"})
    with pytest.raises(KeyError, match="has 22 fields"):
        _fast.pack_rules({**rec, "new_option": 1})
    with pytest.raises(ValueError, match="min_han: expected 16 ints, got 6"):
        _fast.pack_rules({**rec, "min_han": [1] * 6})
    with pytest.raises(OverflowError, match="starting_score"):
        _fast.pack_rules({**rec, "starting_score": 2**40})


def test_each_rules_field_reaches_the_engine_by_name():
    """Changing one named option changes the game the C engine plays (nothing is read by position)."""
    base = RuleConfig(starting_dealer=0)

    def first_deal(rules):
        fb = FastBatch(1, rules)
        fb.reset(np.array([5], np.uint64))
        return fb.state[0]

    assert first_deal(base.replace(starting_score=25_000))["scores"][0] == 25_000
    assert first_deal(base.replace(starting_dealer=2))["acting"] == 2
    assert first_deal(base.replace(wall_limit=5))["wall_end"] == first_deal(base)["wall_end"] - 5


# -- observation layout ---------------------------------------------------------------------------
@pytest.mark.parametrize("oracle", [False, True])
@pytest.mark.parametrize("name", sorted(RULE_SETS))
def test_observation_layout_is_the_same_in_c_and_python(name, oracle):
    rules = RULE_SETS[name]
    native = {n: (o, s) for n, o, s in _fast.obs_layout(pack_rules(rules), oracle)}
    assert native == {n: spec for n, spec in observation.layout(rules, oracle).items()}
    assert FastBatch(1, rules, oracle=oracle).obs_size == observation.obs_size(rules, oracle)


def test_observation_layout_changed_on_the_python_side_is_refused(monkeypatch):
    real = observation.layout

    def shifted(rules, oracle=False):
        out = dict(real(rules, oracle))
        off, size = out["min_han"]
        out["min_han"] = (off + 1, size)
        return out

    monkeypatch.setattr(observation, "layout", shifted)
    check_obs_layout.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=r"min_han \(C \(\d+, 1\), Python"):
            check_obs_layout(RuleConfig(rounds=5, min_yaku_han=(1, 1, 1, 1, 1)))
    finally:
        check_obs_layout.cache_clear()


# -- call logic -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kuikae", ["other_end", "off"])
def test_call_tables_equal_in_c_and_python(kuikae):
    fb = FastBatch(1, RuleConfig(kuikae=kuikae))
    c_pairs, c_kk = fb.call_tables()
    pairs, kk = calls.call_tables(kuikae == "other_end")
    assert np.array_equal(c_pairs, pairs)
    assert np.array_equal(c_kk, kk)
    assert np.count_nonzero(pairs) == 6 * 52 + 3 * 44  # every Pon; Chii shapes that stay inside A..K


# -- typed outcomes against the reference engine --------------------------------------------------
@pytest.mark.parametrize("rules", [RuleConfig(rounds=3, min_yaku_han=(1, 1, 2)), RuleConfig.two_player()])
def test_hand_and_game_outcomes_equal_the_reference_engine(rules):
    n_games, seed0 = 12, 40
    v = Meld8Vector(n_games, rules=rules, seed=seed0, autoreset=False)
    v.reset()
    refs = [Game(rules, seed=seed0 + i) for i in range(n_games)]
    rng = random.Random(1)
    got_hands: list[list] = [[] for _ in range(n_games)]
    got_games: dict[int, object] = {}
    calls_seen = [0] * n_games
    while not all(g.over for g in refs):
        acts = np.zeros(n_games, np.int64)
        for i, g in enumerate(refs):
            if not g.over:
                acts[i] = rng.choice(g.legal_actions())
                before = len(g.results)
                phase = g.phase
                g.step(int(acts[i]))
                if phase == Phase.CLAIM and g.phase == Phase.CALL_DISCARD:
                    calls_seen[i] += 1
                assert len(g.results) - before <= 1
        v.step(acts)
        for i in np.flatnonzero(v.caller >= 0):
            calls_seen[i] -= 1
            assert refs[i].current == v.caller[i]
        for h in v.hand_outcomes():
            got_hands[h.game].append(h)
        for o in v.game_outcomes():
            got_games[o.game] = o
    wins = 0
    for i, g in enumerate(refs):
        assert calls_seen[i] == 0, f"game {i}: call events differ"
        assert len(got_hands[i]) == len(g.results), f"game {i}"
        for k, (h, r) in enumerate(zip(got_hands[i], g.results, strict=True)):
            where = f"game {i} hand {k + 1}"
            # one outcome vocabulary: the reference engine's HandOutcome equals the fast engine's, field by field
            r = dataclasses.replace(r, game=i)  # a reference Game is one game: its outcomes say game 0
            assert h == r and h.hand == k + 1 and sum(h.payments) == 0, f"{where}: {h} != {r}"
            if h.is_win:
                wins += 1
                assert h.yaku == r.yaku, where
                assert sum(n for _, _, n in h.transfers()) == sum(d for d in h.payments if d > 0), where
        o = got_games[i]
        assert list(o.final_scores) == g.final_scores and list(o.placements) == g.placements
        assert o.seed == seed0 + i
    assert wins > 0


def test_start_games_plays_the_chosen_seed():
    v = Meld8Vector(4, seed=0, autoreset=False)
    v.reset()
    v.start_games(np.array([2]), np.array([777], np.uint64))
    one = Meld8Vector(1, seed=777)
    one.reset()
    assert np.array_equal(v.observation[2], one.observation[0])
    assert v.current_seat[2] == one.current_seat[0] and int(v.seeds[2]) == 777


def test_engine_records_are_read_only():
    v = Meld8Vector(2, seed=0)
    v.reset()
    with pytest.raises(ValueError, match="read-only"):
        v.state["ndisc"][0, 0] = 255
    fb = FastBatch(1)
    fb.reset(np.array([1], np.uint64))
    bad = fb.snapshot(slice(None))
    bad["ndisc"][0, 0] = 255
    with pytest.raises(ValueError, match="'ndisc' out of range"):
        fb.restore(slice(None), bad)


# -- layering -------------------------------------------------------------------------------------
def _sources(*dirs: str) -> list[Path]:
    return [p for d in dirs for p in (ROOT / d).rglob("*.py")]


def test_no_face_reaches_inside_the_engine():
    allowed = {ROOT / "meld8_env" / "vector.py"}
    pattern = re.compile(r"\._observe\(|\.engine\.state|\._rt\b|\b_fast\.")
    bad = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in _sources("meld8_env", "meld8_app", "agents", "training", "bench")
        if p not in allowed and (ROOT / "meld8_env" / "engine") not in p.parents
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert bad == []


def test_no_numeric_phase_or_result_literals_outside_the_codes_module():
    pattern = re.compile(r"""(phase|result|\bres)\b["'\]]*\)?\s*(==|!=|<=|>=|<|>)\s*\d""")
    bad = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in _sources("meld8_env", "meld8_app", "agents", "training")
        if p.name != "codes.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert bad == []


def test_agents_never_import_training_and_nobody_imports_private_names():
    training_import = re.compile(r"^\s*(from training\b|import training\b)")
    # a private name imported from another module (an own package's private submodule is fine)
    private_import = re.compile(r"^\s*from ([\w.]+) import (?:.*, )?(_[a-z]\w*)(?! as)")
    bad = []
    for p in _sources("meld8_env", "meld8_app", "agents", "training"):
        for n, line in enumerate(p.read_text().splitlines(), 1):
            where = f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
            if "agents" in p.relative_to(ROOT).parts[:1] and training_import.search(line):
                bad.append(where)
            m = private_import.search(line)
            package = ".".join(p.relative_to(ROOT).with_suffix("").parts[:-1])
            if m and m.group(1) != package:
                bad.append(where)
    assert bad == []
