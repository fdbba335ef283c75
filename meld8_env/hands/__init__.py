"""Hand evaluation (docs/rules.md R23-R28, R31, R33): winning forms, readings, waits, distance to win.

Cards may be given as ids, R4 tokens or one R4 string; ``meld`` is the exposed called meld (3 cards)
or None. Batched forms take numpy ``uint64`` arrays of 53-bit card masks (bit = card id).

Two backends give identical results: the C extension ``_native`` and the pure-Python twin
``_reference``. ``BACKEND`` says which is in use; ``MELD8_BACKEND=c|python`` forces one, and
``MELD8_REQUIRE_NATIVE=1`` makes a missing C build an import error instead of a silent fallback.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from types import ModuleType

import numpy as np

from meld8_env.cards import CardError, card_str, from_mask, parse_cards, to_mask
from meld8_env.config_io import env_flag
from meld8_env.hands import _reference
from meld8_env.hands.contract import (
    check_card_sets,
    check_hands,
    check_mask_args,
    exact_int,
    exact_uint64,
    parse_meld,
)
from meld8_env.hands.forms import FORM_NAMES, UNREACHABLE, Reading

__all__ = [
    "BACKEND",
    "UNREACHABLE",
    "acceptance_batch",
    "HandReading",
    "decompositions",
    "distance_batch",
    "distance_to_win",
    "is_win_form",
    "is_win_form_batch",
    "set_backend",
    "waits",
    "waits_batch",
]

_native: ModuleType | None
try:
    from meld8_env.hands import _native  # type: ignore[attr-defined]
except ImportError as exc:  # pragma: no cover - exercised only without a C compiler
    _native = None
    _native_error = exc

if env_flag("MELD8_REQUIRE_NATIVE") and _native is None:
    raise ImportError(f"MELD8_REQUIRE_NATIVE=1 but the C extension did not build/import: {_native_error}")

_choice = os.environ.get("MELD8_BACKEND", "c" if _native is not None else "python")
if _choice not in ("c", "python"):
    raise ValueError(f"MELD8_BACKEND must be 'c' or 'python', got {_choice!r}")
if _choice == "c" and _native is None:
    raise ImportError("MELD8_BACKEND=c but the C extension is not built (pip install -e . builds it)")
BACKEND: str = _choice


def backend() -> ModuleType:
    """The module that evaluates hands now: the C extension or the Python reference (``BACKEND``)."""
    return _native if BACKEND == "c" else _reference  # type: ignore[return-value]


def relaxed_joker_standard(mask: int, meld: int = 0) -> bool:
    """R27 helper of the reference evaluator: a standard form if the Joker could stand anywhere."""
    return bool(_reference.relaxed_joker_standard(mask, meld))


def native_module() -> ModuleType:
    """The C extension; RuntimeError when it is not built."""
    if _native is None:
        raise RuntimeError("this function needs the C extension (meld8_env.hands._native)")
    return _native


def set_backend(name: str) -> None:
    """Switch backend at run time ('c' or 'python'); tests use it to run both."""
    global BACKEND
    if name not in ("c", "python"):
        raise ValueError(f"backend must be 'c' or 'python', got {name!r}")
    if name == "c":
        native_module()
    BACKEND = name


@dataclasses.dataclass(frozen=True)
class HandReading:
    """One reading of a hand (R28): its form, groups (card ids; the Joker is 52) and the Joker's card."""

    form: str
    groups: tuple[tuple[int, ...], ...]
    joker_as: int | None
    meld: tuple[int, ...] = ()

    def __str__(self) -> str:
        parts = [" ".join(card_str(c) for c in g) for g in self.groups]
        if self.meld:
            parts.append("[" + " ".join(card_str(c) for c in self.meld) + "]")
        jk = f" (JK={card_str(self.joker_as)})" if self.joker_as is not None else ""
        return f"{self.form}: " + " | ".join(parts) + jk


# -- conversions ---------------------------------------------------------------------------
def _cards_mask(cards: str | Iterable[int | str], what: str) -> int:
    return to_mask(parse_cards(cards))


def _masks(hand: str | Iterable[int | str], meld: str | Iterable[int | str] | None) -> tuple[int, int]:
    h = _cards_mask(hand, "hand")
    if meld is None:
        return h, 0
    return h, parse_meld(meld, h)


def _check_size(mask: int, meld: int, sizes: tuple[int, int], what: str) -> None:
    n = mask.bit_count()
    want = sizes[1] if meld else sizes[0]
    if n != want:
        extra = " beside a called meld" if meld else ""
        raise CardError(f"{what} needs {want} concealed cards{extra}, got {n}")


