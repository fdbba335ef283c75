"""Where a network-prior search changes the network's move, by the network's confidence in it.

Usage: ``python bench/prior_confidence.py [--spec search:prior=distilled,keep=prior] [--states 400] [--seed 11]``

The question behind it: could the search play the network's move unsearched where the network is sure of it (a
confidence gate), and spend the time elsewhere? Decision states come from games of ``greedy`` vs ``defensive``
(``search_speed.states``: only states with a choice). For each state, one decision at a time: the prior network's
probability of its own move (the largest over the legal actions), its move, the search's move and the rollouts the
search spent (its ``rollouts`` counter: the budget, which no machine load moves). Rows (markdown): for each gate
``p``, the share of states the network gives its move ``p`` or more, how often the search changed the move there
and elsewhere, and the share of all rollouts those states took (what the gate would save).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from search_speed import states  # noqa: E402

from agents import search_backend as sb  # noqa: E402
from agents.registry import load_agent  # noqa: E402
from meld8_env.engine.records import observe_records  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402

GATES = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)


def scan(spec: str, n: int, seed: int) -> np.ndarray:
    """Per state: (network's top probability, network's move, search's move, rollouts)."""
    rules = RuleConfig()
    agent = load_agent(spec, rules, seed=5)
    prior = str(getattr(agent, "opts", {}).get("prior", "greedy"))
    if prior == "greedy":
        raise SystemExit(f"--spec {spec}: give a search with a network prior (prior=distilled, ppo or ppo:PATH.zip)")
    net = load_agent(prior, rules, seed=5)  # the network the search ranks its candidates by, loaded as an agent
    recs = states(rules, n, seed)
    rows = []
    for i in range(len(recs)):
        rec = recs[i : i + 1]
        obs, masks = observe_records(rules, rec)
        info = sb.infoset_of(rec[0], int(rec[0]["acting"]), rules)
        top = float(net.probabilities(obs, masks)[0][masks[0]].max())
        mine = int(net.act_batch(obs, masks)[0])
        before = agent.rollouts
        chosen = int(agent.act_batch(obs, masks, [info])[0])
        rows.append((top, mine, chosen, agent.rollouts - before))
    return np.array(rows, dtype=float)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="search:prior=distilled,keep=prior")
    ap.add_argument("--states", type=int, default=400)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    if a.states < 1:
        raise SystemExit(f"--states {a.states}: give at least 1")
    arr = scan(a.spec, a.states, a.seed)
    top, changed, rollouts = arr[:, 0], arr[:, 1] != arr[:, 2], arr[:, 3]
    print(f"{len(arr)} states, {a.spec}, seed {a.seed}: the search changed the network's move in {changed.mean():.3f}")
    print()
    print("| gate p | states at p or more | search changed the move there | elsewhere | their share of the rollouts |")
    print("|---:|---:|---:|---:|---:|")
    for p in GATES:
        g = top >= p
        there = f"{changed[g].mean():.3f} ({int(changed[g].sum())})" if g.any() else "-"
        rest = f"{changed[~g].mean():.3f}" if (~g).any() else "-"
        share = rollouts[g].sum() / max(rollouts.sum(), 1)
        print(f"| {p} | {g.mean():.3f} | {there} | {rest} | {share:.3f} |")


if __name__ == "__main__":
    main()
