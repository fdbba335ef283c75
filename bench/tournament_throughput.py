"""Tournament throughput with the built-in bots: games per second, batched vs one game at a time.

Usage: python bench/tournament_throughput.py [--boards 50] [--repeats 3]

Each row plays ``--boards`` board seeds under all 6 seatings of greedy, defensive and random (one process)
through ``training.arena.play``; "batched" steps every game of the run together (one ``act_batch``
per agent per step; since the whole-game C path, slices of 512 games played in C), "one at a time" plays
the same games with a batch of one, "2 threads" lets the C path use two threads (what an in-process
``meld8 tournament`` does). Medians of repeats.
Then the size of a game's record in ``games.jsonl`` with and without its actions.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import numpy as np

from agents.registry import load_agent
from meld8_env.rules import RuleConfig
from training.arena import play


def log_bytes(boards: int) -> tuple[float, float]:
    """Mean bytes of one game's record in games.jsonl: with its actions (as logged) and without."""
    import json

    rules = RuleConfig()
    agents = [load_agent(n, rules, i) for i, n in enumerate(["greedy", "defensive", "random"])]
    perms = np.array(list(itertools.permutations(range(3))))
    recs = play(agents, np.tile(perms, (boards, 1)), np.repeat(np.arange(boards), 6), rules)
    sizes = [len(json.dumps(r.to_json(), separators=(",", ":"))) for r in recs]
    without = [len(json.dumps({**r.to_json(), "actions": ""}, separators=(",", ":"))) - 13 for r in recs]
    return statistics.mean(sizes), statistics.mean(without)


def rate(boards: int, batch: int, seed: int, threads: int = 1) -> float:
    rules = RuleConfig()
    agents = [load_agent(n, rules, i) for i, n in enumerate(["greedy", "defensive", "random"])]
    perms = np.array(list(itertools.permutations(range(3))))
    seats = np.tile(perms, (boards, 1))
    seeds = np.repeat(np.arange(boards) + seed * 100_000, 6)
    t0 = time.perf_counter()
    play(agents, seats, seeds, rules, batch=batch, threads=threads)
    return len(seeds) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"greedy / defensive / random, {args.boards} boards x 6 seatings, median of {args.repeats} runs, 1 process")
    print()
    print("| mode | games/s |")
    print("|---|---:|")
    modes = (("batched (all games together)", 512, 1), ("one game at a time", 1, 1), ("batched, 2 threads", 512, 2))
    for name, batch, threads in modes:
        boards = args.boards if batch > 1 else max(2, args.boards // 10)
        r = statistics.median(rate(boards, batch, s, threads) for s in range(args.repeats))
        print(f"| {name} | {r:,.1f} |", flush=True)
    with_actions, without = log_bytes(max(2, args.boards // 5))
    print()
    print("| games.jsonl bytes per game | bytes |")
    print("|---|---:|")
    print(f"| with its actions (as logged: any game re-creates) | {with_actions:,.0f} |")
    print(f"| without them | {without:,.0f} |")


if __name__ == "__main__":
    main()
