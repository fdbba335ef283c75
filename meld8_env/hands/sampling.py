"""Random hands for tests and benchmarks: uniform k-card masks, winning hands, tenpai-like hands.

All functions take a ``numpy.random.Generator`` and return ``uint64`` arrays of 53-bit masks.
"""

from __future__ import annotations

import numpy as np

from meld8_env.cardmask import BITS


def random_masks(rng: np.random.Generator, n: int, k: int, exclude: np.ndarray | None = None) -> np.ndarray:
    """n uniform k-card hands from the 53 cards (minus each row's ``exclude`` mask)."""
    keys = rng.random((n, 53))
    if exclude is not None:
        excl = (np.asarray(exclude, dtype=np.uint64)[:, None] & BITS[None, :]) != 0
        keys[excl] = 2.0
    idx = np.argpartition(keys, k, axis=1)[:, :k]
    return np.bitwise_or.reduce(BITS[idx], axis=1)


def drop_random_card(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """Remove one random card from each mask (winning 8 -> a 7-card hand near tenpai)."""
    has = (masks[:, None] & BITS[None, :]) != 0
    keys = np.where(has, rng.random(has.shape), -1.0)
    return masks & ~BITS[keys.argmax(axis=1)]


def random_melds(rng: np.random.Generator, n: int) -> np.ndarray:
    """n random exposed melds (Joker-free triplets or sequences)."""
    out = np.empty(n, np.uint64)
    trip = rng.random(n) < 0.5
    r = rng.integers(0, 13, n)
    missing = rng.integers(0, 4, n)
    rank_bits = np.zeros(n, np.uint64)
    for s in range(4):
        rank_bits |= np.where(missing != s, BITS[s * 13 + r], np.uint64(0))
    st = rng.integers(0, 11, n)
    suit = rng.integers(0, 4, n)
    base = suit * 13 + st
    seq = BITS[base] | BITS[base + 1] | BITS[base + 2]
    out[:] = np.where(trip, rank_bits, seq)
    return out
