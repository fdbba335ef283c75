"""Tournament throughput with the built-in bots: games per second, batched vs one game at a time.

Usage: python bench/tournament_throughput.py [--boards 50] [--repeats 3] [--simulate-games 4000]

Each row plays ``--boards`` board seeds under all 6 seatings of greedy, defensive and random (one process)
through ``training.arena.play``; "batched" steps every game of the run together (one ``act_batch``
per agent per step; since the whole-game C path, slices of 512 games played in C), "one at a time" plays
the same games with a batch of one, "2 threads" lets the C path use two threads (what an in-process
``meld8 tournament`` does). Medians of repeats.
Then issue 20's comparison in one run: the bots' decisions per second in those tournaments (every action of
every game, counted from the games' action logs) against ``meld8 simulate``'s random-play steps per second
(``meld8_env.simulate.simulate`` on ``--simulate-games`` games, one thread, run once), and their ratio. A random game
takes ~7,000 steps, and the last games of a run leave most of the batch idle, so the rate grows with the games
(session 30: 0.65M steps/s at 300 games, 1.06M at 1,000, 1.34M at 4,000); the default plays 4,000 (~20 s).
Then the size of a game's record in ``games.jsonl`` with and without its actions.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import statistics
import time

import numpy as np

from agents.registry import load_agent
from meld8_env.rules import RuleConfig
from meld8_env.simulate import simulate
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


def play_lineup(boards: int, batch: int, seed: int, threads: int = 1) -> tuple[list, float]:
    """The games of one run (greedy, defensive, random; ``boards`` boards x 6 seatings) and the seconds they took."""
    rules = RuleConfig()
    agents = [load_agent(n, rules, i) for i, n in enumerate(["greedy", "defensive", "random"])]
    perms = np.array(list(itertools.permutations(range(3))))
    seats = np.tile(perms, (boards, 1))
    seeds = np.repeat(np.arange(boards) + seed * 100_000, 6)
    t0 = time.perf_counter()
    recs = play(agents, seats, seeds, rules, batch=batch, threads=threads)
    return recs, time.perf_counter() - t0


def actions_of(recs: list) -> int:
    """Every action of every game, from the games' action logs."""
    return sum(len(base64.b64decode(r.actions)) for r in recs)


def rate(boards: int, batch: int, seed: int, threads: int = 1) -> tuple[float, float]:
    """(games/s, actions/s) of one run."""
    recs, seconds = play_lineup(boards, batch, seed, threads)
    return len(recs) / seconds, actions_of(recs) / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--simulate-games", type=int, default=4000, help="games of meld8 simulate's random play (>= 1)")
    args = ap.parse_args()
    if args.boards < 1 or args.repeats < 1 or args.simulate_games < 1:
        ap.error("--boards, --repeats and --simulate-games must be at least 1")
    print(f"greedy / defensive / random, {args.boards} boards x 6 seatings, median of {args.repeats} runs, 1 process")
    print()
    print("| mode | games/s |")
    print("|---|---:|")
    modes = (("batched (all games together)", 512, 1), ("one game at a time", 1, 1), ("batched, 2 threads", 512, 2))
    decisions = {}
    for name, batch, threads in modes:
        boards = args.boards if batch > 1 else max(2, args.boards // 10)
        runs = [rate(boards, batch, s, threads) for s in range(args.repeats)]
        print(f"| {name} | {statistics.median(g for g, _ in runs):,.1f} |", flush=True)
        if batch > 1:
            decisions[threads] = statistics.median(a for _, a in runs)
    stats = simulate(args.simulate_games, seed=1, progress=False)
    random_rate = stats["agent_steps"] / stats["seconds"]
    print()
    print("| tournament decisions against random play | per second |")
    print("|---|---:|")
    for threads, a in decisions.items():
        print(f"| bot decisions in the batched tournament, {threads} thread(s) | {a:,.0f} |")
    print(f"| meld8 simulate random-play steps (1 thread, {args.simulate_games} games) | {random_rate:,.0f} |")
    for threads, a in decisions.items():
        print(f"| tournament decisions / simulate steps, {threads} thread(s) | {a / random_rate:.3f} |")
    with_actions, without = log_bytes(max(2, args.boards // 5))
    print()
    print("| games.jsonl bytes per game | bytes |")
    print("|---|---:|")
    print(f"| with its actions (as logged: any game re-creates) | {with_actions:,.0f} |")
    print(f"| without them | {without:,.0f} |")


if __name__ == "__main__":
    main()
