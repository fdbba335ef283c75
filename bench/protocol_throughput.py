"""Seat-protocol throughput: the example Python bot through the protocol vs the same policy in-process.

Usage: python bench/protocol_throughput.py [--games 600] [--boards 1000] [--repeats 3]

Every game of a run is played in one batch (as a tournament does). The policy is
``examples/bots/python_bot.py``'s ``Bot`` class in both columns:
- "protocol": ``cmd:python examples/bots/python_bot.py`` - a separate process, JSON lines over pipes;
- "in-process": the same ``Bot`` object fed the same events as Python dicts (no JSON, no pipe, no
  second process), through the same ``meld8_env.table.Table``.
So the difference is the protocol's own cost; divided by the bot's decisions it is the per-decision
overhead. Rows: the bot against two ``random`` seats and the bot in all three seats, through
``training.arena.play`` (one process); and a tournament (``training.tournament.run``) with 1 and 2 worker
processes, the protocol bot against two ``random`` seats. Medians of ``--repeats`` runs, seeds differ per repeat.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from agents.registry import load_agent
from meld8_env.protocol import parse_action
from meld8_env.rules import RuleConfig
from training.arena import play

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "examples" / "bots" / "python_bot.py"
COMMAND = f"cmd:{sys.executable} {BOT}"


def _bot_class():
    spec = importlib.util.spec_from_file_location("python_bot", BOT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Bot


class InProcessBot:
    """The example bot's ``Bot`` seated in-process: the Table's stream calls go straight to it."""

    plays_streams = True
    name = "python_bot (in-process)"

    def __init__(self) -> None:
        self.bot = _bot_class()()
        self.pending: dict[int, object] = {}

    def setup(self, rules: RuleConfig) -> None: ...

    def open_stream(self, key: int, info: dict) -> None: ...

    def flush(self) -> None: ...

    def feed(self, key: int, events: list[dict]) -> None:
        for ev in events:
            answer = self.bot.on_event({**ev, "game": key})
            if answer is not None:
                self.pending[key] = answer["action"]

    def act_streams(self, keys: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([parse_action(self.pending.pop(k)) for k in keys.tolist()], np.int64)

    def close_stream(self, key: int) -> list[dict]:
        return []


def arena_rate(agent_of: str, all_seats: bool, games: int, seed: int) -> tuple[float, int]:
    """(games/s, decisions of the bot) for ``games`` games."""
    rules = RuleConfig()
    bot = InProcessBot() if agent_of == "in-process" else load_agent(COMMAND, rules)
    agents = [bot] if all_seats else [bot, load_agent("random", rules, 1)]
    seats = np.zeros((games, 3), np.int64) if all_seats else np.array([np.roll([0, 1, 1], k) for k in range(games)])
    counter = _Counting(bot)
    t0 = time.perf_counter()
    play([counter] + agents[1:], seats, list(range(seed, seed + games)), rules, batch=games)
    dt = time.perf_counter() - t0
    if hasattr(bot, "close"):
        bot.close()
    return games / dt, counter.decisions


class _Counting:
    """Counts the decisions asked of a stream agent (everything else passes through)."""

    plays_streams = True

    def __init__(self, agent) -> None:
        self.agent, self.decisions, self.name = agent, 0, agent.name

    def __getattr__(self, item):
        return getattr(self.agent, item)

    def act_streams(self, keys, obs, masks):
        self.decisions += len(keys)
        return self.agent.act_streams(keys, obs, masks)


def tournament_rate(workers: int, boards: int, seed: int, per_task: int | None = None) -> float:
    from training.tournament import TournamentConfig, run

    out = Path(tempfile.mkdtemp(prefix="meld8-bench-"))
    try:
        cfg = TournamentConfig(agents=[COMMAND, "random", "random"], boards=boards, seed=seed, workers=workers,
                               out=str(out), progress=False, chart=False, boards_per_task=per_task)  # fmt: skip
        t0 = time.perf_counter()
        res = run(cfg)
        dt = time.perf_counter() - t0
        return res["games"] / dt
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=600)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--boards", type=int, default=1000, help="boards of the tournament rows (3 games each)")
    args = ap.parse_args()
    print(f"example Python bot, {args.games} games per run, median of {args.repeats} runs")
    print()
    print("| lineup | in-process games/s | protocol games/s | ratio | overhead per bot decision |")
    print("|---|---:|---:|---:|---:|")
    for label, all_seats in (("bot vs random, random (arena)", False), ("bot in all 3 seats (arena)", True)):
        ins, outs, decisions = [], [], 0
        for r in range(args.repeats):  # interleaved, so drift hits both columns alike
            ins.append(arena_rate("in-process", all_seats, args.games, 1000 * r)[0])
            rate, decisions = arena_rate("protocol", all_seats, args.games, 1000 * r)
            outs.append(rate)
        i, o = statistics.median(ins), statistics.median(outs)
        per = (args.games / o - args.games / i) / decisions * 1e6
        print(f"| {label} | {i:,.0f} | {o:,.0f} | {o / i:.2f} | {per:.1f} µs |", flush=True)
    boards = args.boards
    for workers, per_task in ((1, None), (2, 8), (2, None)):
        t = statistics.median(tournament_rate(workers, boards, r, per_task) for r in range(args.repeats))
        tasks = "" if workers == 1 else f", {per_task or 'auto'} boards a task"
        print(f"| tournament (meld8 tournament), protocol bot vs random, random, {workers} worker(s){tasks}, "
              f"{boards} boards | - | {t:,.0f} | - | - |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
