"""Mean placement of each agent from a tournament log (``games.jsonl``), finished or not: boards are
the unit (each holds every seating), 95 % intervals from Student's t over board means, and the paired
difference of the first two agents. Used for a tournament stopped part-way (README, the search headline).
A log may be gzip-compressed (``games.jsonl.gz``: how docs/search_runs keeps the newer ones).

Several logs of one lineup (the same agents in the same order) on different seeds pool their boards: one
line per log, then the pooled means over every board of every log. Logs of other lineups, or two logs that
share a board's deal seed (the same boards counted twice), are refused in one line. ``--as A,B,C`` names the
lineup of every log, for logs whose specs are spelled differently but play the same agents (e.g.
``search:extend=336+extend_z=10`` before it became ``search``'s default): the caller vouches for that.

``--outcomes`` adds, per agent over every game of every log, what its hands ended in, as a tournament's results.json
gives them for one run: wins, deal-ins and calls per hand played, the Tsumo share of its wins, han per win and the
share of its games in each place (session 42 read the distilled network's gap to its teacher from them, over logs
whose results.json is not kept).

    python bench/tournament_log_summary.py results/search_headline/games.jsonl
    python bench/tournament_log_summary.py seed_a/games.jsonl seed_b/games.jsonl.gz
    python bench/tournament_log_summary.py --outcomes docs/search_runs/default_fresh81_s37_games.jsonl.gz
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from meld8_env.replay import ReplayError, read_game_file  # noqa: E402
from meld8_env.safe_text import printable  # noqa: E402


def read_log(path: str) -> list[dict]:
    """The entries of a tournament log, plain or gzip-compressed (told by its first bytes, whatever its name);
    exits in one line naming the line when the file is not a ``meld8 tournament`` log: no header first, not JSON
    lines, or a board whose games do not seat the header's agents with placements 1..P (red team, session 35: such
    files ended in tracebacks, a board without games counted as placement 0, a folder or FIFO hung or read for
    ever). Agent names are shown with control characters escaped."""
    try:
        data = read_game_file(Path(path))
    except ReplayError as e:
        sys.exit(printable(f"not a readable tournament log: {e}"))
    lines = []
    for n, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            lines.append(json.loads(raw.decode("utf-8")))
        except (ValueError, RecursionError) as e:  # JSON and UTF-8 errors, nested too deeply
            why = f"line {n} is not a JSON line: {type(e).__name__}"
            sys.exit(printable(f"{path}: not a readable tournament log ({why})"))
    head = lines[0] if lines else None
    if head is None:  # a tournament writes its header with its first board
        sys.exit(f"{path}: empty (a tournament log before its first board)")
    if not isinstance(head, dict) or head.get("type") != "header":
        sys.exit(f"{path}: not a tournament games.jsonl (no header line)")
    agents = head.get("agents")
    if not (isinstance(agents, list) and 2 <= len(agents) <= 3 and all(isinstance(a, str) and a for a in agents)):
        sys.exit(f"{path}: line 1: agents must be a list of 2 or 3 agent names")
    head["agents"] = [printable(a) for a in agents]
    P = len(agents)
    for n, entry in enumerate(lines[1:], start=2):
        if not isinstance(entry, dict) or entry.get("type") != "board":
            continue
        games, board = entry.get("games"), entry.get("board")
        ok = isinstance(board, int) and not isinstance(board, bool) and isinstance(entry.get("seed"), int)
        ok = ok and isinstance(games, list) and len(games) > 0
        for g in games if ok else ():
            seats, places = (g.get("seats"), g.get("placements")) if isinstance(g, dict) else (None, None)
            ok = ok and isinstance(seats, list) and isinstance(places, list) and len(seats) == len(places) == P
            ok = (
                ok
                and all(type(a) is int and 0 <= a < P for a in seats)
                and all(type(x) is int and 1 <= x <= P for x in places)
            )
        if not ok:
            sys.exit(f"{path}: line {n}: a board entry must have an integer board and seed and a non-empty list of "
                     f"games, each seating the {P} agents (seats 0..{P - 1}) with placements 1..{P}")  # fmt: skip
    return lines


def board_means(lines: list[dict]) -> tuple[np.ndarray, int, list[tuple]]:
    """(boards, agents) mean placements, the number of games, and each board's deal key (seed, board)."""
    agents = lines[0]["agents"]
    boards = [e for e in lines[1:] if e.get("type") == "board"]
    per_board = np.zeros((len(boards), len(agents)))
    for b, entry in enumerate(boards):
        sums, counts = np.zeros(len(agents)), np.zeros(len(agents))
        for g in entry["games"]:
            for seat, a in enumerate(g["seats"]):
                sums[a] += g["placements"][seat]
                counts[a] += 1
        per_board[b] = sums / np.maximum(counts, 1)
    keys = [(lines[0].get("seed"), e.get("board")) for e in boards]
    return per_board, sum(len(e["games"]) for e in boards), keys


