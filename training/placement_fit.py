"""Fit the placement table's data (``meld8_env.placement``) by playing bot games.

Usage: ``python -m training.placement_fit [--rules default] [--games 3000] [--seed 7] [--out PATH]``

Plays ``games`` games between ``greedy`` and ``defensive`` (every mix of the two, rotated over the seats)
and counts, per round, each distinct dealer-relative payment vector of a hand that ended with a payment
(win or chombo; draws replay the round and pay nothing). Writes the counts as JSON with a SHA-256
checksum to ``meld8_env/data/placement_<rules hash>.json`` (the path ``meld8_env.placement`` loads).
Deterministic under ``--seed``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from math import gcd
from pathlib import Path

import numpy as np

from agents.registry import load_agent
from meld8_env.placement import FORMAT_VERSION, payload_checksum, shipped_path
from meld8_env.rules import RuleConfig
from meld8_env.table import Table
from meld8_env.vector import Meld8Vector

LINEUP_POOL = ("greedy", "defensive")


def lineups(P: int) -> list[tuple[int, ...]]:
    """Every mix of the two bots over P seats (all 2**P assignments)."""
    return [tuple((k >> s) & 1 for s in range(P)) for k in range(2**P)]


def collect(rules: RuleConfig, games: int, seed: int, batch: int = 512) -> tuple[list[Counter], list[int], int]:
    """(per-round Counter of dealer-relative payment tuples, per-round draws, games played)."""
    P, R = rules.num_players, rules.rounds
    agents = [load_agent(s, rules, seed + i) for i, s in enumerate(LINEUP_POOL)]
    mixes = lineups(P)
    counts = [Counter() for _ in range(R)]
    draws = [0] * R
    played = 0
    while played < games:
        n = min(batch, games - played)
        v = Meld8Vector(n, rules=rules, seed=seed * 1_000_003 + played, autoreset=False)
        v.reset()
        table = Table(v)
        table.seat(np.arange(n), [[agents[a] for a in mixes[(played + g) % len(mixes)]] for g in range(n)])
        chiicha = v.state["chiicha"].astype(np.int64).copy()
        while not v.engine.over.all():
            acts = np.zeros(n, np.int64)
            table.act(acts)
            table.step(acts)
            for h in v.hand_outcomes():
                if not any(h.payments):
                    draws[h.round] += 1
                    continue
                dealer = (int(chiicha[h.game]) + h.round) % P
                counts[h.round][tuple(h.payments[(dealer + k) % P] for k in range(P))] += 1
        table.close()
        v.close()
        played += n
    return counts, draws, played


def build(rules: RuleConfig, games: int, seed: int) -> dict:
    counts, draws, played = collect(rules, games, seed)
    unit = rules.starting_score
    for c in counts:
        for pay in c:
            for x in pay:
                unit = gcd(unit, abs(x))
    data = {
        "format": FORMAT_VERSION,
        "rules_hash": rules.rules_hash,
        "players": rules.num_players,
        "games": played,
        "seed": seed,
        "lineup_pool": list(LINEUP_POOL),
        "unit": unit,
        "draws": draws,
        "rounds": [
            [{"payments": list(pay), "count": n} for pay, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))]
            for c in counts
        ],
    }
    data["sha256"] = payload_checksum(data)
    return data


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default=None, help="rules name or YAML path (default rules)")
    ap.add_argument("--games", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=None, help="output path (default: the shipped location)")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error(f"--games must be >= 1, got {args.games}")
    rules = RuleConfig.load(args.rules)
    t0 = time.time()
    data = build(rules, args.games, args.seed)
    out = Path(args.out) if args.out else shipped_path(rules)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")
    tmp.replace(out)
    hands = sum(r["count"] for rnd in data["rounds"] for r in rnd)
    print(f"{out}: {data['games']} games, {hands} paying hands, {sum(data['draws'])} draws, {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
