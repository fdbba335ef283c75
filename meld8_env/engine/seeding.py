"""Seeds: one game seed drives everything; each deal gets its own derived stream.

Stream ``k`` of game seed ``s`` is splitmix64 started from ``mix(s, k)``; stream 0 shuffles the deck
for the starting-dealer draw (R7), stream ``n`` >= 1 shuffles the n-th deal of the game (replayed
rounds included, so no wall ever repeats). Fisher-Yates with ``next() % (i + 1)``. The same code
is written in C for the fast engine; both must produce identical decks.
"""

from __future__ import annotations

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


class Stream:
    """splitmix64 generator."""

    def __init__(self, game_seed: int, index: int) -> None:
        self.state = _mix((game_seed & MASK64) ^ _mix((index * GOLDEN) & MASK64))

    def next(self) -> int:
        self.state = (self.state + GOLDEN) & MASK64
        return _mix(self.state)


def shuffled_deck(game_seed: int, index: int) -> list[int]:
    """The 53 card ids in the order of stream ``index`` (Fisher-Yates)."""
    deck = list(range(53))
    rng = Stream(game_seed, index)
    for i in range(52, 0, -1):
        j = rng.next() % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck
