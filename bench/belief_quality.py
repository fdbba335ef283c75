"""How well sampled worlds predict danger: "can opponent j Ron card c now?" on bot-game decision states.

Usage: python bench/belief_quality.py [--states 3000] [--worlds 16] [--seed 7] [--rules default|two_player]
       [--methods uniform,two_level,...] [--blur 1,2,3]

States: discard decisions (draw / call-discard phase) of ``greedy``/``defensive`` games
(``training.bot_states``, seeds not used to fit the table). Triples: (state, opponent j, each legal discard
c of the acting seat). Label: the engine's own answer: after discarding c in the true record, does the
claim window offer j Ron? Estimators: the same question asked of ``--worlds`` sampled worlds per state
(``meld8_env.belief.sample_worlds``: ``uniform``, ``two_level``, ``two_level`` with ``no_pass`` or ``last_discard``;
p = (hits + 0.02) / (worlds + 1)), and
``defensive``'s danger count (live wait shapes on c; AUC only: it is not a probability), and two rows that
score every card of an opponent alike: the fitted ``P(ready)`` and, as a CHEATING ceiling, the true status
(what a perfect status model could reach without knowing the hand). Rows: AUC,
log-loss (base rate's log-loss beside it), the mean predicted probability (calibration: against the base
rate), 95% bootstrap intervals over the states, the paired AUC differences
to ``two_level``, and the median time of one ``sample_worlds`` call. ``learned``: the per-card wait model
(``meld8_env.wait_model``); its direct row ``P(ready) * q(c)`` asks the model itself, without worlds.
``--blur m,...``: CHEATING rows, one per m, whose worlds are the true record with m concealed cards of every opponent
swapped for random undrawn cards (``agents.search_backend.swap_into_wall``, the worlds of ``search:cheat=4,noise=m``):
they put the search's ``noise`` curve (``bench/search_regret.py``) on this bench's AUC scale.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from agents.search_backend import swap_into_wall
from meld8_env.belief import LAST_STATS, ready_prior, sample_worlds
from meld8_env.codes import Phase
from meld8_env.engine.records import refresh, step_records
from meld8_env.features import danger
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from meld8_env.wait_model import wait_probs
from training import fit_waits
from training.bot_states import play_bot_states
from training.fit_belief import true_ready
from training.fit_waits import auc

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


def logloss(p: np.ndarray, y: np.ndarray) -> float:
    return fit_waits.logloss(p, y, eps=1e-4)  # the clip this bench always used


BOOT = 200


def bootstrap_aucs(
    scores: dict[str, np.ndarray], y: np.ndarray, sid: np.ndarray, n_states: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """(BOOT,) AUCs per estimator over resamples of the states (with replacement; a state's triples move
    together, since they share its worlds). The same resamples serve every estimator, so differences pair."""
    order = np.argsort(sid, kind="stable")
    starts = np.searchsorted(sid[order], np.arange(n_states))
    sizes = np.bincount(sid, minlength=n_states)
    out = {k: np.empty(BOOT) for k in scores}
    for b in range(BOOT):
        pick = rng.integers(0, n_states, n_states)
        idx = order[np.concatenate([np.arange(starts[i], starts[i] + sizes[i]) for i in pick.tolist()])]
        for k, v in scores.items():
            out[k][b] = auc(v[idx], y[idx])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=3000)
    ap.add_argument("--worlds", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rules", choices=["default", "two_player"], default="default")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated rows of METHODS (default: all)")
    ap.add_argument("--blur", default="", help="CHEATING rows: the true hands with m cards of each opponent swapped")
    a = ap.parse_args()
    try:
        blurs = [int(m) for m in a.blur.split(",") if m]
    except ValueError:
        raise SystemExit(f"belief_quality: --blur {a.blur!r}: give card counts like 1,2,3") from None
    if any(not 0 <= m <= 13 for m in blurs):
        raise SystemExit(f"belief_quality: --blur {a.blur!r}: each count must be 0..13")
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
    blurred = {m: [] for m in blurs}
    blur_rng = np.random.default_rng(a.seed + 2)  # its own stream: the honest rows are the same with or without it
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
        for m, rows in blurred.items():
            worlds = np.repeat(r.reshape(1), a.worlds).copy()
            swap_into_wall(worlds, info, m, blur_rng)
            refresh(worlds, rules)
            rows.append((ron_after_discards(worlds, cards, rules).sum(axis=0) + 0.02) / (a.worlds + 1.0))
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
    sid = flat([np.full(x.shape, i) for i, x in enumerate(y)])  # the state of each triple
    scores = {m: flat(xs) for m, xs in est.items()}
    scores |= {"defensive danger count": flat(dang), "status alone: the fitted P(ready), same for every card":
               flat(prior), "CHEATING: the true status, same for every card": flat(oracle),
               "wait model direct, no worlds: P(ready) * q(c)": flat(direct),
               "CHEATING: the true status * q(c)": flat(direct_orc)}  # fmt: skip
    blur_names = {m: f"CHEATING: the true hands, {m} card(s) of each opponent swapped" for m in blurred}
    scores |= {blur_names[m]: flat(rows) for m, rows in blurred.items()}
    probs = set(est) | set(blur_names.values()) | {"wait model direct, no worlds: P(ready) * q(c)"}  # log-loss rows
    boot = bootstrap_aucs(scores, yy, sid, len(states), np.random.default_rng(a.seed + 1))
    print(f"{len(states)} decision states, {yy.size} (state, opponent, card) triples, base rate {base:.4f}, "
          f"{a.worlds} worlds per state, rules {a.rules}")  # fmt: skip
    print(f"two-level worlds whose drawn status no proposal met: {LAST_STATS['status_missed']} of "
          f"{LAST_STATS['worlds']} (per opponent)")  # fmt: skip
    print(
        f"\n| estimator | AUC | 95% CI ({BOOT} bootstrap resamples of the states) | log-loss | mean p (calibration: "
        "the base rate) |\n|---|---|---|---|---|"
    )
    print(f"| base rate | 0.5 | - | {logloss(np.full(yy.size, base), yy):.4f} | {base:.4f} |")
    for name, p in scores.items():
        lo, hi = np.percentile(boot[name], [2.5, 97.5])
        ll, mean = (f"{logloss(p, yy):.4f}", f"{p.mean():.4f}") if name in probs else ("-", "-")
        print(f"| {name} | {auc(p, yy):.4f} | [{lo:.4f}, {hi:.4f}] | {ll} | {mean} |")
    if "two_level" in scores:
        print("\n| paired AUC difference (same states, same bootstrap resamples) | d | 95% CI |\n|---|---|---|")
        for name in scores:
            if name != "two_level" and (name in est or name in blur_names.values()):
                d = auc(scores[name], yy) - auc(scores["two_level"], yy)
                lo, hi = np.percentile(boot[name] - boot["two_level"], [2.5, 97.5])
                print(f"| {name} - two_level | {d:+.4f} | [{lo:+.4f}, {hi:+.4f}] |")
    print("\n| timing | ms |\n|---|---|")
    for method in est:
        ms = [t * 1e3 for m, t in times if m == method]
        print(f"| sample_worlds {method} n={a.worlds} median | {statistics.median(ms):.2f} |")


if __name__ == "__main__":
    main()
