"""Training throughput: learner steps per second of MaskablePPO on the single-seat VecEnv
(environment, opponents and policy together), and of the environment alone, side by side.

Usage: python bench/train_throughput.py [--n-envs 256] [--steps 65536] [--repeats 3]

"env steps" count every agent step the engine takes (learner and opponents); "learner steps" are the
PPO timesteps. Rows: the network (``agents.networks``: separate policy/value MLPs [256, 256], SB3's
default and the first baseline; one shared trunk; the shared trunk with per-card heads) and the
observation (plain, or with the look-ahead features of ``meld8_env.features``). Medians of repeats;
one process, CPU torch.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from agents.registry import load_agent
from meld8_env.rules import RuleConfig
from training.single_seat import SingleSeatVecEnv


class _Counting:
    """Counts the engine's agent steps (every Meld8Vector.step of every game that moved)."""

    def __init__(self, env: SingleSeatVecEnv) -> None:
        self.n = 0
        vec = env.vec
        original = vec.step

        def step(actions):
            self.n += int((np.asarray(actions) >= 0).sum())
            return original(actions)

        vec.step = step


def run(n_envs: int, steps: int, seed: int, train: bool, network: str = "separate", features: bool = False):
    from sb3_contrib import MaskablePPO

    from agents.networks import policy_for
    from meld8_env.observation import obs_size

    rules = RuleConfig()
    opponents = [load_agent("greedy", rules), load_agent("random", rules, 2)]
    env = SingleSeatVecEnv(n_envs, opponents, rules, seed=seed, features=features)
    counter = _Counting(env)
    t0 = time.perf_counter()
    if train:
        policy, kwargs = policy_for(network, [256, 256], obs_size(rules), rules.num_players)
        model = MaskablePPO(
            policy, env, n_steps=64, batch_size=4096, n_epochs=4, seed=seed, device="cpu", policy_kwargs=kwargs
        )
        model.learn(total_timesteps=steps)
        learner = model.num_timesteps
    else:
        env.reset()
        rng = np.random.default_rng(seed)
        learner = 0
        while learner < steps:
            masks = env.action_masks()
            noise = rng.random(masks.shape)
            noise[~masks] = -1
            env.step_async(noise.argmax(axis=1))
            env.step_wait()
            learner += n_envs
    dt = time.perf_counter() - t0
    return learner / dt, counter.n / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-envs", type=int, default=256)
    ap.add_argument("--steps", type=int, default=65_536)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"learner vs greedy + random, n_envs={args.n_envs}, {args.steps} learner steps, median of {args.repeats}")
    print()
    print("| mode | learner steps/s | env (agent) steps/s |")
    print("|---|---:|---:|")
    modes = (
        ("MaskablePPO, separate MLPs, plain obs (first baseline)", dict(train=True)),
        ("MaskablePPO, shared trunk, plain obs", dict(train=True, network="shared")),
        ("MaskablePPO, separate MLPs, look-ahead features", dict(train=True, features=True)),
        ("MaskablePPO, card heads + features (default config)", dict(train=True, network="card_heads", features=True)),
        ("environment + opponents only (random learner)", dict(train=False)),
        ("environment + opponents + features (random learner)", dict(train=False, features=True)),
    )
    for name, kw in modes:
        runs = [run(args.n_envs, args.steps, s, **kw) for s in range(args.repeats)]
        learner, engine = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"| {name} | {learner:,.0f} | {engine:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
