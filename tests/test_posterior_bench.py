"""bench/posterior_regret.py: its world-risk rows read the Ron offers of the worlds they are given, and a bank file
of other states is refused, never overwritten (the banks take tens of minutes to build)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import posterior_regret as pr  # noqa: E402
from search_speed import states as decision_states  # noqa: E402

from agents import search_backend as sb  # noqa: E402
from agents.oracle import ron_discards  # noqa: E402
from meld8_env.actions import PASS  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402

RULES = RuleConfig()


def _discard_states_with_a_ron(n: int) -> np.ndarray:
    recs = decision_states(RULES, 400, 5)
    discard = np.array([not int(m) >> PASS & 1 for m in recs["mask"]], bool)
    ron = ron_discards(RULES, recs) != 0
    pick = np.flatnonzero(discard & ron)[:n]
    assert pick.size == n, "the bot games gave too few discard states where some legal card is Ron'd"
    return recs[pick]


def test_world_risk_from_a_bank_of_the_true_hands_is_the_true_ron_offer():
    # a bank that holds each opponent's TRUE hand with probability 1: every blended world then deals those hands, so
    # the share of worlds offering a Ron on a discard is exactly 1 on the discards the true record offers, else 0
    recs = _discard_states_with_a_ron(6)
    unsafe = ron_discards(RULES, recs)
    banks = {}
    for rec in recs:
        info = sb.infoset_of(rec, int(rec["acting"]), RULES)
        banks[sb.info_digest(info)] = {
            (j, "all"): (np.array([rec["hands"][j]], np.uint64), np.ones(1)) for j in info.opponents
        }
    truth_search = pr.WorldRiskSearch(RULES, 8, banks)
    plain = pr.WorldRiskSearch(RULES, 8)
    differs = 0
    for rec, u in zip(recs, unsafe.tolist(), strict=True):
        info = sb.infoset_of(rec, int(rec["acting"]), RULES)
        cards = [c for c in range(52) if int(rec["mask"]) >> c & 1]
        risk = truth_search._risks(info, cards)
        assert risk == {c: float(u >> c & 1) for c in cards}, f"state {info.seat}: {risk} against Ron set {u:#x}"
        two_level = plain._risks(info, cards)
        assert all(0.0 <= r <= 1.0 for r in two_level.values())
        differs += two_level != risk
    assert differs > 0, "two-level worlds matched the truth in every state: the bank is not what made the risk"


def test_a_bank_file_of_other_states_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "bank.npz"
    banks = {0: {(1, "all"): (np.array([7, 11], np.uint64), np.array([0.25, 0.75]))}}
    pr.save_banks(str(path), "k1", banks, [(0.2, 0.3)])
    before = path.read_bytes()
    loaded, overlaps = pr.load_banks(str(path), "k1")
    assert loaded[0][(1, "all")][0].tolist() == [7, 11] and overlaps == [[0.2, 0.3]]
    with pytest.raises(ValueError, match="other states or chain settings") as err:
        pr.load_banks(str(path), "k2")
    assert "\n" not in str(err.value)
    assert path.read_bytes() == before
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a bank")
    with pytest.raises(ValueError, match="unreadable"):
        pr.load_banks(str(junk), "k1")
    assert junk.read_bytes() == b"not a bank"
