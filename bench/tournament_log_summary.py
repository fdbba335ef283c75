"""Mean placement of each agent from a tournament log (``games.jsonl``), finished or not: boards are
the unit (each holds every seating), 95 % intervals from Student's t over board means, and the paired
difference of the first two agents. Used for a tournament stopped part-way (README, the search headline).

    python bench/tournament_log_summary.py results/search_headline/games.jsonl
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
from scipy import stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="a tournament's games.jsonl")
    path = ap.parse_args().log
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
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
    n = len(boards)
    t = stats.t.ppf(0.975, n - 1)
    print(f"{n} boards, {sum(len(e['games']) for e in boards)} games")
    for a, name in enumerate(agents):
        x = per_board[:, a]
        half = t * x.std(ddof=1) / math.sqrt(n)
        print(f"{name:12s} {x.mean():.3f} [{x.mean() - half:.3f}, {x.mean() + half:.3f}]")
    d = per_board[:, 0] - per_board[:, 1]
    half = t * d.std(ddof=1) / math.sqrt(n)
    print(f"{agents[0]} - {agents[1]}: {d.mean():+.3f} [{d.mean() - half:+.3f}, {d.mean() + half:+.3f}]")


if __name__ == "__main__":
    main()
