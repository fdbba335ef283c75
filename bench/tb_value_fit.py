"""How well a PPO run's critic fits its returns: SB3's ``train/explained_variance`` and ``train/value_loss``
(and ``approx_kl``, ``fps``) from the run's TensorBoard logs, averaged over windows of learner steps.

    python bench/tb_value_fit.py runs/ppo_oracle_critic runs/ppo_plain_critic [--window 250000]

Each value is the mean over the PPO updates whose step falls in ``(lo, lo + window]``; ``n`` counts them.
A resumed run's later sessions (``tb/ppo_1``, ...) are merged by step.
"""

from __future__ import annotations

import argparse
import glob

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

TAGS = ("train/explained_variance", "train/value_loss", "train/approx_kl", "time/fps")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="run folders of meld8 train (sb3)")
    ap.add_argument("--window", type=int, default=250_000, help="learner steps per window")
    args = ap.parse_args()
    for run in args.runs:
        rows: dict[str, dict[int, float]] = {}
        for d in sorted(glob.glob(f"{run}/tb/*")):
            ea = EventAccumulator(d)
            ea.Reload()
            for tag in TAGS:
                if tag in ea.Tags()["scalars"]:
                    rows.setdefault(tag, {}).update({x.step: x.value for x in ea.Scalars(tag)})
        print(run)
        for tag, by_step in rows.items():
            steps = np.array(sorted(by_step))
            vals = np.array([by_step[s] for s in steps])
            cells = []
            for lo in range(0, int(steps.max()) + 1, args.window):
                m = (steps > lo) & (steps <= lo + args.window)
                if m.any():
                    cells.append(f"({lo // 1000}k, {(lo + args.window) // 1000}k] {vals[m].mean():.3f} (n={m.sum()})")
            print(f"  {tag}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
