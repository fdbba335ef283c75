"""Built-in bots in C vs their Python twins, rollouts and the evaluator calls behind them, one run.

Usage: python bench/bots_throughput.py [--states 2000] [--records 2000] [--repeats 3] [--boards 4]

Rows (medians of ``--repeats``; the machine is shared, so compare rows of one run, not across runs):
- bot decisions/s: the Python twin (``act_batch_python``, batched) vs the C twin (``act_obs``, one thread)
  on the same decision states from real games (3 players, default rules), greedy and defensive;
- rollout to the end of the hand / game from those states (greedy, defensive, greedy seats), 1 and 2
  threads: hands/s and bot decisions/s (every step is one bot decision);
- bots-only tournament (greedy, defensive, random; ``training.arena.play``, all games batched): games/s
  with the Python twins vs the C bots;
- evaluator: distance on random 7-card hands (all cards unseen), waits on them, the acceptance count
  of discard candidates from the game states (per-card search vs one search vs the bots' tie-break
  search, ``acceptance_tiebreak_batch`` with no early stop), and the distance after
  every allowed discard of those hands: one distance call per discard vs one pass per hand
  (``discard_table_batch``, distances only and with the bots' tie-break acceptance).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import numpy as np
from hand_eval import median_time  # bench/ is on the path when a bench script runs

import agents.greedy
import agents.random_agent
from agents.defensive import DefensiveAgent
from agents.greedy import GreedyAgent
from agents.registry import load_agent
from meld8_env.cardmask import BITS, JK, bits_of, discard_masks
from meld8_env.codes import Phase
from meld8_env.engine.fast import FastBatch
from meld8_env.features import neighbours
from meld8_env.hands import _native, distance_batch
from meld8_env.hands.sampling import random_masks
from meld8_env.observation import decode
from meld8_env.policies import act_obs, policy_act
from meld8_env.rollout import rollout
from meld8_env.rules import RuleConfig
from training.arena import play


def states(rules: RuleConfig, n: int, seed: int = 0):
    """Decision states (records, obs, masks) from games the C bots play (greedy, defensive, greedy)."""
    rng = np.random.default_rng(seed)
    B = 64
    fb = FastBatch(B, rules)
    fb.reset(rng.integers(0, 2**62, B, dtype=np.uint64))
    pol = np.array([1, 2, 1], np.int8)
    recs, obs_l, masks_l = [], [], []
    while sum(len(r) for r in recs) < n:
        obs, masks = fb.observe()
        live = np.flatnonzero(~fb.over)
        recs.append(fb.snapshot(live))
        obs_l.append(obs[live].copy())
        masks_l.append(masks[live].copy())
        acts = policy_act(
            rules, fb.snapshot(slice(None)), pol[np.maximum(fb.state["acting"], 0)], np.zeros(B, np.uint64)
        )
        fb.step(np.where(fb.over, -1, acts))
        done = np.flatnonzero(fb.over)
        if done.size:
            fb.start(done, rng.integers(0, 2**62, done.size, dtype=np.uint64))
    raw = np.dtype((np.void, recs[0].dtype.itemsize))
    rec = np.concatenate([r.view(raw) for r in recs]).view(recs[0].dtype)
    return rec[:n].copy(), np.concatenate(obs_l)[:n], np.concatenate(masks_l)[:n]


def row(name: str, value: float) -> None:
    print(f"| {name} | {value:,.0f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=2000)
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--boards", type=int, default=4)
    a = ap.parse_args()
    rules = RuleConfig()
    rec, obs, masks = states(rules, max(a.states, a.records))
    o, m = obs[: a.states], masks[: a.states]
    print(f"{a.states} decision states, {a.records} rollout records, median of {a.repeats}")
    print()
    print("| row | per second |")
    print("|---|---:|")
    for name, cls in (("greedy", GreedyAgent), ("defensive", DefensiveAgent)):
        agent = cls(rules)
        n_py = min(len(o), 500)
        row(
            f"{name} decisions, Python twin",
            n_py / median_time(lambda agent=agent, n=n_py: agent.act_batch_python(o[:n], m[:n]), a.repeats),
        )
        row(
            f"{name} decisions, C (1 thread)",
            len(o) / median_time(lambda name=name: act_obs(rules, name, o, m), a.repeats),
        )
    pol = np.array([1, 2, 1], np.int8)
    start = rec[: a.records]
    for until in ("hand", "game"):
        for threads in (1, 2):
            runs, steps = [], []
            for r in range(a.repeats):
                work = start.copy()
                t0 = time.perf_counter()
                res = rollout(rules, work, pol, np.arange(len(work), dtype=np.uint64) + r, until=until, threads=threads)
                runs.append(time.perf_counter() - t0)
                steps.append(int(res.steps.sum()) / runs[-1])
            row(f"rollout to end of {until}, {threads} thread(s): {until}s", len(start) / statistics.median(runs))
            row(f"rollout to end of {until}, {threads} thread(s): bot decisions", statistics.median(steps))
    perms = np.array(list(itertools.permutations(range(3))))
    seats, seeds = np.tile(perms, (a.boards, 1)), np.repeat(np.arange(a.boards), 6)
    for label, c in (("Python twins", False), ("C bots", True)):
        saved = agents.greedy.c_bots_enabled, agents.random_agent.c_bots_enabled
        if not c:
            agents.greedy.c_bots_enabled = agents.random_agent.c_bots_enabled = lambda: False
        try:
            lineup = [load_agent(n, rules, i) for i, n in enumerate(["greedy", "defensive", "random"])]
            t = median_time(
                lambda lineup=lineup: play(lineup, seats, seeds, rules, batch=512), 1 if not c else a.repeats
            )
        finally:
            agents.greedy.c_bots_enabled, agents.random_agent.c_bots_enabled = saved
        row(f"bots-only tournament games, {label}", len(seeds) / t)
    rng = np.random.default_rng(1)
    h7 = random_masks(rng, 20_000, 7)
    row(
        "distance, random 7-card hands (1 thread)",
        len(h7) / median_time(lambda: distance_batch(h7, threads=1), a.repeats),
    )
    w = np.zeros(len(h7), np.uint64)
    row("waits, random 7-card hands", len(h7) / median_time(lambda: _native.waits_batch(h7, None, w), a.repeats))
    disc = (~m[:, 63]) & (rec["phase"][: a.states] != int(Phase.CLAIM))
    d = decode(o[disc], rules)
    rows, cards = bits_of(discard_masks(m[disc]))
    after = d["hand"][rows] & ~BITS[cards]
    meld, un = d["melds"][rows, 0], d["unseen"][rows]
    dist = distance_batch(after, meld, un)
    pool = (neighbours(after) | JK) & un
    out = np.zeros(len(after), np.int8)
    for label, fn in (("per-card search", _native.acceptance_batch), ("one search", _native.acceptance_onepass_batch)):
        row(
            f"acceptance of game discards, {label}",
            len(after) / median_time(lambda fn=fn: fn(after, meld, un, pool, dist, out), a.repeats),
        )
    exact = np.full(len(after), -1, np.int8)  # the bots' pick of the faster search per distance, always exact
    row(
        "acceptance of game discards, bots' tie-break search (exact)",
        len(after)
        / median_time(lambda: _native.acceptance_tiebreak_batch(after, meld, un, pool, dist, exact, out), a.repeats),
    )
    # distance after every discard: one call per discard (the bots' path) vs one pass per hand
    h8, m8, u8 = (np.ascontiguousarray(x) for x in (d["hand"], d["melds"][:, 0], d["unseen"]))
    al8 = discard_masks(m[disc])
    dt, at = np.zeros((len(h8), 53), np.int8), np.zeros((len(h8), 53), np.int8)
    row(
        "distance after every discard, per discard: hands",
        len(h8) / median_time(lambda: distance_batch(after, meld, un, threads=1), a.repeats),
    )
    for mode, label in ((0, "distances"), (1, "distances + tie acceptance")):
        row(
            f"distance after every discard, one pass ({label}): hands",
            len(h8)
            / median_time(lambda mode=mode: _native.discard_table_batch(h8, m8, u8, al8, mode, dt, at), a.repeats),
        )


if __name__ == "__main__":
    main()
