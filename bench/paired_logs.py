"""Paired difference of one agent's mean placement between two tournament logs played on the same boards.

    python bench/paired_logs.py runs/distill/eval_distilled_dg/games.jsonl distilled \\
        runs/distill/eval_ppo_dg/games.jsonl ppo

Both logs must come from ``meld8 tournament`` with the same ``--seed`` (so board ``b`` has the same deal
seed in both; checked board by board) and every seating per board. Boards are the unit: for each board
present in both logs (finished or not), the agent's mean placement over the board's games in log A minus
that in log B; the mean of those differences with a 95 % Student-t interval over boards, and each side's
mean placement on the shared boards. Negative = the agent of log A places better. Either log may be
gzip-compressed (``.jsonl.gz``).
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from scipy import stats
from tournament_log_summary import read_log  # bench/ is on the path when a bench script runs


def board_means(path: str, agent: str) -> dict[int, tuple[int, float]]:
    """{board: (deal seed, the agent's mean placement on it)} from a games.jsonl."""
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log_a")
    ap.add_argument("agent_a")
    ap.add_argument("log_b")
    ap.add_argument("agent_b")
    args = ap.parse_args()
    a, b = board_means(args.log_a, args.agent_a), board_means(args.log_b, args.agent_b)
    shared = sorted(set(a) & set(b))
    if len(shared) < 2:
        sys.exit(f"only {len(shared)} boards in both logs: need at least 2")
    bad = [k for k in shared if a[k][0] != b[k][0]]
    if bad:
        sys.exit(f"board {bad[0]} has deal seed {a[bad[0]][0]} in A but {b[bad[0]][0]} in B: not the same boards")
    x = np.array([a[k][1] for k in shared])
    y = np.array([b[k][1] for k in shared])
    d = x - y
    n = len(shared)
    t = stats.t.ppf(0.975, n - 1)

    def ci(v: np.ndarray) -> str:
        half = t * v.std(ddof=1) / math.sqrt(n)
        return f"{v.mean():+.3f} [{v.mean() - half:+.3f}, {v.mean() + half:+.3f}]"

    print(f"{n} shared boards (A has {len(a)}, B has {len(b)})")
    print(f"A {args.agent_a}: {x.mean():.3f}; B {args.agent_b}: {y.mean():.3f}")
    print(f"A - B: {ci(d)} (correlation of board means {np.corrcoef(x, y)[0, 1]:.2f})")


if __name__ == "__main__":
    main()
