"""The C bots' and rollout's calls into the engine extension (``_bots.c`` through ``_fast``).

The C side checks the buffers' sizes, the policy codes and every record's fields (``eng_check_ranges``: what
``meld8_env.engine.records.check_ranges`` checks, in its words, and each live seat's hand size) before any
record is read; ``meld8_env.policies`` and ``meld8_env.rollout`` check the rest (dtypes, shapes, contiguity;
their docstrings give the contracts). Only the engine package touches ``_fast``."""

from __future__ import annotations

import numpy as np

from meld8_env.engine import _fast


def policy_act_raw(records: np.ndarray, rules: bytes, codes: np.ndarray, rng: np.ndarray, out: np.ndarray) -> None:
    _fast.policy_act(records, rules, codes, rng, out)


def act_obs_raw(
    rules: bytes, code: int, obs: np.ndarray, masks: np.ndarray, weights: np.ndarray | None, seed: int, out: np.ndarray
) -> None:
    _fast.act_obs(rules, code, obs, masks, weights, seed, out)


def rollout_raw(
    records: np.ndarray, rules: bytes, policies: np.ndarray, rng: np.ndarray, until: int, max_steps: int,
    steps: np.ndarray, deltas: np.ndarray, threads: int,
) -> int:  # fmt: skip
    """Returns how many records did not reach their stop (max_steps or a refused action); ``threads`` C threads
    (this one included) claim the records two at a time (``ROLLOUT_BLOCK`` in _fast.c) from one shared counter."""
    return _fast.rollout(records, rules, policies, rng, until, max_steps, steps, deltas, threads)


def play_games_raw(
    records: np.ndarray, rules: bytes, codes: np.ndarray, seeds: np.ndarray, weights: np.ndarray, seats: np.ndarray,
    actions: np.ndarray, nact: np.ndarray, stats: np.ndarray,
) -> int:  # fmt: skip
    """Returns how many games did not end within the actions buffer (or stopped on a refused action)."""
    return _fast.play_games(records, rules, codes, seeds, weights, seats, actions, nact, stats)
