"""Mean placement of each agent from a tournament log (``games.jsonl``), finished or not: boards are
the unit (each holds every seating), 95 % intervals from Student's t over board means, and the paired
difference of the first two agents. Used for a tournament stopped part-way (README, the search headline).
A log may be gzip-compressed (``games.jsonl.gz``: how docs/search_runs keeps the newer ones).

    python bench/tournament_log_summary.py results/search_headline/games.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys

import numpy as np
from scipy import stats


def read_log(path: str) -> list[dict]:
    """The entries of a tournament log, plain or gzip-compressed (told by its first bytes, whatever its name);
    exits in one line when the file is not a ``meld8 tournament`` log (no header first, or not JSON lines)."""
    try:
        with open(path, "rb") as f:
            packed = f.read(2) == b"\x1f\x8b"  # gzip's magic number
        with (gzip.open if packed else open)(path, "rt", encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except (OSError, EOFError, ValueError) as e:  # ValueError: JSON and UTF-8 decoding errors
        sys.exit(f"{path}: not a readable tournament log ({e})")
    if not lines or lines[0].get("type") != "header":
        sys.exit(f"{path}: not a tournament games.jsonl (no header line)")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="a tournament's games.jsonl (or games.jsonl.gz)")
    lines = read_log(ap.parse_args().log)
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