# -- mask-level API (the engine uses these) ------------------------------------------------------
def readings_of_masks(mask: int, meld: int = 0) -> list[Reading]:
    """Readings in canonical order: by form, then groups, then the Joker's card."""
    mask, meld = check_mask_args("readings", mask, meld)
    return sorted(backend().readings(mask, meld), key=lambda r: (r[0], tuple(sorted(r[1])), r[2]))


def is_win_form_mask(mask: int, meld: int = 0) -> bool:
    mask, meld = check_mask_args("is_win_form", mask, meld)
    return bool(backend().is_win_form(mask, meld))


def waits_of_masks(mask: int, meld: int = 0) -> int:
    mask, meld = check_mask_args("waits", mask, meld)
    return backend().waits(mask, meld)


# -- public single-hand API --------------------------------------------------------------------
def is_win_form(concealed: str | Iterable[int | str], meld: str | Iterable[int | str] | None = None) -> bool:
    """True if the 8 cards (concealed + meld) make a winning form (R26, R27); yaku are not checked."""
    h, m = _masks(concealed, meld)
    _check_size(h, m, (8, 5), "is_win_form")
    return bool(backend().is_win_form(h, m))


def decompositions(
    concealed: str | Iterable[int | str], meld: str | Iterable[int | str] | None = None
) -> list[HandReading]:
    """Every reading of a winning hand, with the Joker's stand-in (R26-R28); [] if none."""
    h, m = _masks(concealed, meld)
    _check_size(h, m, (8, 5), "decompositions")
    meld_cards = tuple(from_mask(m))
    return [
        HandReading(FORM_NAMES[f], tuple(tuple(from_mask(g)) for g in sorted(gs)), s if s >= 0 else None, meld_cards)
        for f, gs, s in readings_of_masks(h, m)
    ]


def waits(hand: str | Iterable[int | str], meld: str | Iterable[int | str] | None = None) -> list[int]:
    """Card ids that complete a winning form (R33 furiten set; yaku ignored). Includes the Joker
    (52) when drawing it would win."""
    h, m = _masks(hand, meld)
    _check_size(h, m, (7, 4), "waits")
    return from_mask(backend().waits(h, m))


def distance_to_win(
    hand: str | Iterable[int | str],
    meld: str | Iterable[int | str] | None = None,
    unseen: str | Iterable[int | str] | None = None,
) -> int:
    """Exact fewest further cards to a winning hand, drawing only ``unseen`` cards (default: every
    card not in hand or meld). 0: the 8 cards win; 1: a 7-card hand is tenpai. ``UNREACHABLE`` (99)
    if no winning hand can be reached."""
    h, m = _masks(hand, meld)
    n = h.bit_count()
    want = (4, 5) if m else (7, 8)
    if n not in want:
        raise CardError(f"distance_to_win needs {want[0]} or {want[1]} concealed cards, got {n}")
    u = ((1 << 53) - 1) & ~(h | m) if unseen is None else _cards_mask(unseen, "unseen") & ~(h | m)
    return int(backend().distance(h, m, u))


# -- batched API ---------------------------------------------------------------------------
def _as_masks(a: np.ndarray | None, n: int | None, what: str) -> np.ndarray | None:
    if a is None:
        return None
    arr = exact_uint64(a, what)
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{what} must be a 1-D array of {n} uint64 masks, got {arr.shape[0]}")
    return arr


def _batch(native_name: str, reference, masks, meld_masks, dtype) -> np.ndarray:
    """Run one batched evaluator: the C loop, or the twin hand by hand."""
    h = _as_masks(masks, None, "masks")
    m = _as_masks(meld_masks, h.shape[0], "meld_masks")
    check_hands({"is_win_form_batch": "is_win_form", "waits_batch": "waits"}[native_name], h, m)
    out = np.zeros(h.shape[0], dtype)
    if BACKEND == "c":
        getattr(native_module(), native_name)(h, m, out)
    else:
        for i, x in enumerate(h):
            out[i] = reference(int(x), int(m[i]) if m is not None else 0)
    return out


def is_win_form_batch(masks: np.ndarray, meld_masks: np.ndarray | None = None) -> np.ndarray:
    """bool[B]: is_win_form for each mask (8 concealed cards, or 5 beside the meld mask)."""
    return _batch("is_win_form_batch", _reference.is_win_form, masks, meld_masks, np.uint8).view(bool)


def waits_batch(masks: np.ndarray, meld_masks: np.ndarray | None = None) -> np.ndarray:
    """uint64[B]: wait masks (R33) of 7-card hands (4 beside a meld)."""
    return _batch("waits_batch", _reference.waits, masks, meld_masks, np.uint64)


