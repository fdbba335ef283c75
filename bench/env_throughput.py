"""Environment throughput under uniformly random legal play, side by side with PettingZoo's own
card-game AECs (leduc_holdem_v4, texas_holdem_v4) when ``pettingzoo[classic]`` is installed.

Usage: python bench/env_throughput.py [--seconds 3] [--repeats 5] [--batch 4096]

Every number is agent steps per second (one action by one seat), observation and action mask
included, median of ``--repeats`` timed runs. AEC rows: the observe -> pick a masked random action
-> step loop a PettingZoo user writes. Batched rows: ``Meld8Vector.step`` with a C-sampled random
legal action per game; observations and masks of every game are produced on every step.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from bench_args import at_least, positive_seconds

import meld8_env
from meld8_env.vector import Meld8Vector


def aec_rate(make_env, seconds: float, seed: int) -> float:
    env = make_env()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            if not env.agents:
                env.reset()
            continue
        mask = env.observe(agent)["action_mask"]
        legal = np.flatnonzero(mask)
        env.step(int(legal[rng.integers(len(legal))]))
        steps += 1
    return steps / (time.perf_counter() - t0)


def vector_rate(batch: int, seconds: float, seed: int, threads: int) -> float:
    v = Meld8Vector(batch, seed=seed, threads=threads)
    v.reset()
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        v.step(v.sample_actions())
        steps += batch
    v.close()
    return steps / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=positive_seconds, default=3.0, help="length of one timed run (default 3)")
    ap.add_argument("--repeats", type=at_least(1), default=5, help="timed runs, median quoted (default 5)")
    ap.add_argument("--batch", type=at_least(1), default=4096, help="games of the batched rows (default 4096)")
    args = ap.parse_args()
    rows: list[tuple[str, object]] = [("meld8_v0 AEC (PettingZoo)", lambda s: aec_rate(meld8_env.env, args.seconds, s))]
    try:
        from pettingzoo.classic import leduc_holdem_v4, texas_holdem_v4

        rows.append(("leduc_holdem_v4 AEC (baseline)", lambda s: aec_rate(leduc_holdem_v4.env, args.seconds, s)))
        rows.append(("texas_holdem_v4 AEC (baseline)", lambda s: aec_rate(texas_holdem_v4.env, args.seconds, s)))
    except ImportError:
        print("(pettingzoo[classic] not installed: no baseline rows)")
    for b in (1, 64, args.batch):
        rows.append((f"Meld8Vector B={b}, 1 thread", lambda s, b=b: vector_rate(b, args.seconds, s, 1)))
    rows.append((f"Meld8Vector B={args.batch}, 2 threads", lambda s: vector_rate(args.batch, args.seconds, s, 2)))
    print(f"uniformly random legal play, median of {args.repeats} runs of {args.seconds:g} s")
    print()
    print("| environment | agent steps/s |")
    print("|---|---:|")
    for name, fn in rows:
        rates = [fn(seed) for seed in range(args.repeats)]
        print(f"| {name} | {statistics.median(rates):,.0f} |", flush=True)


if __name__ == "__main__":
    main()
