"""Card sets as 53-bit masks in numpy: the one home of the mask constants and helpers.

Card ``c`` is bit ``c`` of a ``uint64`` (ids as in ``meld8_env.cards``: suit * 13 + rank - 1, the
Joker 52). Arrays are batch-first: ``(N,)`` masks, ``(N, 53)`` 0/1 planes.
"""

from __future__ import annotations

import numpy as np

from meld8_env.cards import CROWN_RANKS, JOKER, NUM_CARDS

U0 = np.uint64(0)
U1 = np.uint64(1)
BITS = np.left_shift(U1, np.arange(NUM_CARDS, dtype=np.uint64))
"""BITS[c]: the mask of card c."""
JK = BITS[JOKER]
REAL = np.uint64((1 << JOKER) - 1)
"""The 52 playing cards (everything but the Joker)."""
ALL = np.uint64((1 << NUM_CARDS) - 1)
RANK_MASKS = np.array([sum(1 << (13 * s + r) for s in range(4)) for r in range(13)], np.uint64)
"""RANK_MASKS[r]: the four cards of rank r + 1."""
SUIT_MASKS = np.array([((1 << 13) - 1) << (13 * s) for s in range(4)], np.uint64)
RED = SUIT_MASKS[1] | SUIT_MASKS[2]
BLACK = SUIT_MASKS[0] | SUIT_MASKS[3]
CROWN = np.bitwise_or.reduce(RANK_MASKS[[r - 1 for r in CROWN_RANKS]])
"""A, J, Q, K (R3)."""
NOT_K = np.uint64(sum(0x0FFF << (13 * s) for s in range(4)))
NOT_QK = np.uint64(sum(0x07FF << (13 * s) for s in range(4)))


def bits_of(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, card) index pairs of every set bit of each mask in ``masks`` (N,)."""
    has = (np.asarray(masks, dtype=np.uint64)[:, None] & BITS[None, :]) != 0
    return np.nonzero(has)


def masks_of_planes(planes: np.ndarray) -> np.ndarray:
    """(..., K) 0/1 planes of cards 0..K-1 (K <= 53) -> (...) uint64 card masks."""
    return (planes.astype(np.uint64) * BITS[: planes.shape[-1]]).sum(axis=-1, dtype=np.uint64)


def discard_masks(action_masks: np.ndarray) -> np.ndarray:
    """(N, 64) legal-action masks -> (N,) uint64 masks of the cards each row may discard (ids 0..51)."""
    return masks_of_planes(np.asarray(action_masks)[:, :JOKER])


def card_masks(cards: np.ndarray) -> np.ndarray:
    """Card ids (any shape) -> their single-card masks (0 where the id is negative)."""
    cards = np.asarray(cards)
    return np.where(cards >= 0, BITS[np.clip(cards, 0, JOKER)], U0)
