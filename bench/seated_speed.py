"""Games/s of one process playing whole games with a lineup seated, several lineups interleaved in one run
(so machine load hits them alike), and the share of the time each agent takes to choose.

    python bench/seated_speed.py --games 64 --rounds 3 distilled,defensive,greedy defensive,defensive,greedy

Each round plays ``--games`` games (one batch: every agent answers all its pending decisions in one
``act_batch`` call per step) of every lineup on the same deal seeds; the table gives the median over the
rounds of games/s and of each seat's share of the wall time. The tournament (``meld8 tournament
--workers 2``) runs one such loop per worker, plus logging.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from bench_args import at_least, load_or_exit

from meld8_env.codes import Phase
from meld8_env.engine.records import observe_records, start_records, step_records
from meld8_env.rules import RuleConfig


def play(agents: list, rules: RuleConfig, seeds: np.ndarray) -> tuple[float, list[float]]:
    """(wall seconds, seconds spent in each seat's act_batch) for one batch of games."""
    recs = start_records(rules, seeds)
    spent = [0.0] * len(agents)
    t0 = time.perf_counter()
    while (recs["phase"] != Phase.OVER).any():
        live = recs["phase"] != Phase.OVER
        acting = recs["acting"].astype(np.int64)
        obs, masks = observe_records(rules, recs)
        acts = np.full(len(recs), -1, np.int64)
        for seat, agent in enumerate(agents):
            rows = np.flatnonzero(live & (acting == seat))
            if rows.size:
                t = time.perf_counter()
                acts[rows] = agent.act_batch(obs[rows], masks[rows])
                spent[seat] += time.perf_counter() - t
        step_records(rules, recs, acts)
    return time.perf_counter() - t0, spent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lineups", nargs="+", help="comma-separated agent specs, one per seat")
    ap.add_argument("--games", type=at_least(1), default=64, help="games per lineup and round (default 64)")
    ap.add_argument("--rounds", type=at_least(1), default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--seed", type=at_least(0), default=11, help="seed of the games (default 11)")
    args = ap.parse_args()
    rules = RuleConfig()
    lineups = {text: [load_or_exit(ap, s, rules) for s in text.split(",")] for text in args.lineups}
    bad = [t for t, a in lineups.items() if len(a) != rules.num_players]
    if bad:
        ap.error(f"lineup {bad[0]!r}: name {rules.num_players} agents")
    rate: dict[str, list[float]] = {t: [] for t in lineups}
    share: dict[str, list[list[float]]] = {t: [] for t in lineups}
    for r in range(args.rounds):
        seeds = np.arange(args.games, dtype=np.uint64) + np.uint64(args.seed * 1_000_003 + r * args.games)
        for text, agents in lineups.items():
            wall, spent = play(agents, rules, seeds)
            rate[text].append(args.games / wall)
            share[text].append([s / wall for s in spent])
    print("| lineup | games/s | time share per seat |")
    print("|---|---:|---|")
    for text in lineups:
        parts = [f"{statistics.median(s[i] for s in share[text]):.0%}" for i in range(rules.num_players)]
        print(f"| {text} | {statistics.median(rate[text]):.1f} | {' / '.join(parts)} |")


if __name__ == "__main__":
    main()
