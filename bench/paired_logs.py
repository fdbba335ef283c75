"""Paired difference of one agent's mean placement between two tournament logs played on the same boards.

    python bench/paired_logs.py runs/distill/eval_distilled_dg/games.jsonl distilled \\
        runs/distill/eval_ppo_dg/games.jsonl ppo

Both logs must come from ``meld8 tournament`` with the same ``--seed`` (so board ``b`` has the same deal
seed in both; checked board by board) and every seating per board. Boards are the unit: for each board
present in both logs (finished or not), the agent's mean placement over the board's games in log A minus
that in log B; the mean of those differences with a 95 % Student-t interval over boards, and each side's
mean placement on the shared boards. Negative = the agent of log A places better. Either log may be
gzip-compressed (``.jsonl.gz``), or be the ``--out`` JSON of ``python -m training.search_eval`` (the harness that
seats the CHEATING diagnostics; its per-board means, boards offset..offset+N-1 of its ``--seed``, offset its
``--board-offset``).

Several pairs pool their boards (each pair played on its own seed, or on its own boards of one seed: no deal seed may
appear in two pairs, so the boards are independent units):

    python bench/paired_logs.py A1 a B1 b A2 a B2 b

prints each pair's line, then the pooled difference over every shared board of every pair.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

import numpy as np
from scipy import stats
from tournament_log_summary import read_log  # bench/ is on the path when a bench script runs

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from training.tournament import board_seed  # noqa: E402


def board_means(path: str, agent: str) -> dict[int, tuple[int, float]]:
    """{board: (deal seed, the agent's mean placement on it)} from a games.jsonl, or from the ``--out`` JSON of
    ``python -m training.search_eval`` (its ``board_means``: boards offset..offset+N-1 of its seed, every seating)."""
    if path.endswith(".json"):
        return eval_board_means(path, agent)
    lines = read_log(path)
    agents = lines[0]["agents"]
    if agent not in agents:
        sys.exit(f"{path}: agent {agent!r} is not seated; the log has {', '.join(agents)}")
    a = agents.index(agent)
    out = {}
    for entry in lines[1:]:
        if entry.get("type") != "board":
            continue
        places = [g["placements"][g["seats"].index(a)] for g in entry["games"]]
        out[int(entry["board"])] = (int(entry["seed"]), float(np.mean(places)))
    return out


def eval_board_means(path: str, agent: str) -> dict[int, tuple[int, float]]:
    from meld8_env.safe_text import one_line

    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        rows = {r["agent"]: r for r in summary.get("rows", [])}
        seed, offset = int(summary["seed"]), int(summary.get("board_offset", 0))
        if agent in rows and "board_means" in rows[agent]:
            means = {b: (board_seed(seed, b), float(m)) for b, m in enumerate(rows[agent]["board_means"], start=offset)}
            if not all(1 <= m <= 3 for _, m in means.values()):
                raise ValueError("a board mean outside 1..3")
    # ValueError: JSON decoding, a number that is not one; OverflowError: int(1e400); RecursionError: too deep
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError) as e:
        sys.exit(one_line(f"{path}: not a readable training.search_eval --out summary ({type(e).__name__}: {e})"))
    if agent not in rows:
        sys.exit(one_line(f"{path}: agent {agent!r} is not seated; the summary has {', '.join(map(str, rows))}"))
    if "board_means" not in rows[agent]:
        sys.exit(f"{path}: no board_means (written by training.search_eval since session 28): rerun it with --out")
    return means


def shared_boards(
    log_a: str, agent_a: str, log_b: str, agent_b: str
) -> tuple[np.ndarray, np.ndarray, int, int, set[int]]:
    """The agents' per-board mean placements on the boards of both logs (same deal seeds, checked), the boards each
    log has, and the shared boards' deal seeds."""
    a, b = board_means(log_a, agent_a), board_means(log_b, agent_b)
    shared = sorted(set(a) & set(b))
    if len(shared) < 2:
        sys.exit(f"only {len(shared)} boards in both {log_a} and {log_b}: need at least 2")
    bad = [k for k in shared if a[k][0] != b[k][0]]
    if bad:
        sys.exit(
            f"board {bad[0]} has deal seed {a[bad[0]][0]} in {log_a} but {b[bad[0]][0]} in {log_b}: not the same boards"
        )
    seeds = {a[k][0] for k in shared}
    return np.array([a[k][1] for k in shared]), np.array([b[k][1] for k in shared]), len(a), len(b), seeds


def report(x: np.ndarray, y: np.ndarray, agent_a: str, agent_b: str) -> None:
    d = x - y
    n = len(d)
    half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)
    print(f"A {agent_a}: {x.mean():.3f}; B {agent_b}: {y.mean():.3f}")
    print(
        f"A - B: {d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}] "
        f"(correlation of board means {np.corrcoef(x, y)[0, 1]:.2f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", metavar="LOG_A AGENT_A LOG_B AGENT_B", help="one or more such quadruples")
    args = ap.parse_args()
    if len(args.logs) % 4:
        sys.exit(f"give LOG_A AGENT_A LOG_B AGENT_B, four arguments per pair: got {len(args.logs)} arguments")
    quads = [args.logs[i : i + 4] for i in range(0, len(args.logs), 4)]
    xs, ys = [], []
    seen: dict[int, str] = {}  # deal seed -> the log of an earlier pair: pooled pairs must be independent boards
    for log_a, agent_a, log_b, agent_b in quads:
        x, y, na, nb, seeds = shared_boards(log_a, agent_a, log_b, agent_b)
        dup = sorted(seeds & seen.keys())
        if dup:
            sys.exit(f"{log_a} and {seen[dup[0]]} share deal seed {dup[0]}: pool pairs of different seeds or boards")
        seen.update(dict.fromkeys(seeds, log_a))
        if len(quads) > 1:
            print(f"{log_a} vs {log_b}:")
        print(f"{len(x)} shared boards (A has {na}, B has {nb})")
        report(x, y, agent_a, agent_b)
        xs.append(x)
        ys.append(y)
    if len(quads) > 1:
        x, y = np.concatenate(xs), np.concatenate(ys)
        print(f"pooled over {len(quads)} pairs: {len(x)} boards")
        report(x, y, "(pooled A)", "(pooled B)")


if __name__ == "__main__":
    main()
