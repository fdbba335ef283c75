"""How well sampled worlds predict danger: "can opponent j Ron card c now?" on bot-game decision states.

Usage: python bench/belief_quality.py [--states 3000] [--worlds 16] [--seed 7] [--rules default|two_player]
       [--methods uniform,two_level,...]

States: discard decisions (draw / call-discard phase) of ``greedy``/``defensive`` games
(``training.bot_states``, seeds not used to fit the table). Triples: (state, opponent j, each legal discard
c of the acting seat). Label: the engine's own answer: after discarding c in the true record, does the
claim window offer j Ron? Estimators: the same question asked of ``--worlds`` sampled worlds per state
(``meld8_env.belief.sample_worlds``: ``uniform``, ``two_level``, ``two_level`` with ``no_pass`` or ``last_discard``;
p = (hits + 0.02) / (worlds + 1)), and
``defensive``'s danger count (live wait shapes on c; AUC only: it is not a probability), and two rows that
score every card of an opponent alike: the fitted ``P(ready)`` and, as a CHEATING ceiling, the true status
(what a perfect status model could reach without knowing the hand). Rows: AUC,
log-loss (base rate's log-loss beside it), and the median time of one ``sample_worlds`` call.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from scipy.stats import rankdata

from meld8_env.belief import LAST_STATS, ready_prior, sample_worlds
from meld8_env.codes import Phase
from meld8_env.engine.records import step_records
from meld8_env.features import danger
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from meld8_env.wait_model import wait_probs
from training.bot_states import play_bot_states
from training.fit_belief import true_ready

#: the estimators compared: a sampler method and its options (keyword flags of ``sample_worlds``)
METHODS = ("uniform", "two_level", "two_level no_pass", "two_level last_discard", "learned", "learned no_pass")


def ron_after_discards(records: np.ndarray, cards: np.ndarray, rules: RuleConfig) -> np.ndarray:
    """(len(records), len(cards), P) bool: after the acting seat discards card k, seat p may Ron."""
    P = rules.num_players
    n, m = len(records), len(cards)
    rec = np.repeat(records, m)
    acts = np.tile(cards.astype(np.int64), n)
    assert not step_records(rules, rec, acts).any()
    out = np.zeros((len(rec), P), bool)
    claim = rec["phase"] == Phase.CLAIM
    for k in range(2):
        asked = rec["claim_asked"][:, k].astype(np.int64)
        ron = claim & (k < rec["claim_n"]) & ((rec["claim_opts"][:, k] >> np.uint64(53)) & np.uint64(1)).astype(bool)
        out[np.flatnonzero(ron), asked[ron]] = True
    return out.reshape(n, m, P)


def auc(score: np.ndarray, y: np.ndarray) -> float:
    r = rankdata(score)
    pos = y.sum()
    return float((r[y].sum() - pos * (pos + 1) / 2) / (pos * (len(y) - pos)))


def logloss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return float(-np.mean(np.where(y, np.log(p), np.log(1 - p))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=3000)
    ap.add_argument("--worlds", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rules", choices=["default", "two_player"], default="default")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated rows of METHODS (default: all)")
    a = ap.parse_args()
    methods = a.methods.split(",")
    if bad := [m for m in methods if m not in METHODS]:
        raise SystemExit(f"belief_quality: unknown --methods {bad}; choose among {', '.join(METHODS)}")
    rules = RuleConfig() if a.rules == "default" else RuleConfig.two_player()
    P = rules.num_players
    games = max(8, a.states // 25)
    states = play_bot_states(rules, games, seed=10_000 + a.seed)
    states = states[np.isin(states["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])]
    rng = np.random.default_rng(a.seed)
    states = np.ascontiguousarray(states[np.sort(rng.permutation(len(states))[: a.states])])
    y, est, dang, times = [], {m: [] for m in methods}, [], []
    prior, oracle = [], []  # the status alone: the fitted P(ready), and the true status (CHEATING ceiling)
    direct, direct_orc = [], []  # the wait model without worlds: P(ready) * q(c), and true status * q(c)
    for r in states:
        seat = int(r["acting"])
        info = infoset(r, seat, rules)
        cards = np.array([c for c in range(52) if info.legal >> c & 1], np.int64)
        truth = ron_after_discards(r.reshape(1).copy(), cards, rules)[0]  # (m, P)
        for method in est:
            t0 = time.perf_counter()
            base_method, *opts = method.split()
            worlds, w = sample_worlds(info, a.worlds, rng, base_method, rules, **{o: True for o in opts})
            times.append((method, time.perf_counter() - t0))
            hits = (ron_after_discards(worlds, cards, rules) * w[:, None, None]).sum(axis=0)
            est[method].append((hits + 0.02) / (w.sum() + 1.0))  # one pseudo-world at ~the base rate
        y.append(truth)
        pr, orc = np.zeros((len(cards), P)), np.zeros((len(cards), P))
        dm = np.zeros((len(cards), P))
        for j in info.opponents:
            pr[:, j] = ready_prior(info, j)
            orc[:, j] = float(true_ready(r.reshape(1), np.array([j]), P)[0])
            dm[:, j] = wait_probs(info, j)[cards]
        prior.append(pr)
        oracle.append(orc)
        direct.append(pr * dm)
        direct_orc.append(orc * dm)
        d = np.zeros((len(cards), P))
        for j in info.opponents:
            mine = 0
            for c in info.discards[j]:
                mine |= 1 << c
            d[:, j] = danger(cards, np.full(len(cards), info.pool, np.uint64), np.full(len(cards), mine, np.uint64))
        dang.append(d)
    opp = [np.array([[p != int(s["acting"]) for p in range(P)]] * 1) for s in states]

    def flat(xs: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([x[:, o[0]].ravel() for x, o in zip(xs, opp, strict=True)])

    yy = flat(y).astype(bool)
    base = yy.mean()
    print(f"{len(states)} decision states, {yy.size} (state, opponent, card) triples, base rate {base:.4f}, "
          f"{a.worlds} worlds per state, rules {a.rules}")  # fmt: skip
    print(f"two-level worlds whose drawn status no proposal met: {LAST_STATS['status_missed']} of "
          f"{LAST_STATS['worlds']} (per opponent)")  # fmt: skip
    print("\n| estimator | AUC | log-loss |\n|---|---|---|")
    print(f"| base rate | 0.5 | {logloss(np.full(yy.size, base), yy):.4f} |")
    for method, xs in est.items():
        p = flat(xs)
        print(f"| {method} | {auc(p, yy):.4f} | {logloss(p, yy):.4f} |")
    print(f"| defensive danger count | {auc(flat(dang), yy):.4f} | - |")
    print(f"| status alone: the fitted P(ready), same for every card | {auc(flat(prior), yy):.4f} | - |")
    print(f"| CHEATING: the true status, same for every card | {auc(flat(oracle), yy):.4f} | - |")
    p = flat(direct)
    print(f"| wait model direct, no worlds: P(ready) * q(c) | {auc(p, yy):.4f} | {logloss(p, yy):.4f} |")
    print(f"| CHEATING: the true status * q(c) | {auc(flat(direct_orc), yy):.4f} | - |")
    print("\n| timing | ms |\n|---|---|")
    for method in est:
        ms = [t * 1e3 for m, t in times if m == method]
        print(f"| sample_worlds {method} n={a.worlds} median | {statistics.median(ms):.2f} |")


if __name__ == "__main__":
    main()
