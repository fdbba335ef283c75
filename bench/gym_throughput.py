"""Learner steps/s of the single-seat faces, side by side in one run: the Gymnasium VectorEnv
(``gymnasium.make_vec("meld8_env:Meld8-v0")``), the SB3 adapter over it (``SingleSeatVecEnv``) and, as the
baseline, raw ``Meld8Vector`` driven the same way by hand (opponents batched, learner random-legal).

Usage: python bench/gym_throughput.py [--envs 256] [--seconds 3] [--repeats 3]

A learner step is one action of the learning seat (opponents' actions in between are included in its
cost). Medians of ``--repeats`` timed runs per row; opponents ``random`` and ``greedy``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import numpy as np

import meld8_env  # noqa: F401 - registers Meld8-v0
from agents.registry import load_agent
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector


def _legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per row (vectorised: random keys, masked argmax)."""
    keys = rng.random(masks.shape)
    return np.where(masks, keys, -1.0).argmax(axis=1)


def raw_rate(n: int, opponent: str, seconds: float, seed: int) -> float:
    rules = RuleConfig()
    opp = [load_agent(opponent, rules, 1), load_agent(opponent, rules, 2)]
    v = Meld8Vector(n, seed=seed)
    v.reset()
    learner = np.arange(n) % 3
    rng = np.random.default_rng(seed)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        rel = (v.current_seat.astype(np.int64) - learner) % 3
        acts = np.full(n, -1, np.int64)
        me = rel == 0
        acts[me] = _legal(v.action_mask[me], rng)
        steps += int(me.sum())
        for k, agent in enumerate(opp):
            rows = np.flatnonzero(rel == k + 1)
            if rows.size:
                acts[rows] = agent.act_batch(v.observation[rows], v.action_mask[rows])
        v.step(acts)
    return steps / (time.perf_counter() - t0)


def gym_rate(n: int, opponent: str, seconds: float, seed: int) -> float:
    env = gymnasium.make_vec("meld8_env:Meld8-v0", num_envs=n, vectorization_mode="vector_entry_point",
                             opponents=opponent, seed=seed)  # fmt: skip
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        _, _, _, _, info = env.step(_legal(info["action_mask"], rng))
        steps += n
    return steps / (time.perf_counter() - t0)


def sb3_rate(n: int, opponent: str, seconds: float, seed: int) -> float:
    from training.single_seat import SingleSeatVecEnv

    rules = RuleConfig()
    env = SingleSeatVecEnv(n, [load_agent(opponent, rules, 1), load_agent(opponent, rules, 2)], rules, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step_async(_legal(env.action_masks(), rng))
        env.step_wait()
        steps += n
    return steps / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--envs", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"learner steps/s, {a.envs} games, median of {a.repeats} runs of {a.seconds:g} s")
    print()
    print("| face | opponents | learner steps/s |")
    print("|---|---|---:|")
    for opponent in ("random", "greedy"):
        for name, fn in (("raw Meld8Vector (baseline)", raw_rate), ("Gymnasium Meld8VectorEnv", gym_rate),
                         ("SB3 SingleSeatVecEnv", sb3_rate)):  # fmt: skip
            rates = [fn(a.envs, opponent, a.seconds, s) for s in range(a.repeats)]
            print(f"| {name} | {opponent} | {statistics.median(rates):,.0f} |", flush=True)


if __name__ == "__main__":
    main()
