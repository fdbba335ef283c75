"""Rollouts at engine speed: caller-owned records played to the end of the hand or game by C bots.

``rollout(rules, records, seat_policies, seeds, until="hand", threads=2)`` advances ``records``
((N,) ``STATE_DTYPE``, C-contiguous, writable; pass copies to keep the originals) in place. Seat ``p``
of record ``i`` plays ``seat_policies[i, p]`` (names or codes of ``meld8_env.policies.POLICY``; a (P,)
row applies to every record). ``seeds`` (N,) uint64 start each record's splitmix64 stream for the
``random`` policy (greedy, defensive and oracle draw nothing), so a rollout is a function of its inputs: the
same records, policies and seeds give the same result whatever ``threads`` is.

The batch is split into contiguous slices over ``threads`` threads (the C loop releases the GIL),
the way ``Meld8Vector`` splits a batch. The Python twin is stepping the records one action at a time
with the agents in ``agents/`` (``tests/test_cbots.py`` does exactly that; ``agents.oracle`` for ``oracle``,
which reads the other seats' hands in each record: in the search's worlds those are the sampled hands).
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from meld8_env.codes import Phase
from meld8_env.engine.bots import rollout_raw
from meld8_env.policies import check_record_array, packed, policy_codes
from meld8_env.rules import RuleConfig

UNTIL = {"hand": 0, "game": 1}
MAX_STEPS = 1 << 20
"""A safety stop per record (a game of 16 rounds takes a few thousand steps)."""
MAX_THREADS = 8
_pool: list[ThreadPoolExecutor] = []


@dataclasses.dataclass(frozen=True)
class RolloutResult:
    """Per record, P = the rules' players: ``deltas`` (N, P) int32 score change over the rollout,
    ``scores`` (N, P) int32 scores after it, ``final_scores`` (N, P) int32 and ``placements`` (N, P)
    uint8 where the game is over (0 elsewhere), ``over`` (N,) bool, ``steps`` (N,) int32 actions taken."""

    deltas: np.ndarray
    scores: np.ndarray
    final_scores: np.ndarray
    placements: np.ndarray
    over: np.ndarray
    steps: np.ndarray


def rollout(
    rules: RuleConfig,
    records: np.ndarray,
    seat_policies: object,
    seeds: np.ndarray,
    until: str = "hand",
    threads: int = 2,
) -> RolloutResult:
    """Play every record to the end of its current hand (``until="hand"``) or game (``"game"``)."""
    if until not in UNTIL:
        raise ValueError(f"until must be 'hand' or 'game', got {until!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"threads must be an integer 1..{MAX_THREADS}, got {threads!r}")
    records = check_record_array(records, writable=True)
    n, P = len(records), rules.num_players
    pol = policy_codes(seat_policies, (n, P))
    seeds = np.asarray(seeds)
    if seeds.shape != (n,) or seeds.dtype.kind not in "iu":
        raise ValueError(f"seeds must be {n} unsigned integers (one per record), got shape {seeds.shape}")
    rng = seeds.astype(np.uint64)  # a copy: the caller's seeds stay as given
    steps = np.zeros(n, np.int32)
    deltas = np.zeros((n, P), np.int32)
    rules_bytes = packed(rules)

    def part(a: int, b: int) -> int:
        return rollout_raw(records[a:b], rules_bytes, pol[a:b], rng[a:b], UNTIL[until], MAX_STEPS, steps[a:b],
                             deltas[a:b])  # fmt: skip

    bounds = np.linspace(0, n, min(threads, max(n, 1)) + 1).astype(int)
    if threads == 1 or n < 2:
        stuck = part(0, n)
    else:
        if not _pool:
            _pool.append(ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="meld8-rollout"))
        stuck = sum(_pool[0].map(part, bounds[:-1], bounds[1:]))
    if stuck:
        raise RuntimeError(f"rollout: {stuck} records did not finish (a record that is not a live game state?)")
    over = records["phase"] == int(Phase.OVER)
    return RolloutResult(
        deltas=deltas,
        scores=records["scores"][:, :P].copy(),
        final_scores=np.where(over[:, None], records["final_scores"][:, :P], 0).astype(np.int32),
        placements=np.where(over[:, None], records["placements"][:, :P], 0).astype(np.uint8),
        over=over,
        steps=steps,
    )
