"""How far can public facts rank the dangerous discards? A small network against the wait model, on the same rows.

Usage: python bench/danger_mlp.py [--train-games 800] [--test-games 200] [--epochs 12] [--seed 31]

Session 28 measured in tournaments what a per-card danger estimate is worth inside the search's ``ron`` formula
(docs/search_log.md "Session 28"): the wait model (AUC 0.84 on the search's candidates) makes the search worse,
an estimate of AUC 0.90 equals the default, 0.96 places about 0.065 better. This bench asks whether the public facts
the wait model reads hold more than its logistic regression takes out of them. Rows: one per (discard state of a
``greedy``/``defensive`` game, opponent j, legal discard c of the acting seat), label: the engine offers j Ron on c
(``belief_quality.ron_after_discards``: yaku, furiten and the round's minimum included). Features: the wait model's
per-card facts (``meld8_env.wait_model.wait_features``), j's status key and fitted ready prior
(``meld8_env.belief``), and the model's own ``q(c)`` and ``P(ready) * q(c)``. Scores on held-out games (other
seeds): the wait model's ``P(ready) * q(c)``, and a two-layer network (torch, trained on the training games with
the cross-entropy of the label). AUCs per (state, opponent, card) and per (state, card) for "some opponent is
offered Ron" (the search's question; scores combined as 1 - prod(1 - p)), with 95 % bootstrap intervals over the
test states and the paired difference, and the AUC within one state (over pairs of one state's rows only: what a
choice among its discards can use).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from belief_quality import bootstrap_aucs, ron_after_discards  # noqa: E402

from meld8_env.belief import ready_prior, status_key  # noqa: E402
from meld8_env.codes import Phase  # noqa: E402
from meld8_env.infoset import infoset  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402
from meld8_env.wait_model import wait_features, wait_probs  # noqa: E402
from training.bot_states import play_bot_states  # noqa: E402
from training.fit_waits import auc, within_group_auc  # noqa: E402


def rows(rules: RuleConfig, games: int, seed: int) -> tuple[np.ndarray, ...]:
    """X (N, F), y (N,), the wait model's score (N,), state id (N,) and (state, card) id (N,) of every
    (discard state, opponent, legal discard) of ``games`` bot games."""
    states = play_bot_states(rules, games, seed=seed)
    states = states[np.isin(states["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])]
    xs, ys, base, sid, cid = [], [], [], [], []
    at = 0
    for n, r in enumerate(states):
        info = infoset(r, int(r["acting"]), rules)
        cards = np.array([c for c in range(52) if info.legal >> c & 1], np.int64)
        if not cards.size:
            continue
        ron = ron_after_discards(r.reshape(1).copy(), cards, rules)[0]  # (m, P)
        for j in info.opponents:
            p, q = ready_prior(info, j), wait_probs(info, j)[cards]
            key = np.array(status_key(info, j), np.float64)
            f = wait_features(info, j)[cards]
            extra = np.column_stack([np.full((len(cards), 3), key), np.full(len(cards), p), q, p * q])
            xs.append(np.hstack([f, extra]))
            ys.append(ron[:, j])
            base.append(p * q)
            sid.append(np.full(len(cards), n))
            cid.append(at + np.arange(len(cards)))
        at += len(cards)
    return tuple(np.concatenate(v) for v in (xs, ys, base, sid, cid))


def fit(X: np.ndarray, y: np.ndarray, epochs: int, seed: int) -> tuple[torch.nn.Module, np.ndarray, np.ndarray]:
    torch.manual_seed(seed)
    mu, sd = X.mean(axis=0), X.std(axis=0) + 1e-6
    xt = torch.tensor((X - mu) / sd, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    net = torch.nn.Sequential(
        torch.nn.Linear(X.shape[1], 96),
        torch.nn.ReLU(),
        torch.nn.Linear(96, 96),
        torch.nn.ReLU(),
        torch.nn.Linear(96, 1),
    )
    opt = torch.optim.Adam(net.parameters(), lr=2e-3, weight_decay=1e-5)
    gen = torch.Generator().manual_seed(seed)
    for ep in range(epochs):
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for k in range(0, len(xt), 2048):
            b = perm[k : k + 2048]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(net(xt[b]).squeeze(1), yt[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss) * len(b)
        print(f"  epoch {ep + 1}: train loss {total / len(xt):.4f}", file=sys.stderr)
    return net, mu, sd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train-games", type=int, default=800)
    ap.add_argument("--test-games", type=int, default=200)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=31)
    a = ap.parse_args()
    for flag, v in (("--train-games", a.train_games), ("--test-games", a.test_games), ("--epochs", a.epochs)):
        if v < 1:
            ap.error(f"{flag}: at least 1")
    rules = RuleConfig()
    t0 = time.perf_counter()
    Xtr, ytr, _, _, _ = rows(rules, a.train_games, 50_000 + a.seed)
    Xte, yte, base, sid, cid = rows(rules, a.test_games, 60_000 + a.seed)
    print(f"rows: train {len(ytr)} (rate {ytr.mean():.4f}), test {len(yte)} (rate {yte.mean():.4f}); "
          f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)  # fmt: skip
    net, mu, sd = fit(Xtr, ytr, a.epochs, a.seed)
    with torch.no_grad():
        mlp = torch.sigmoid(net(torch.tensor((Xte - mu) / sd, dtype=torch.float32)).squeeze(1)).numpy()
    yte = yte.astype(bool)
    n_states = int(sid.max()) + 1
    rng = np.random.default_rng(a.seed)
    print(f"{a.train_games} training games, {a.test_games} test games (other seeds), {len(yte)} test rows, "
          f"Ron rate {yte.mean():.4f}")  # fmt: skip
    print("\n| rows | score | AUC | 95% CI | AUC within one state | mean p |\n|---|---|---:|---|---:|---:|")
    tables = {}
    for level in ("(state, opponent, card)", "(state, card): some opponent"):
        if level.startswith("(state, opponent"):
            y, scores, s_id = yte, {"wait model P(ready) * q(c)": base, "network": mlp}, sid
        else:  # one row per (state, card): 1 - prod over the opponents of (1 - p)
            ids, inv = np.unique(cid, return_inverse=True)
            y = np.zeros(len(ids), bool)
            np.logical_or.at(y, inv, yte)
            s_id = np.zeros(len(ids), np.int64)
            s_id[inv] = sid
            scores = {}
            for name, p in (("wait model P(ready) * q(c)", base), ("network", mlp)):
                keep = np.ones(len(ids))
                np.multiply.at(keep, inv, 1 - np.clip(p, 0, 1))
                scores[name] = 1 - keep
        boot = bootstrap_aucs(scores, y, s_id, n_states, rng)
        for name, p in scores.items():
            lo, hi = np.percentile(boot[name], [2.5, 97.5])
            print(f"| {level} | {name} | {auc(p, y):.4f} | [{lo:.4f}, {hi:.4f}] | {within_group_auc(p, y, s_id):.4f} "
                  f"| {p.mean():.4f} |")  # fmt: skip
        d = boot["network"] - boot["wait model P(ready) * q(c)"]
        tables[level] = (auc(scores["network"], y) - auc(scores["wait model P(ready) * q(c)"], y), d)
    print("\n| rows | network - wait model (AUC) | 95% CI |\n|---|---:|---|")
    for level, (diff, d) in tables.items():
        lo, hi = np.percentile(d, [2.5, 97.5])
        print(f"| {level} | {diff:+.4f} | [{lo:+.4f}, {hi:+.4f}] |")


if __name__ == "__main__":
    main()
