"""The belief's per-card wait model (``meld8_env/wait_model.py``, issue 21 §1): features from the
information set only (a readable per-card twin), the shipped file and its checksum, the fit script.

R23 (sequences do not wrap), R24 (triplets across suits), R33 (furiten: a wait in one's own discards).
"""

from __future__ import annotations

import argparse
import json
from importlib import resources

import numpy as np
import pytest

from meld8_env.cards import card_str, format_cards, from_mask
from meld8_env.discard_history import passed_cards
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from meld8_env.wait_model import FEATURES, MODEL_FILE, load_model, model_checksum, wait_features, wait_probs
from tests.test_infoset_leak import permute_hidden
from training.bot_states import play_bot_states

RULES = {"3p": RuleConfig(), "2p": RuleConfig.two_player()}


def reference_features(info, j: int, c: int) -> dict[str, float]:
    """The features of (j, c), one card at a time, as the FEATURES comments define them."""
    s, r = divmod(c, 13)
    unseen = set(from_mask(info.pool))
    card = lambda rank: 13 * s + rank if 0 <= rank <= 12 else None  # noqa: E731 - same suit, no wrap (R23)
    disc = list(info.discards[j])
    passed = set(from_mask(passed_cards(info, j)))
    same_rank = [13 * t + r for t in range(4) if t != s]

    def near(d: int) -> bool:
        return d % 13 == r or (d // 13 == s and abs(d % 13 - r) <= 2)

    shapes = [(card(r + 1), card(r + 2)), (card(r - 1), card(r + 1)), (card(r - 2), card(r - 1))]
    live = [a is not None and b is not None and a in unseen and b in unseen for a, b in shapes]
    half = [a is not None and b is not None and ((a in unseen) != (b in unseen)) for a, b in shapes]
    joker = float(52 in unseen)
    not_suji = [live[0] and card(r + 3) not in disc, live[1], live[2] and card(r - 3) not in disc]
    around = lambda cards, ds: sum(card(r + d) in cards for d in ds if card(r + d) is not None)  # noqa: E731
    rank_unseen = sum(x in unseen for x in same_rank)
    rank_disc = sum(x % 13 == r for x in disc)
    meld = from_mask(info.melds[j])
    return {
        "bias": 1.0,
        "in_my_hand": float(info.hand >> c & 1),
        "edge_rank": float(r in (0, 12)),
        "near_edge_rank": float(r in (1, 11)),
        "crown_rank": float(r in (0, 10, 11, 12)),
        "seq_live": sum(live),
        "seq_live_not_suji": sum(not_suji),
        "seq_half_joker": sum(half) * joker,
        "rank_unseen": rank_unseen,
        "rank_in_disc_j": rank_disc,
        "suji_in_disc_j": around(disc, (-3, 3)),
        "adj_in_disc_j": around(disc, (-2, -1, 1, 2)),
        "rank_passed_j": sum(x in passed for x in same_rank),
        "suji_passed_j": around(passed, (-3, 3)),
        "adj_passed_j": around(passed, (-2, -1, 1, 2)),
        "last_near": float(bool(disc) and near(disc[-1])),
        "last3_near": sum(near(d) for d in disc[-3:]),
        "early3_near": sum(near(d) for d in disc[:3]),
        "suit_share_j": sum(d // 13 == s for d in disc) / len(disc) if disc else 0.0,
        "meld_near_j": float(any(near(m) for m in meld)),
        "called_j": float(info.melds[j] != 0),
        "wall_left": info.wall_left / 32,
        "discards_j": len(disc) / 10,
        "joker_unseen": joker,
        "pair_live_clean": float(rank_unseen > 0 and rank_disc == 0),
    }


@pytest.mark.parametrize("name", list(RULES))
def test_features_equal_the_per_card_twin(name):
    """Differential: the vectorized features equal the readable per-card twin on bot-game states."""
    rules = RULES[name]
    recs = play_bot_states(rules, games=6, seed=55)
    recs = recs[np.linspace(0, len(recs) - 1, 60).astype(np.int64)]
    assert set(reference_features(infoset(recs[0], 0, rules), 1, 0)) == set(FEATURES)
    checked = 0
    for r in recs:
        info = infoset(r, int(r["acting"]), rules)
        for j in info.opponents:
            got = wait_features(info, j)
            for c in range(52):
                want = reference_features(info, j, c)
                row = np.array([want[f] for f in FEATURES])
                bad = [f for f, a, b in zip(FEATURES, got[c], row, strict=True) if not np.isclose(a, b)]
                assert not bad, (
                    f"card {card_str(c)}, opponent {j}: {bad} differ; hand {format_cards(from_mask(info.hand))}, "
                    f"discards of {j}: {format_cards(info.discards[j])}, melds {format_cards(from_mask(info.melds[j]))}"
                )
                checked += 1
    assert checked > 3000


def test_features_read_the_infoset_only():
    """Records that differ only by hidden cards and seed give the same features and probabilities."""
    rules = RULES["3p"]
    recs = play_bot_states(rules, games=6, seed=56)
    rng = np.random.default_rng(1)
    for i in np.linspace(0, len(recs) - 1, 120).astype(np.int64):
        seat = int(recs[i]["acting"])
        twin = recs[i : i + 1].copy()
        permute_hidden(twin, seat, rules.num_players, rng)
        a, b = infoset(recs[i], seat, rules), infoset(twin[0], seat, rules)
        for j in a.opponents:
            assert np.array_equal(wait_features(a, j), wait_features(b, j))
            assert np.array_equal(wait_probs(a, j), wait_probs(b, j))


def test_probabilities_are_probabilities_and_furiten_waits_are_unlikely():
    """R33: a card in j's own discards would make a wait on it furiten, so a ready j rarely waits on its
    rank-mates and suji; q is a probability for every card and varies across cards."""
    rules = RULES["3p"]
    recs = play_bot_states(rules, games=4, seed=57, max_states=300)
    q_disc, q_other = [], []
    for r in recs[::10]:
        info = infoset(r, int(r["acting"]), rules)
        for j in info.opponents:
            q = wait_probs(info, j)
            assert q.shape == (52,) and ((q > 0) & (q < 1)).all()
            f = wait_features(info, j)
            k = FEATURES.index("suji_in_disc_j")
            q_disc.extend(q[f[:, k] > 0])
            q_other.extend(q[f[:, k] == 0])
    assert np.mean(q_disc) < np.mean(q_other)
    assert np.std(q_other) > 0.01


def _shipped() -> str:
    return resources.files("meld8_env").joinpath("data", MODEL_FILE).read_text()


def test_shipped_model_loads_and_its_checksum_is_checked():
    data = json.loads(_shipped())
    assert data["sha256"] == model_checksum(data["model"])
    assert tuple(data["features"]) == FEATURES and "training/fit_waits.py" in data["command"]
    model = load_model(_shipped())
    assert set(model) == {"3p", "2p"}
    corrupted = dict(data, model=dict(data["model"], **{"3p": dict(data["model"]["3p"])}))
    corrupted["model"]["3p"]["w"] = [w + 0.5 for w in data["model"]["3p"]["w"]]
    with pytest.raises(RuntimeError, match=r"^meld8_env/data/wait_model.json: checksum mismatch") as e:
        load_model(json.dumps(corrupted))
    assert "\n" not in str(e.value)
    with pytest.raises(RuntimeError, match="not a wait-model file") as e:
        load_model(_shipped()[:-40])
    assert "\n" not in str(e.value)
    other = dict(data, features=list(FEATURES[:-1]))
    with pytest.raises(RuntimeError, match="other features"):
        load_model(json.dumps(other))


def test_fit_script_writes_a_file_that_loads(tmp_path):
    """Smoke: the fit on a few games writes a model whose held-out AUC beats chance."""
    from training.fit_waits import fit

    a = argparse.Namespace(games=8, seed=11, val_seed=12, cache=tmp_path)
    model, stats = fit(RULES["2p"], a)
    assert stats["rows"] > 1000 and stats["val_auc"] > 0.6, stats
    data = {"features": list(FEATURES), "model": {"2p": model}, "sha256": model_checksum({"2p": model})}
    assert set(load_model(json.dumps(data))) == {"2p"}


def test_within_group_auc_ranks_only_pairs_of_one_group():
    """``within_group_auc`` counts (positive, negative) pairs inside a group only: a score that tells the groups
    apart but not the cards of one group reads 0.5 however high its plain AUC; one that orders each group reads 1
    (ties 1/2); groups with one label only are left out, and none at all gives NaN. Checked against a brute-force
    count on random data."""
    from training.fit_waits import auc, within_group_auc, within_group_counts

    group = np.array([0, 0, 0, 1, 1, 1])
    y = np.array([True, False, False, True, False, False])
    between = np.array([0.9, 0.9, 0.9, 0.1, 0.1, 0.1])  # group 0 riskier: plain AUC above 0.5, no order inside
    assert auc(between, y) == 0.5 and within_group_auc(between, y, group) == 0.5
    assert within_group_auc(np.array([0.3, 0.2, 0.1, 0.3, 0.2, 0.1]), y, group) == 1.0
    assert within_group_auc(np.array([0.1, 0.2, 0.3, 0.3, 0.2, 0.1]), y, group) == 0.5  # 0 in group 0, 1 in group 1
    assert np.isnan(within_group_auc(np.array([0.5, 0.5]), np.array([True, True]), np.array([0, 0])))
    rng = np.random.default_rng(3)
    g, yy = rng.integers(0, 20, 400), rng.random(400) < 0.3
    s = rng.integers(0, 5, 400).astype(float)
    conc = pairs = 0.0
    for a in range(400):
        for b in range(400):
            if g[a] == g[b] and yy[a] and not yy[b]:
                conc += 1.0 if s[a] > s[b] else 0.5 if s[a] == s[b] else 0.0
                pairs += 1
    assert abs(within_group_auc(s, yy, g) - conc / pairs) < 1e-12
    # its parts, per group (what a bootstrap over groups resamples): only groups with both labels, summing to the same
    ids, parts, n = within_group_counts(s, yy, g)
    both = [k for k in range(20) if yy[g == k].any() and not yy[g == k].all()]
    assert ids.tolist() == both and n.tolist() == [int(yy[g == k].sum() * (~yy[g == k]).sum()) for k in both]
    assert parts.sum() == conc and n.sum() == pairs
