"""RLlib sampling throughput vs the SB3 path, side by side in one run (issue 13).

Usage: python bench/rllib_throughput.py [--iterations 3] [--batch 4000]

Rows (all on a local Ray instance on this machine, the defaults of ``training.rllib_train.RllibConfig``
- the league, card heads, look-ahead features - with a small trunk):
- RLlib, N env runners x M games per runner: env steps per second of sampling (all seats' steps,
  from RLlib's own sampling timer) and of whole iterations (sampling + learning), median over
  ``--iterations`` after one warm-up iteration;
- SB3 MaskablePPO (``meld8 train`` default backend) on ``SingleSeatVecEnv``: learner steps per second
  of ``learn`` (sampling + learning; a learner step is one seat's action, the opponents' actions in
  between are included - about a third of the env steps).
"""

from __future__ import annotations

import argparse
import statistics
import time


def rllib_rates(runners: int, envs: int, iterations: int, batch: int) -> tuple[float, float]:
    import ray

    from meld8_env.rules import RuleConfig
    from training.rllib_train import RllibConfig, build_config

    cfg = RllibConfig(num_env_runners=runners, num_envs_per_env_runner=envs, train_batch_size=batch,
                      batch_size=512, n_epochs=1, net_arch=[64, 64], progress=False)  # fmt: skip
    ray.init(num_cpus=max(2, runners + 1), include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        algo = build_config(cfg, RuleConfig()).build_algo()
        algo.train()  # warm-up
        sampling, total = [], []
        for _ in range(iterations):
            t0 = time.perf_counter()
            res = algo.train()
            dt = time.perf_counter() - t0
            steps = res["env_runners"]["num_env_steps_sampled"]
            sample_t = res["timers"]["env_runner_sampling_timer"]
            sampling.append(steps / sample_t)
            total.append(steps / dt)
        algo.stop()
        return statistics.median(sampling), statistics.median(total)
    finally:
        ray.shutdown()


def sb3_rate(iterations: int, batch: int) -> float:
    from sb3_contrib import MaskablePPO

    from agents.registry import load_agent
    from meld8_env.rules import RuleConfig
    from training.single_seat import SingleSeatVecEnv

    rules = RuleConfig()
    env = SingleSeatVecEnv(64, [load_agent("greedy", rules), load_agent("defensive", rules)], rules, seed=0)
    n_steps = max(1, batch // 64)
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=512, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [64, 64]}, verbose=0)  # fmt: skip
    model.learn(n_steps * 64)  # warm-up
    rates = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        model.learn(n_steps * 64, reset_num_timesteps=False)
        rates.append(n_steps * 64 / (time.perf_counter() - t0))
    return statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--batch", type=int, default=4000)
    args = ap.parse_args()
    print(f"train batch {args.batch} steps, median of {args.iterations} iterations after a warm-up")
    print()
    print("| path | sampling steps/s | whole iteration steps/s |")
    print("|---|---:|---:|")
    for runners, envs in ((1, 1), (1, 8), (2, 1), (2, 8)):
        s, t = rllib_rates(runners, envs, args.iterations, args.batch)
        print(f"| RLlib, {runners} env runner(s) x {envs} game(s) (env steps) | {s:,.0f} | {t:,.0f} |", flush=True)
    sb3 = sb3_rate(args.iterations, args.batch)
    print(f"| SB3 MaskablePPO, 64 games in one process (learner steps) | - | {sb3:,.0f} |")


if __name__ == "__main__":
    main()
