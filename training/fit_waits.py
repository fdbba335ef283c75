"""Fit the belief's per-card wait model (``meld8_env/data/wait_model.json``) on bot self-play.

Usage: python training/fit_waits.py [--games 300] [--seed 3031] [--val-seed 3032] [--cache /tmp/meld8_waits]
       [--out meld8_env/data/wait_model.json]

Rows: for every discard decision (draw / call-discard phase) of ``greedy``/``defensive`` games
(``training.bot_states``), 3p and 2p, every opponent j of the acting seat that is *ready* in the true record
(waits non-empty, none in its own discards, R33: ``training.fit_belief.true_ready``), and every playing card c
the acting seat cannot see in j's hand (its own hand and the pool): the features
``meld8_env.wait_model.wait_features(infoset, j)[c]`` (public only) and the oracle label "c completes j's
true hand" (its form waits). A logistic regression (standardized features and ``wait_model.PAIRS`` products,
L2 1e-3, L-BFGS) per rule set. Seeds are disjoint from the bench's (``bench/belief_quality.py`` plays
10,000 + its seed) and the validation games' seed from the fit's; the held-out AUC and log-loss are printed
and stored. The self-play states are cached as ``.npy`` under ``--cache`` (keyed by rules, games, seed).
The file holds the parameters, the command, the row counts and the sha256 of the parameters (checked on load).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.stats import rankdata

from meld8_env.codes import Phase
from meld8_env.hands import waits_batch
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from meld8_env.wait_model import FEATURES, PAIRS, design, model_checksum, wait_features
from training.bot_states import play_bot_states
from training.fit_belief import true_ready

L2 = 1e-3


def cached_states(rules: RuleConfig, games: int, seed: int, cache: Path) -> np.ndarray:
    """Discard-decision records of ``games`` bot games (seed ``seed``), cached as .npy under ``cache``."""
    path = cache / f"states_{rules.num_players}p_{games}_{seed}.npy"
    if path.exists():
        return np.load(path)
    s = play_bot_states(rules, games, seed)
    s = np.ascontiguousarray(s[np.isin(s["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])])
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, s)
    return s


def rows(states: np.ndarray, rules: RuleConfig) -> tuple[np.ndarray, np.ndarray]:
    """(X (N, F), y (N,) bool): one row per (state, ready opponent, card the acting seat cannot place)."""
    P = rules.num_players
    xs, ys = [], []
    for k in range(1, P):
        opp = (states["acting"].astype(np.int64) + k) % P
        ready = true_ready(states, opp, P)
        i = np.flatnonzero(ready)
        waits = waits_batch(states["hands"][i, opp[i]].copy(), states["melds"][i, opp[i]].copy())
        waits &= ~states["hands"][i, opp[i]]
        for r, j, w in zip(states[i], opp[i].tolist(), waits.tolist(), strict=True):
            info = infoset(r, int(r["acting"]), rules)
            cand = np.flatnonzero(((info.hand | info.pool) >> np.arange(52)) & 1)
            xs.append(wait_features(info, j)[cand])
            ys.append(((w >> cand) & 1).astype(bool))
    return np.concatenate(xs), np.concatenate(ys)


def auc(score: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve of ``score`` for the bool labels ``y`` (rank form, ties averaged)."""
    r = rankdata(score)
    pos = y.sum()
    return float((r[y].sum() - pos * (pos + 1) / 2) / (pos * (len(y) - pos)))


def within_group_counts(
    score: np.ndarray, y: np.ndarray, group: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group that holds both labels: (group id, concordant (positive, negative) pairs with ties 1/2, pairs), the
    parts of :func:`within_group_auc` (sum(concordant) / sum(pairs)), so that an interval can resample the groups."""
    ids, conc, pairs = [], [], []
    order = np.argsort(group, kind="stable")
    for g in np.split(order, np.flatnonzero(np.diff(group[order])) + 1):
        t = y[g]
        if g.size and t.any() and not t.all():
            d = score[g][t][:, None] - score[g][~t][None, :]
            ids.append(int(group[g[0]]))
            conc.append(float((d > 0).sum() + 0.5 * (d == 0).sum()))
            pairs.append(d.size)
    return np.array(ids, np.int64), np.array(conc, np.float64), np.array(pairs, np.int64)


def within_group_auc(score: np.ndarray, y: np.ndarray, group: np.ndarray) -> float:
    """The AUC over the (positive, negative) pairs of one group only (ties count 1/2), e.g. one decision state's
    discards: what a choice among them can use; a score that only tells groups apart ranks no pair. NaN when no
    group holds both labels."""
    _, conc, pairs = within_group_counts(score, y, group)
    return float(conc.sum() / pairs.sum()) if pairs.sum() else float("nan")


def logloss(p: np.ndarray, y: np.ndarray, eps: float = 1e-6) -> float:
    """Mean log-loss of the probabilities ``p`` (clipped to [eps, 1 - eps]) for the bool labels ``y``."""
    p = np.clip(p, eps, 1 - eps)
    return float(-np.mean(np.where(y, np.log(p), np.log(1 - p))))


def fit_logistic(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weights minimizing the mean logistic loss of ``z @ w`` plus ``L2 |w[1:]|^2`` (L-BFGS)."""
    yf = y.astype(np.float64)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = z @ w
        p = 1.0 / (1.0 + np.exp(-s))
        val = np.mean(np.logaddexp(0.0, s) - yf * s) + L2 * (w[1:] @ w[1:])
        g = z.T @ (p - yf) / len(yf)
        g[1:] += 2 * L2 * w[1:]
        return float(val), g

    res = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return res.x


def fit(rules: RuleConfig, a: argparse.Namespace) -> tuple[dict, dict]:
    x, y = rows(cached_states(rules, a.games, a.seed, a.cache), rules)
    xv, yv = rows(cached_states(rules, max(8, a.games // 3), a.val_seed, a.cache), rules)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    w = fit_logistic(design(x, mean, scale), y)
    pv = 1.0 / (1.0 + np.exp(-(design(xv, mean, scale) @ w)))
    stats = {"rows": int(len(y)), "positives": int(y.sum()), "val_rows": int(len(yv)),
             "val_auc": round(auc(pv, yv), 4), "val_logloss": round(logloss(pv, yv), 4),
             "val_base_logloss": round(logloss(np.full(len(yv), y.mean()), yv), 4)}  # fmt: skip
    model = {"mean": [round(float(v), 6) for v in mean], "scale": [round(float(v), 6) for v in scale],
             "w": [round(float(v), 6) for v in w]}  # fmt: skip
    return model, stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--seed", type=int, default=3031)
    ap.add_argument("--val-seed", type=int, default=3032)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/meld8_waits"))
    ap.add_argument("--out", type=Path, default=Path("meld8_env/data/wait_model.json"))
    a = ap.parse_args()
    if a.seed == a.val_seed or min(a.seed, a.val_seed) >= 10_000:
        raise SystemExit("fit_waits: --seed and --val-seed must differ and stay below 10000 (the bench plays 10000+)")
    model, stats = {}, {}
    for key, rules in (("3p", RuleConfig()), ("2p", RuleConfig.two_player())):
        model[key], stats[key] = fit(rules, a)
        print(key, stats[key])
    data = {
        "about": "logistic P(c in waits_j | j ready) on meld8_env.wait_model features; meld8_env.belief learned",
        "command": f"python training/fit_waits.py --games {a.games} --seed {a.seed} --val-seed {a.val_seed}",
        "features": list(FEATURES),
        "pairs": [list(p) for p in PAIRS],
        "stats": stats,
        "model": model,
        "sha256": model_checksum(model),
    }
    a.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
