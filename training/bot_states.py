"""Decision states from real games between the bots: the engine records before every decision.

``play_bot_states(rules, games, seed, lineup=("greedy", "defensive", "greedy"))`` plays ``games`` games
in one ``FastBatch`` (seat s of every game played by ``lineup[s % len(lineup)]``, rotated by game so every
bot sits everywhere) and returns the record before each decision as ``(N,)`` ``STATE_DTYPE`` (game over
states excluded). The leak tests, the belief table fit (``training/fit_belief.py``) and the belief quality
bench (``bench/belief_quality.py``) sample their states here. Deterministic under ``seed``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.registry import load_agent
from meld8_env.codes import Phase
from meld8_env.engine.fast import FastBatch
from meld8_env.engine.records import concat_records
from meld8_env.rules import RuleConfig


def play_bot_states(
    rules: RuleConfig,
    games: int,
    seed: int,
    lineup: Sequence[str] = ("greedy", "defensive", "greedy"),
    every: int = 1,
    max_states: int | None = None,
) -> np.ndarray:
    """Records before every ``every``-th decision of ``games`` bot games (at most ``max_states``)."""
    P = rules.num_players
    bots = {name: load_agent(name, rules, seed) for name in dict.fromkeys(lineup)}
    for b in bots.values():
        if hasattr(b, "setup"):
            b.setup(rules)
    eng = FastBatch(games, rules)
    eng.reset(np.random.default_rng(seed).integers(0, 2**63, games, dtype=np.uint64))
    # seat_bot[g, s]: the bot of seat s in game g (rotated so each bot plays every seat)
    seat_bot = np.array([[lineup[(s + g) % len(lineup)] for s in range(P)] for g in range(games)])
    out: list[np.ndarray] = []
    kept, step = 0, 0
    while not eng.over.all():
        live = np.flatnonzero(~eng.over)
        if step % every == 0:
            snap = eng.snapshot(live)
            out.append(snap)
            kept += len(snap)
            if max_states is not None and kept >= max_states:
                break
        obs, masks = eng.observe()
        acts = np.full(games, -1, np.int64)
        acting = eng.acting.astype(np.int64)
        who = seat_bot[live, acting[live]]
        for name in np.unique(who).tolist():
            rows = live[who == name]
            acts[rows] = bots[name].act_batch(obs[rows], masks[rows])
        eng.step(acts)
        step += 1
    states = concat_records(out)
    states = np.ascontiguousarray(states[states["phase"] != int(Phase.OVER)])
    return states[:max_states] if max_states is not None else states