#: distance_batch / acceptance_batch: below this many hands one thread is faster
#: (a thread hand-off costs ~20 us, a hand ~1-2 us)
DISTANCE_SPLIT_MIN = 256
MAX_THREADS = max(1, min(32, os.cpu_count() or 1))
"""``threads=`` is capped here: one shared pool of at most this many threads serves every call."""
_pool_holder: list = []


def _auto_threads(n: int) -> int:
    return min(2, os.cpu_count() or 1) if n >= DISTANCE_SPLIT_MIN else 1


def _run_parts(part, n: int, threads: int | None) -> None:
    """part(slice) over [0, n) in ``threads`` parallel slices (the C loops release the GIL)."""
    n_threads = _auto_threads(n) if threads is None else max(1, min(int(threads), MAX_THREADS))
    if n_threads == 1:
        part(slice(0, n))
        return
    bounds = np.linspace(0, n, n_threads + 1).astype(int)
    list(_pool(n_threads).map(part, [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]))


def _pool(n_threads: int):
    """The one shared pool (threads are started as needed, never more than MAX_THREADS)."""
    from concurrent.futures import ThreadPoolExecutor

    if not _pool_holder:
        _pool_holder.append(ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="meld8-distance"))
    return _pool_holder[0]


def distance_batch(
    masks: np.ndarray,
    meld_masks: np.ndarray | None = None,
    unseen_masks: np.ndarray | None = None,
    threads: int | None = None,
) -> np.ndarray:
    """int8[B]: distance_to_win per hand; ``unseen_masks`` default to every card not held.

    With the C backend a batch of ``DISTANCE_SPLIT_MIN`` hands or more is split over two threads
    (``threads=`` overrides; results do not depend on it).
    """
    h = _as_masks(masks, None, "masks")
    m = _as_masks(meld_masks, h.shape[0], "meld_masks")
    u = _as_masks(unseen_masks, h.shape[0], "unseen_masks")
    check_hands("distance", h, m)
    if u is not None:
        check_card_sets("unseen_masks", u)
    out = np.zeros(h.shape[0], np.int8)
    if BACKEND == "c":

        def part(sl: slice) -> None:
            native_module().distance_batch(h[sl], None if m is None else m[sl], None if u is None else u[sl], out[sl])

        _run_parts(part, h.shape[0], threads)
    else:
        full = (1 << 53) - 1
        for i, x in enumerate(h):
            mm = int(m[i]) if m is not None else 0
            uu = int(u[i]) if u is not None else full & ~(int(x) | mm)
            out[i] = _reference.distance(int(x), mm, uu)
    return out


def acceptance_batch(
    masks: np.ndarray,
    meld_masks: np.ndarray | None,
    unseen_masks: np.ndarray,
    pool_masks: np.ndarray,
    distances: np.ndarray,
    threads: int | None = None,
    exact_distances: bool = False,
) -> np.ndarray:
    """int8[B]: how many cards x of ``pool_masks`` (not held) bring each hand one step closer.

    x counts when ``distance(hand + x, meld, unseen - x) <= distance - 1``, ``distances`` being each
    hand's own distance (as ``distance_batch`` gives it). With ``pool = unseen`` this is the
    acceptance count of HAND_EVAL_NOTES.md. The C backend answers each x as a yes/no search, or, with
    ``exact_distances=True`` (the caller promises ``distances`` are the hands' exact distances), counts them
    all in one search over the best completions (the same count, several times faster; tested against the
    per-card search in ``tests/test_cbots.py``).
    """
    h = _as_masks(masks, None, "masks")
    n = h.shape[0]
    m = _as_masks(meld_masks, n, "meld_masks")
    u = _as_masks(unseen_masks, n, "unseen_masks")
    p = _as_masks(pool_masks, n, "pool_masks")
    if u is None or p is None:
        raise ValueError(f"acceptance_batch needs unseen_masks, pool_masks and distances of length {n}")
    d = exact_int(distances, "distances", np.int8, 0, 127)
    if d.shape != (n,):
        raise ValueError(f"acceptance_batch needs distances of length {n}, got {d.shape[0]}")
    check_hands("acceptance", h, m)
    check_card_sets("unseen_masks", u)
    check_card_sets("pool_masks", p)
    out = np.zeros(n, np.int8)
    if BACKEND == "c":
        fn = native_module().acceptance_onepass_batch if exact_distances else native_module().acceptance_batch

        def part(sl: slice) -> None:
            fn(h[sl], None if m is None else m[sl], u[sl], p[sl], d[sl], out[sl])

        _run_parts(part, n, threads)
    else:
        for i in range(n):
            hand, mm = int(h[i]), int(m[i]) if m is not None else 0
            pool = int(p[i]) & ~(hand | mm)
            while pool:
                x = pool & -pool
                pool ^= x
                out[i] += _reference.distance(hand | x, mm, int(u[i]) & ~x) <= int(d[i]) - 1
    return out
