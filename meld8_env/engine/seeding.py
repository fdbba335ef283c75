"""Seeds: one game seed drives everything; each deal gets its own derived stream.

Stream ``k`` of game seed ``s`` is splitmix64 started from ``mix(s, k)``; stream 0 shuffles the deck
for the starting-dealer draw (R7), stream ``n`` >= 1 shuffles the n-th deal of the game (replayed
rounds included, so no wall ever repeats). Fisher-Yates with ``next() % (i + 1)``. The same code
is written in C for the fast engine (``_splitmix.h``); both must produce identical decks. ``mix64`` and
``mix64_array`` are the project's only Python splitmix64 mixers (the random agent hashes with the
array one).
"""

from __future__ import annotations

import numpy as np

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
_M1, _M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


MAX_SEED = 2**63
"""Seeds are integers 0..2**63: a batch seeded S uses S, S + 1, ..., wrapping to 0 past 2**63
(``meld8_env.vector.Meld8Vector``), so every game's seed is one a single game accepts."""


def check_seed(seed: object, what: str = "seed") -> int:
    """``seed`` as an int, or ValueError naming what is allowed (no bools, floats or strings)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{what} must be an integer 0..2**63, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"{what} must be an integer 0..2**63, got {seed}")
    return int(seed)


def check_seed_array(seeds: object, what: str = "seeds", top: int = MAX_SEED) -> np.ndarray:
    """``seeds`` as a C-contiguous uint64 array, each an integer 0..``top`` (:func:`check_seed` for arrays: floats,
    booleans and negatives were cast silently, -1 to 2**64 - 1 and 1.7 to 1). ``top`` is 2**63 for seeds a user
    gives, ``MASK64`` inside the engine, where a batch seeded S plays S, S + 1, ..."""
    limit = "2**63" if top == MAX_SEED else "2**64 - 1"
    arr = np.asarray(seeds)
    if arr.size == 0:  # [] is float64 to numpy: no seeds, whatever its dtype
        return np.zeros(arr.shape, np.uint64)
    if arr.dtype == object:  # Python ints beyond int64
        vals = arr.ravel().tolist()
        if any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= top for x in vals):
            raise ValueError(f"{what} must be integers 0..{limit}")
        return np.array(vals, np.uint64).reshape(arr.shape)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{what} must be integers 0..{limit}, got dtype {arr.dtype}")
    if arr.size and (arr.min() < 0 or int(arr.max()) > top):
        bad = next(x for x in arr.ravel().tolist() if not 0 <= x <= top)
        raise ValueError(f"{what} must be integers 0..{limit}, got {bad}")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def check_game_index(index: object, n: int, what: str = "index") -> np.ndarray:
    """``index`` as int64 positions of distinct games of a batch of ``n`` (-1 was the last game, 0.9 the first)."""
    arr = np.asarray(index)
    if arr.size == 0 and arr.ndim == 1:  # [] is float64 to numpy: no games, whatever its dtype
        return np.zeros(0, np.int64)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise ValueError(f"{what} must be a 1-D array of game positions (integers), got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"{what} must hold game positions 0..{n - 1}, got {int(arr[(arr < 0) | (arr >= n)][0])}")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{what} names a game twice")
    return arr


def mix64(z: int) -> int:
    """The splitmix64 output function on one 64-bit int."""
    z = ((z ^ (z >> 30)) * _M1) & MASK64
    z = ((z ^ (z >> 27)) * _M2) & MASK64
    return z ^ (z >> 31)


def mix64_array(z: np.ndarray) -> np.ndarray:
    """:func:`mix64` over a uint64 array (wrapping multiplication)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(_M1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(_M2)
    return z ^ (z >> np.uint64(31))


class Stream:
    """splitmix64 generator."""

    def __init__(self, game_seed: int, index: int) -> None:
        self.state = mix64((game_seed & MASK64) ^ mix64((index * GOLDEN) & MASK64))

    def next(self) -> int:
        self.state = (self.state + GOLDEN) & MASK64
        return mix64(self.state)


def shuffled_deck(game_seed: int, index: int) -> list[int]:
    """The 53 card ids in the order of stream ``index`` (Fisher-Yates)."""
    deck = list(range(53))
    rng = Stream(game_seed, index)
    for i in range(52, 0, -1):
        j = rng.next() % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck
