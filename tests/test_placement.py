"""The placement table (meld8_env.placement): checked data, exact ends (R40), the DP against direct
simulation of its own model, and calibration on real bot games."""

from __future__ import annotations

import json

import numpy as np
import pytest

from meld8_env.placement import PlacementTable, load_outcomes, payload_checksum, shipped_path, shipped_table
from meld8_env.rules import RuleConfig

RULES = RuleConfig()


def test_shipped_table_loads_with_checksum_and_rules():
    data = load_outcomes(shipped_path(RULES), RULES)
    assert data["sha256"] == payload_checksum(data)
    assert len(data["rounds"]) == RULES.rounds
    assert data["games"] >= 1000


def test_edited_or_foreign_table_is_refused_in_one_line(tmp_path):
    data = json.loads(shipped_path(RULES).read_text())
    data["rounds"][0][0]["count"] += 1  # an edit without a new checksum
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_outcomes(bad, RULES)
    data["sha256"] = payload_checksum(data)
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="other rules"):
        load_outcomes(bad, RULES.replace(points_per_han=1000))
    with pytest.raises(ValueError, match="build it with"):
        load_outcomes(tmp_path / "missing.json", RULES)


@pytest.mark.parametrize(
    "edit, says",
    [
        (lambda d: d.update(unit=0), "field 'unit' must be an integer 1..30000, got 0"),
        (lambda d: d.update(unit=True), "field 'unit' must be an integer"),
        (lambda d: d["rounds"].pop(), "field 'rounds' must be a list of 6 rounds"),
        (lambda d: d["rounds"].__setitem__(2, {}), "round 2 must be a list of outcome rows"),
        (lambda d: d["rounds"][1][0].update(count=-1), "round 1 row 0 must be {count: int >= 0"),
        (lambda d: d["rounds"][1][3].update(payments=[1, 2]), "round 1 row 3 must be .* 3 integers"),
        (lambda d: d["rounds"][0][0].update(payments=[10**12, 0, -(10**12)]), "round 0 row 0 must be .* within"),
        (lambda d: d["rounds"][0][0].update(payments=[1.5, 0, -1.5]), "round 0 row 0 must be"),
    ],
)
def test_a_table_whose_rows_are_not_outcomes_is_refused_even_with_a_fresh_checksum(tmp_path, edit, says):
    """The checksum catches an edit, not a file built wrong: its shape is checked too (a payment past the grid
    or a negative count would make expected placements outside 1..P)."""
    data = json.loads(shipped_path(RULES).read_text())
    edit(data)
    data["sha256"] = payload_checksum(data)
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=f"t.json: placement table {says}"):
        load_outcomes(bad, RULES)


def test_game_over_is_exact_with_chiicha_tie_break_R40():
    t = shipped_table(RULES)
    scores = np.array([[40000, 30000, 20000], [30000, 30000, 30000], [30000, 30000, 30000]])
    got = t.expected(scores, np.full(3, RULES.rounds), np.array([0, 0, 2]))
    assert got[0].tolist() == [1, 2, 3]
    assert got[1].tolist() == [1, 2, 3]  # equal scores: seat order from the chiicha (seat 0)
    assert got[2].tolist() == [2, 3, 1]  # chiicha seat 2 first, then 0, then 1


def test_expected_placements_sum_to_a_permutation_and_leading_is_better():
    t = shipped_table(RULES)
    rng = np.random.default_rng(3)
    a = rng.integers(-20, 21, size=(200, 2)) * 1000 + 30000
    scores = np.stack([a[:, 0], a[:, 1], 90000 - a.sum(axis=1)], axis=1)
    rnd = rng.integers(0, RULES.rounds + 1, 200)
    got = t.expected(scores, rnd, rng.integers(0, 3, 200))
    np.testing.assert_allclose(got.sum(axis=1), 6.0, atol=1e-4)
    assert ((got >= 1 - 1e-6) & (got <= 3 + 1e-6)).all()
    # more points for seat 0 (taken from seat 2) never makes its expected placement worse
    base = np.array([[30000, 30000, 30000]] * 21) + np.outer(np.arange(-10, 11) * 2000, [1, 0, -1])
    for r in range(RULES.rounds + 1):
        e = t.expected(base, np.full(21, r), np.zeros(21, np.int64))[:, 0]
        assert (np.diff(e) <= 1e-6).all()
    # the same lead is worth more late than early (fewer hands left to lose it)
    lead = np.array([[45000, 25000, 20000]] * 2)
    early, late = t.expected(lead, np.array([1, RULES.rounds - 1]), np.zeros(2, np.int64))[:, 0]
    assert late < early


def test_dp_matches_direct_simulation_of_its_model():
    data = load_outcomes(shipped_path(RULES), RULES)
    t = PlacementTable(data, RULES)
    rng = np.random.default_rng(11)
    start = np.array([36000, 27000, 27000])
    r0, chiicha, n = 3, 1, 40000
    scores = np.tile(start, (n, 1))
    P = 3
    for r in range(r0, RULES.rounds):
        rows = data["rounds"][r]
        p = np.array([x["count"] for x in rows], float)
        pick = rng.choice(len(rows), size=n, p=p / p.sum())
        pays = np.array([x["payments"] for x in rows])[pick]  # dealer-relative
        dealer = (chiicha + r) % P
        scores = scores + np.roll(pays, dealer, axis=1)
    final = t.expected(scores, np.full(n, RULES.rounds), np.full(n, chiicha))
    sim = final.mean(axis=0)
    dp = t.expected(start[None], np.array([r0]), np.array([chiicha]))[0]
    np.testing.assert_allclose(dp, sim, atol=0.02)


def test_calibrated_on_bot_games_better_than_current_rank():
    """After every hand of real bot games (a seed the fit never used), the table's expected placement
    predicts the final placement with a smaller squared error than the current rank does."""
    from agents.registry import load_agent
    from meld8_env.table import Table
    from meld8_env.vector import Meld8Vector

    n, P = 48, RULES.num_players
    v = Meld8Vector(n, rules=RULES, seed=987_654_321, autoreset=False)
    v.reset()
    bots = [load_agent("greedy", RULES), load_agent("defensive", RULES)]
    table = Table(v)
    table.seat(np.arange(n), [[bots[(g + s) % 2] for s in range(P)] for g in range(n)])
    t = shipped_table(RULES)
    preds, ranks, games = [], [], []
    while not v.engine.over.all():
        acts = np.zeros(n, np.int64)
        table.act(acts)
        table.step(acts)
        st = v.state
        for h in v.hand_outcomes():
            rec = st[h.game]
            if int(rec["phase"]) == 3:  # the last hand: nothing left to predict
                continue
            s = rec["scores"][:P].astype(np.int64)
            preds.append(t.expected(s[None], np.array([int(rec["round"])]), np.array([int(rec["chiicha"])]))[0])
            order = np.argsort(-s, kind="stable")
            rk = np.empty(P)
            rk[order] = np.arange(1, P + 1)
            ranks.append(rk)
            games.append(h.game)
    final = v.state["placements"][:, :P].astype(float)[np.array(games)]
    mse_table = float(np.mean((np.array(preds) - final) ** 2))
    mse_rank = float(np.mean((np.array(ranks) - final) ** 2))
    assert len(preds) > 150
    assert mse_table < mse_rank
