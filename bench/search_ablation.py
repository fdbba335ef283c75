"""Search ablations on paired boards: each variant in the same seat of the same boards, differences with CIs.

Usage: ``python bench/search_ablation.py --boards 20 --seed 7001 --opponents defensive,greedy
SPEC_A SPEC_B ...`` (specs with ``+`` between options, e.g. ``search:belief=uniform``)

Every variant plays ``training.search_eval.play_duplicate`` over the same boards (every seating) against the
same opponents, so game k of every variant has the same deal and seat: the per-game placement differences
to the first variant are paired (common boards cancel most of the deal luck). Prints per variant: mean
placement with a 95 % interval, games, ms per decision (batched), and the paired difference to the first
variant with its 95 % interval and the correlation of the two variants' placements. ``--out`` writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from meld8_env.rules import RuleConfig  # noqa: E402
from training.search_eval import agent_placements, play_duplicate  # noqa: E402


def ci(x: np.ndarray) -> tuple[float, float]:
    m = float(x.mean())
    h = 1.96 * float(x.std(ddof=1)) / np.sqrt(len(x)) if len(x) > 1 else float("inf")
    return m, h


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+")
    ap.add_argument("--boards", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7001)
    ap.add_argument("--opponents", default="defensive,greedy")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rules = RuleConfig()
    opps = args.opponents.split(",")
    rows, base = [], None
    print(f"boards {args.boards} (every seating), seed {args.seed}, opponents {'+'.join(opps)}")
    print("| variant | mean placement | 95% CI | games | ms/decision | diff to first | 95% CI | corr |")
    print("|---|---|---|---|---|---|---|---|")
    for spec in args.specs:
        t0 = time.time()
        res = play_duplicate([spec, *opps], args.boards, args.seed, rules)
        pl = agent_placements(res, 0).astype(float)
        m, h = ci(pl)
        ms = 1000 * res["seconds"][0] / max(1, res["decisions"][0])
        row = {"spec": spec, "mean": m, "ci95": [m - h, m + h], "games": len(pl), "ms_per_decision": ms,
               "wall_s": time.time() - t0, "placements": pl.astype(int).tolist()}  # fmt: skip
        diff = ""
        if base is None:
            base = pl
        elif len(pl) == len(base):  # a spec equal to an opponent has fewer distinct seatings: not paired
            d, dh = ci(pl - base)
            r = float(np.corrcoef(pl, base)[0, 1]) if pl.std() > 0 and base.std() > 0 else float("nan")
            row.update(diff=d, diff_ci95=[d - dh, d + dh], corr=r)
            diff = f"{d:+.3f} | [{d - dh:+.3f}, {d + dh:+.3f}] | {r:.2f}"
        print(f"| {spec} | {m:.3f} | [{m - h:.3f}, {m + h:.3f}] | {len(pl)} | {ms:.1f} | {diff or '- | - | -'} |")
        sys.stdout.flush()
        rows.append(row)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"boards": args.boards, "seed": args.seed, "opponents": opps, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
