"""What distillation data says about its teacher: how often other agents pick the teacher's action, how
often the teacher's action is the best of its own candidate values, and the gap between its two best.

    python bench/distill_data_stats.py runs/distill/seed72/part_72_00000768.npz runs/distill/seed72/part_72_00000832.npz

Inputs are part files or folders (training.distill_data); the raw observation is the first
``obs_size`` bytes of the stored augmented one (checked on the first rows).
"""

from __future__ import annotations

import argparse

import numpy as np

from agents.registry import load_agent
from meld8_env.features import augment
from meld8_env.observation import obs_size
from meld8_env.rules import RuleConfig
from training.distill_data import load_data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="+")
    ap.add_argument("--agents", default="defensive,greedy,ppo")
    args = ap.parse_args()
    rules = RuleConfig()
    data, info = load_data(args.data)
    raw = data["obs"][:, : obs_size(rules)]
    if not (augment(raw[:64], data["masks"][:64], rules) == data["obs"][:64]).all():
        raise SystemExit("stored observations are not augment(raw): cannot recover the raw observation")
    acts, vals = data["actions"], data["values"]
    print(f"{info['decisions']} decisions of {info['spec']} ({info['seeds']})")
    for name in args.agents.split(","):
        picks = load_agent(name, rules).act_batch(raw, data["masks"])
        print(f"{name}: picks the teacher's action in {(picks == acts).mean():.1%}")
    has = ~np.isnan(vals)
    rows = has.sum(axis=1) > 1
    v = np.where(has, vals, -np.inf)[rows]
    best = v.argmax(axis=1)
    print(f"teacher's action = best of its values in {(best == acts[rows]).mean():.1%} of {rows.sum()} searched")
    top = -np.sort(-v, axis=1)
    q = np.quantile(top[:, 0] - top[:, 1], [0.25, 0.5, 0.75])
    print(f"gap between the two best candidate values (placement): quartiles {q.round(3).tolist()}")


if __name__ == "__main__":
    main()
