"""Which hand cards a Pon or Chii uses, and what the caller may not discard afterwards (R15, R16, R20).

One definition for the reference engine (scalar :func:`call_pair`, :func:`kuikae_mask`) and for
agents (vectorised :func:`call_cards`, :func:`kuikae_after`, table lookups built from the scalar
functions). The C engine has its own copy (``eng_call_cards``, ``eng_kuikae_after``); a test checks
that the C engine's ``call_tables()`` equals :func:`call_tables` for every action and card.

Call actions (``meld8_env.actions``): Pon ``PON_BASE + i`` uses the two hand cards of the suit pair
``PON_SUIT_PAIRS[i]`` of the discard's rank; Chii ``CHII_LOW / MID / HIGH`` takes the discard as the
low / middle / high card of a same-suit sequence.
"""

from __future__ import annotations

import functools

import numpy as np

from meld8_env.actions import CHII_HIGH, CHII_LOW, CHII_MID, N_CALL_ACTIONS, PON_BASE, PON_SUIT_PAIRS
from meld8_env.cards import card_id, rank_of, suit_of

CALL_ACTIONS = tuple(range(PON_BASE, PON_BASE + N_CALL_ACTIONS))


def call_pair(action: int, card: int) -> int:
    """Mask of the two hand cards ``action`` uses on the discarded ``card`` (0: impossible shape)."""
    r, s = rank_of(card), suit_of(card)
    if PON_BASE <= action < CHII_LOW:
        a, b = PON_SUIT_PAIRS[action - PON_BASE]
        return 1 << card_id(r, a) | 1 << card_id(r, b)
    ranks = {CHII_LOW: (r + 1, r + 2), CHII_MID: (r - 1, r + 1), CHII_HIGH: (r - 2, r - 1)}.get(action)
    if ranks is None:
        raise ValueError(f"action {action} is not a Pon or Chii")
    if min(ranks) < 1 or max(ranks) > 13:
        return 0
    return 1 << card_id(ranks[0], s) | 1 << card_id(ranks[1], s)


def kuikae_mask(action: int, card: int, on: bool = True) -> int:
    """R20: the cards the caller may not discard right after calling ``card`` with ``action``.

    Pon: no card of the called rank; Chii: not the card at the other end of the sequence."""
    if not on:
        return 0
    r, s = rank_of(card), suit_of(card)
    if action < CHII_LOW:
        return sum(1 << card_id(r, x) for x in range(4))
    if action == CHII_LOW and r + 3 <= 13:
        return 1 << card_id(r + 3, s)
    if action == CHII_HIGH and r - 3 >= 1:
        return 1 << card_id(r - 3, s)
    return 0


@functools.cache
def call_tables(kuikae_on: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(pairs, kuikae): uint64[N_CALL_ACTIONS, 52] tables, row = action - PON_BASE, column = card."""
    pairs = np.array([[call_pair(a, c) for c in range(52)] for a in CALL_ACTIONS], np.uint64)
    kk = np.array([[kuikae_mask(a, c, kuikae_on) for c in range(52)] for a in CALL_ACTIONS], np.uint64)
    pairs.flags.writeable = kk.flags.writeable = False
    return pairs, kk


def call_cards(action: np.ndarray, card: np.ndarray) -> np.ndarray:
    """Vectorised :func:`call_pair`: masks of the two hand cards per (action, card)."""
    return call_tables()[0][np.asarray(action) - PON_BASE, np.asarray(card)]


def kuikae_after(action: np.ndarray, card: np.ndarray, on: bool = True) -> np.ndarray:
    """Vectorised :func:`kuikae_mask`."""
    return call_tables(bool(on))[1][np.asarray(action) - PON_BASE, np.asarray(card)]
