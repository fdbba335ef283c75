"""The evaluation both trainers run: a duplicate mini-tournament of a policy against fixed agents.

``evaluate(policy, opponents, boards, rules, seed)`` plays every seating of ``boards`` board seeds
(``1_000_000 + seed + k``: never a training seed) and returns ``mean_placement``, ``mean_score`` and
``games`` for the policy's seat; the rows of ``eval.jsonl`` (``training.run_folder``) are these plus
the step counts. ``stop`` is handed to ``training.arena.play`` (polled every step, or between slices of games
where a lineup of built-in bots plays whole games in C; ``StopRequested``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from meld8_env.rules import RuleConfig


def evaluate(
    policy, opponents: list[str], boards: int, rules: RuleConfig, seed: int, stop: Callable[[], bool] | None = None
) -> dict:
    """Duplicate mini-tournament of ``policy`` vs the fixed agents ``opponents`` (every seating of every board)."""
    from agents.registry import load_agent
    from training.arena import play

    agents = [policy] + [load_agent(n, rules, 100 + i) for i, n in enumerate(opponents)]
    perms = np.array(list(itertools.permutations(range(len(agents)))))
    seeds = np.repeat(np.arange(boards) + 1_000_000 + seed, len(perms))
    recs = play(agents, np.tile(perms, (boards, 1)), seeds, rules, stop=stop)
    places = [r.placements[r.seats.index(0)] for r in recs]
    scores = [r.final_scores[r.seats.index(0)] for r in recs]
    return {"mean_placement": float(np.mean(places)), "mean_score": float(np.mean(scores)), "games": len(recs)}
