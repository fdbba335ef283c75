"""Search agent speed: median time of one decision (a batch of one) and decisions/s when batched.

Usage: ``python bench/search_speed.py [--spec search] [--states 200] [--batch 64] [--seed 3]``

Decision states come from games of ``greedy`` vs ``defensive`` (only states with a choice: more than one
legal action). Rows (markdown, ``bench/ab.py`` reads them): median and p90 ms per decision one at a time,
the median CPU time of one decision summed over its threads (on a shared machine the wall time
depends on the load; the CPU time does not), the (candidate, world) pairs a decision steps and rolls out
(median and mean: the budget itself, which no load moves; a search agent's ``rollouts`` counter),
decisions/s in batches of ``--batch``, the share of decisions that were searched (the rest are forced or
immediate wins).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench_args import at_least, load_or_exit  # noqa: E402

from agents import search_backend as sb  # noqa: E402
from agents.registry import load_agent  # noqa: E402
from meld8_env.codes import Phase  # noqa: E402
from meld8_env.engine.records import observe_records, start_records, step_records  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402


def states(rules: RuleConfig, n: int, seed: int) -> np.ndarray:
    bots = [load_agent("greedy", rules), load_agent("defensive", rules)]
    recs = start_records(rules, np.arange(seed, seed + 64, dtype=np.uint64))
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    got = 0
    while got < n and (recs["phase"] != Phase.OVER).any():
        live = recs["phase"] != Phase.OVER
        obs, masks = observe_records(rules, recs)
        acts = np.full(len(recs), -1, np.int64)
        for k, bot in enumerate(bots):
            rows = np.flatnonzero(live & (recs["acting"] % 2 == k))
            if rows.size:
                acts[rows] = bot.act_batch(obs[rows], masks[rows])
        pick = np.flatnonzero(live & (masks.sum(axis=1) > 1) & (rng.random(len(recs)) < 0.2))
        out.append(recs[pick].copy())
        got += pick.size
        step_records(rules, recs, acts)
    return sb.cat_records(out)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="search", help="the agent spec timed (default search)")
    ap.add_argument("--states", type=at_least(1), default=200, help="decision states (default 200)")
    ap.add_argument("--batch", type=at_least(1), default=64, help="decisions per batched call (default 64)")
    ap.add_argument("--seed", type=at_least(0), default=3, help="seed of the games the states come from (default 3)")
    args = ap.parse_args()
    rules = RuleConfig()
    agent = load_or_exit(ap, args.spec, rules, seed=1)
    recs = states(rules, args.states, args.seed)
    obs, masks = observe_records(rules, recs)
    infos = [sb.infoset_of(r, int(r["acting"]), rules) for r in recs]
    times, cpu, flags, rollouts = [], [], [], []
    for i in range(len(recs)):
        t0, c0, r0 = time.perf_counter(), time.process_time(), getattr(agent, "rollouts", 0)
        agent.act_batch(obs[i : i + 1], masks[i : i + 1], infosets=infos[i : i + 1])
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        rollouts.append(getattr(agent, "rollouts", 0) - r0)
        flags.append(bool(agent.last_values[0]))
    t0 = time.perf_counter()
    for a in range(0, len(recs), args.batch):
        agent.act_batch(obs[a : a + args.batch], masks[a : a + args.batch], infosets=infos[a : a + args.batch])
    batched = len(recs) / (time.perf_counter() - t0)
    ms = 1000 * np.array(times)
    flags = np.array(flags)
    print(f"spec {args.spec}, {len(recs)} decision states")
    print("| measure | value |")
    print("|---|---|")
    print(f"| median ms per decision (one at a time) | {np.median(ms):.2f} |")
    print(f"| p90 ms per decision (one at a time) | {np.percentile(ms, 90):.2f} |")
    # CPU time of all threads: what a decision costs whatever else the machine runs (wall = cpu / cores used)
    print(f"| median CPU ms per decision, all threads (one at a time) | {1000 * np.median(cpu):.2f} |")
    if flags.any():
        print(f"| median ms per searched decision | {np.median(ms[flags]):.2f} |")
    # the search's budget in (candidate, world) pairs stepped: the same on any machine, so a ratio of two specs' costs
    print(f"| rollouts per decision, median (one at a time) | {np.median(rollouts):.0f} |")
    print(f"| rollouts per decision, mean (one at a time) | {np.mean(rollouts):.1f} |")
    print(f"| decisions/s in batches of {args.batch} | {batched:.1f} |")
    print(f"| searched share | {flags.mean():.2f} |")


if __name__ == "__main__":
    main()
