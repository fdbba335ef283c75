"""bench/posterior_regret.py and bench/search_regret.py: the world-risk rows read the Ron offers of the worlds they are
given and leave the rollout worlds alone; the within-state AUC's bootstrap resamples states (paired across rows, an
agent seed's copy of a state with it); a bank or reference cache of other states is refused in one line, never
overwritten (they take minutes to tens of minutes to build)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import posterior_regret as pr  # noqa: E402
import search_regret as sr  # noqa: E402
from search_speed import states as decision_states  # noqa: E402

from agents import search_backend as sb  # noqa: E402
from agents.oracle import ron_discards  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
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


class _ModelRiskAfterWorlds(pr.WorldRiskSearch):
    """Draws the risk worlds (and blends them) as the bench row does, then answers the wait model's risk: if drawing
    them touched any stream the rollouts read, its decisions would differ from plain ``search:ron=model``'s."""

    def _risks(self, info, cands, record=None):
        super()._risks(info, cands, record)
        return SearchAgent._risks(self, info, cands, record)


def test_drawing_the_risk_worlds_leaves_the_rollout_worlds_as_they_were():
    from meld8_env.engine.records import observe_records

    recs = _discard_states_with_a_ron(4)
    obs, masks = observe_records(RULES, recs)
    infos = [sb.infoset_of(r, int(r["acting"]), RULES) for r in recs]
    plain, drawn = SearchAgent(RULES, 1, ron="model"), _ModelRiskAfterWorlds(RULES, 8)
    for i in range(len(recs)):
        a = plain.act_batch(obs[i : i + 1], masks[i : i + 1], infosets=infos[i : i + 1])
        b = drawn.act_batch(obs[i : i + 1], masks[i : i + 1], infosets=infos[i : i + 1])
        assert a.tolist() == b.tolist() and plain.last_values == drawn.last_values
        assert plain.last_risks == drawn.last_risks and plain.last_risks[0]


def _auc_rows(capsys, recs, rows) -> dict[str, list[str]]:
    sr.print_risk_auc(RULES, recs, rows)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| ") and "spec" not in ln]
    return {ln.split(" | ")[0][2:]: ln.split(" | ") for ln in lines}


def test_within_state_auc_interval_resamples_states_paired_across_rows(capsys):
    recs = decision_states(RULES, 120, 5)
    recs = recs[np.array([not int(m) >> PASS & 1 for m in recs["mask"]], bool)]
    unsafe = ron_discards(RULES, recs).tolist()
    rng = np.random.default_rng(1)
    noisy = [
        {c: float((u >> c & 1) + rng.normal(0, 0.8)) for c in range(52) if int(rec["mask"]) >> c & 1}
        for rec, u in zip(recs, unsafe, strict=True)
    ]
    out = _auc_rows(capsys, recs, {"a": [noisy], "same": [noisy], "twice": [noisy, noisy]})
    within, diff = out["a"][2], out["same"][3]
    assert out["same"][2] == within and diff == "+0.0000 [+0.0000, +0.0000]"  # the same risks: paired, no spread
    # two agent seeds that scored alike add no information: resampling states (with both copies) gives one interval
    assert out["twice"][2] == within and out["twice"][3] == "+0.0000 [+0.0000, +0.0000]"
    lo, hi = (float(x) for x in within.split("[")[1].rstrip("]").split(", "))
    value = float(within.split(" ")[0])
    assert lo < value < hi and hi - lo < 0.5


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, cwd=BENCH)


def test_a_reference_cache_or_bank_of_other_states_is_refused_by_the_scripts(tmp_path):
    other = tmp_path / "other.npz"
    np.savez(other, key="0123456789abcdef", acts=np.zeros((1, 1), np.int64), vals=np.zeros((1, 1)))
    before = other.read_bytes()
    res = _run("search_regret.py", "--states", "12", "--ref-worlds", "4", "--cache", str(other), "greedy")
    assert res.returncode != 0 and "other states or worlds" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and other.read_bytes() == before
    cache = tmp_path / "ref.npz"  # a real cache of these states, then a bank file of other ones
    sr.states_and_reference(RULES, 12, 11, 4, str(cache))
    z = dict(np.load(cache))  # the right key but a row short: refused as malformed, not an IndexError deep inside
    short = tmp_path / "short.npz"
    np.savez(short, key=z["key"], acts=z["acts"][:-1], vals=z["vals"][:-1])
    with pytest.raises(sr.CacheError, match="malformed"):
        sr.states_and_reference(RULES, 12, 11, 4, str(short))
    bank = tmp_path / "bank.npz"
    pr.save_banks(str(bank), "not-these", {}, [])
    before = bank.read_bytes()
    res = _run("posterior_regret.py", "--cache", str(cache), "--states", "12", "--seed", "11", "--ref-worlds", "4",
               "--bank", str(bank), "--risk", "4", "--only-risk")  # fmt: skip
    assert res.returncode != 0 and "other states or chain settings" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and bank.read_bytes() == before
