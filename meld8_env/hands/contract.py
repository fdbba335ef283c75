"""The hand evaluator's input contract, checked at every public entry (C and Python twin alike).

A hand is a 53-bit mask (card ids 0..52, R5); a called meld is 0 or exactly 3 playing cards (never
the Joker, R12) disjoint from the hand, of one rank (Pon, R15) or in a row in one suit (Chii, R16).
Each function takes a fixed number of cards, counting the meld: ``is_win_form`` / ``readings`` /
scoring 8, ``waits`` and ``acceptance`` 7, ``distance`` 7 or 8.
The C extension (``_native.c: hand_error``) refuses the same inputs with the same words, so the two
backends agree on invalid input too: both raise ``ValueError``.

``exact_uint64`` / ``exact_int`` convert array arguments without silent loss: floats, NaN, booleans,
negative masks and values that do not fit are refused instead of being cast.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

import numpy as np

from meld8_env.cards import JOKER, CardError, mask_str, parse_cards, to_mask

CARD_BITS = (1 << 53) - 1
REAL_BITS = (1 << 52) - 1

SIZES = {
    "is_win_form": (8, 8),
    "readings": (8, 8),
    "score": (8, 8),
    "waits": (7, 7),
    "acceptance": (7, 7),
    "distance": (7, 8),
}


NOT_A_MELD = "neither a Pon (three cards of one rank) nor a Chii (three in a row in one suit)"
MELD_SHAPE = f"a meld that is {NOT_A_MELD}"
ROW = (1 << 13) - 1
RUN_STARTS = sum(1 << (13 * s + r) for s in range(4) for r in range(11))  # where three in a row can start


def is_meld_shape(meld: int) -> bool:
    """Three playing cards of one rank (Pon, R15) or three consecutive ranks of one suit (Chii, R16)."""
    ranks = (meld | meld >> 13 | meld >> 26 | meld >> 39) & ROW
    low = meld & -meld
    return ranks.bit_count() == 1 or (meld == 7 * low and bool(low & RUN_STARTS))


def called_meld_error(meld: int) -> str | None:
    """Why the 3 playing cards ``meld`` are not a called meld (the single-hand API's words), or None."""
    return None if is_meld_shape(meld) else f"called meld {mask_str(meld)} is {NOT_A_MELD} (R15, R16)"


def parse_meld(meld: str | Iterable[int | str], hand: int = 0) -> int:
    """The called meld of the single-hand API (R4 text, ids or tokens) as a mask: 3 playing cards, none of them in
    the ``hand`` mask, that make a Pon or a Chii (R12, R15, R16); otherwise CardError saying so."""
    cards = parse_cards(meld, what="meld")
    if len(cards) != 3:  # "expected 3 cards, got 1" did not say what a meld is
        raise CardError(f"meld: a called meld is 3 cards (a Pon or a Chii, R15, R16), got {len(cards)}")
    if JOKER in cards:
        raise CardError("the Joker can never be in a called meld (R12)")
    mask = to_mask(cards)
    if mask & hand:
        raise CardError(f"duplicate card {mask_str(mask & hand).split()[0]} (in hand and meld)")
    if err := called_meld_error(mask):
        raise CardError(err)
    return mask


def exact_mask(value: object, what: str) -> int:
    """One mask argument of the mask-level API as an int: a Python or numpy integer, never a bool or a float (the
    Python twin read a meld of 2.5 as 2, the C backend refused it without naming it)."""
    try:
        if not isinstance(value, bool):
            return operator.index(value)
    except TypeError:
        pass
    raise TypeError(f"{what} must be an integer card mask, got {type(value).__name__} {value!r}")


def check_mask_args(fn: str, mask: object, meld: object = 0) -> tuple[int, int]:
    """(mask, meld) as ints that keep ``fn``'s contract, or TypeError / ValueError naming what is wrong (-1 was a raw
    OverflowError of the C backend)."""
    mask, meld = exact_mask(mask, f"{fn}: mask"), exact_mask(meld, f"{fn}: meld")
    check_hand(fn, mask, meld)
    return mask, meld


def hand_error(mask: int, meld: int, lo: int, hi: int) -> str | None:
    """Why (hand, meld) breaks the contract of a function taking ``lo``..``hi`` cards, or None."""
    if mask < 0 or mask > CARD_BITS:
        return "a card id outside 0..52 in the hand"
    if meld < 0 or meld > REAL_BITS:
        return "a card id outside 0..51 (or the Joker) in the meld"
    if mask & meld:
        return "a card both in the hand and the meld"
    nm = meld.bit_count()
    if nm not in (0, 3):
        return f"a meld of {nm} cards (a called meld has 3)"
    if nm and not is_meld_shape(meld):
        return MELD_SHAPE
    n = mask.bit_count() + nm
    if not lo <= n <= hi:
        want = str(lo) if lo == hi else f"{lo} or {hi}"
        return f"{n} cards counting the meld (this function takes {want})"
    return None


def check_hand(fn: str, mask: int, meld: int = 0) -> None:
    """Raise ValueError naming the hand (R4 notation) when it breaks ``fn``'s contract."""
    lo, hi = SIZES[fn]
    err = hand_error(int(mask), int(meld), lo, hi)
    if err is not None:
        raise ValueError(f"{fn}: {err}: {_show(mask, meld)}")


def check_hands(fn: str, masks: np.ndarray, melds: np.ndarray | None = None) -> None:
    """Vectorised :func:`check_hand` over uint64 arrays; names the first bad row."""
    lo, hi = SIZES[fn]
    m = np.zeros_like(masks) if melds is None else melds
    nm = np.bitwise_count(m)
    n = np.bitwise_count(masks) + nm
    bad = (masks >> np.uint64(53) != 0) | (m >> np.uint64(52) != 0) | (masks & m != 0)
    bad |= ((nm != 0) & (nm != 3)) | (n < lo) | (n > hi)
    ranks = (m | m >> np.uint64(13) | m >> np.uint64(26) | m >> np.uint64(39)) & np.uint64(ROW)
    low = m & (~m + np.uint64(1))  # the lowest card (two's complement in uint64)
    run = (m == low * np.uint64(7)) & (low & np.uint64(RUN_STARTS) != 0)
    bad |= (nm == 3) & (np.bitwise_count(ranks) != 1) & ~run
    if bad.any():
        i = int(np.argmax(bad))
        err = hand_error(int(masks[i]), int(m[i]), lo, hi)
        raise ValueError(f"{fn}: row {i}: {err}: {_show(int(masks[i]), int(m[i]))}")


def check_card_sets(what: str, masks: np.ndarray) -> None:
    """Card-set arguments (unseen, pool, furiten): no bit at 53 or above."""
    bad = masks >> np.uint64(53) != 0
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{what}: row {i} has a card id outside 0..52 (mask {int(masks[i]):#x})")


def _show(mask: int, meld: int) -> str:
    def one(x: int) -> str:
        if x < 0 or x > CARD_BITS:
            return f"{x:#x}"
        return mask_str(x) or "(no cards)"

    return one(int(mask)) + (f" + meld [{one(int(meld))}]" if meld else "")


def exact_uint64(a: object, what: str) -> np.ndarray:
    """A C-contiguous 1-D uint64 array holding exactly the integers of ``a``."""
    arr = np.asarray(a)
    if arr.dtype.kind == "O":  # Python ints beyond int64: convert one by one, exactly
        try:
            vals = [int(x) for x in arr.ravel()]
        except (TypeError, ValueError):
            raise TypeError(f"{what}: card masks must be integers") from None
        if any(isinstance(x, bool) or not 0 <= x < 2**64 for x in arr.ravel().tolist()):
            raise ValueError(f"{what}: a mask outside 0..2**64-1")
        arr = np.array(vals, dtype=np.uint64).reshape(arr.shape)
    elif arr.dtype.kind not in "ui":
        raise TypeError(f"{what}: card masks must be integers, got dtype {arr.dtype}")
    elif arr.dtype.kind == "i" and arr.size and (arr < 0).any():
        raise ValueError(f"{what}: a negative mask")
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D array, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def exact_int(a: object, what: str, dtype: type, lo: int, hi: int) -> np.ndarray:
    """A C-contiguous 1-D array of ``dtype`` holding exactly the integers of ``a``, each in lo..hi."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "ui" or arr.dtype == np.bool_:
        raise TypeError(f"{what}: expected integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D array, got shape {arr.shape}")
    if arr.size and (arr.min() < lo or arr.max() > hi):
        bad = int(np.flatnonzero((arr < lo) | (arr > hi))[0])
        raise ValueError(f"{what}: row {bad} is {int(arr[bad])}, allowed {lo}..{hi}")
    return np.ascontiguousarray(arr, dtype=dtype)