def report(per_board: np.ndarray, games: int, agents: list[str], label: str = "") -> None:
    n = len(per_board)
    if n < 2:
        print(f"{label}{n} boards, {games} games: too few boards for an interval")
        return
    t = stats.t.ppf(0.975, n - 1)
    print(f"{label}{n} boards, {games} games")
    for a, name in enumerate(agents):
        x = per_board[:, a]
        half = t * x.std(ddof=1) / math.sqrt(n)
        print(f"{name:12s} {x.mean():.3f} [{x.mean() - half:.3f}, {x.mean() + half:.3f}]")
    d = per_board[:, 0] - per_board[:, 1]
    half = t * d.std(ddof=1) / math.sqrt(n)
    print(f"{agents[0]} - {agents[1]}: {d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}]")


OUTCOMES = ("wins", "tsumo", "deal_ins", "calls", "win_han")  # per seat in each game entry, and its "hands"


def outcomes(logs: list[list[dict]], paths: list[str], agents: list[str]) -> None:
    """Per agent: wins, deal-ins and calls per hand it played, Tsumo share, han per win and the share of its games
    in each place, over every game."""
    P = len(agents)
    sums, hands, places = np.zeros((P, len(OUTCOMES))), np.zeros(P), np.zeros((P, P))
    for p, lines in zip(paths, logs, strict=True):
        for entry in lines[1:]:
            for g in entry.get("games", []) if entry.get("type") == "board" else []:
                ok = type(g.get("hands")) is int and g["hands"] > 0
                ok = ok and all(
                    isinstance(g.get(k), list) and len(g[k]) == P and all(type(x) is int and x >= 0 for x in g[k])
                    for k in OUTCOMES
                )
                if not ok:
                    sys.exit(f"{p}: board {entry.get('board')}: --outcomes needs each game's hands (> 0) and its "
                             f"per-seat {', '.join(OUTCOMES)} ({P} counts >= 0 each)")  # fmt: skip
                for seat, a in enumerate(g["seats"]):
                    sums[a] += [g[k][seat] for k in OUTCOMES]
                    hands[a] += g["hands"]
                    places[a, g["placements"][seat] - 1] += 1
    print("| agent | wins / hand | deal-ins / hand | calls / hand | Tsumo share | han / win | places 1st ... last |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for a, name in enumerate(agents):
        w, ts, di, c, han = sums[a]
        print(f"| {name} | {w / hands[a]:.4f} | {di / hands[a]:.4f} | {c / hands[a]:.4f} | {ts / max(w, 1):.4f} | "
              f"{han / max(w, 1):.3f} | {' / '.join(f'{x:.3f}' for x in places[a] / places[a].sum())} |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", nargs="+", help="a tournament's games.jsonl (or games.jsonl.gz); several: pooled")
    ap.add_argument("--as", dest="names", help="A,B,C: the lineup's names for every log (their specs may differ)")
    ap.add_argument("--outcomes", action="store_true", help="also what the hands ended in, per agent")
    a = ap.parse_args()
    paths = a.log
    logs = [read_log(p) for p in paths]
    agents = logs[0][0]["agents"]
    if a.names is not None:
        names = a.names.split(",")
        for p, lines in zip(paths, logs, strict=True):
            if len(lines[0]["agents"]) != len(names):
                sys.exit(f"{p}: {len(lines[0]['agents'])} agents, but --as names {len(names)}")
            lines[0]["agents"] = names
        agents = names
    for p, lines in zip(paths[1:], logs[1:], strict=True):
        if lines[0]["agents"] != agents:
            sys.exit(
                f"{p}: agents {lines[0]['agents']} differ from {paths[0]}'s {agents}: pool logs of one lineup "
                "(or name it with --as)"
            )
    parts = [board_means(lines) for lines in logs]
    seen: dict[tuple, str] = {}
    for p, (_, _, keys) in zip(paths, parts, strict=True):
        for k in keys:
            if k in seen:
                sys.exit(f"{p}: board {k[1]} of seed {k[0]} is also in {seen[k]}: each board may count once")
            seen[k] = p
    if len(parts) == 1:
        report(parts[0][0], parts[0][1], agents)
        if a.outcomes:
            outcomes(logs, paths, agents)
        return
    for p, (per_board, games, _) in zip(paths, parts, strict=True):
        report(per_board, games, agents, f"{p}: ")
    report(np.concatenate([x[0] for x in parts]), sum(x[1] for x in parts), agents, f"pooled over {len(parts)} logs: ")
    if a.outcomes:
        outcomes(logs, paths, agents)


if __name__ == "__main__":
    main()
