"""Engine state as a value: caller-owned records started, checked, refreshed, stepped and observed.

Search clones positions, edits hidden cards and steps many of them at once; a fixed ``FastBatch``
gets in its way. These functions take any C-contiguous array of records (dtype
:data:`~meld8_env.engine.fast.STATE_DTYPE`, shape ``(N,)``, any N) and the rules, and touch nothing else:

- :func:`start_records` ``(rules, seeds uint64 (N,)) -> records (N,)``: new games, as ``FastBatch.reset``.
- :func:`step_records` ``(rules, records, actions int64 (N,)) -> illegal bool (N,)``: steps in place
  (-1 holds a game still); the records are checked first (:func:`check_conservation`).
- :func:`observe_records` ``(rules, records, seats int8 (N,)) -> (obs uint8 (N, D), masks bool (N, 64))``.
- :func:`check_conservation` ``(records, rules)``: ValueError in one line naming the record index and
  what is wrong (the card in R4 notation, the seat) unless every live record has each of the 53 cards
  exactly once across hands, melds, uncalled discards and the undrawn wall (a called discard counts
  once, in the caller's meld), 7 cards per seat (8 for the seat that drew or just called, R10/R11/R19),
  and a claim window and legal mask that match its hands.
- :func:`take_records` ``(records, index) -> records`` and :func:`put_records` ``(records, index, values)``:
  ``records[index]`` and ``records[index] = values``, copied as whole records (numpy copies the padded struct
  field by field, ~15x slower; the search copies worlds on every decision).
- :func:`waits_records` ``(rules, records) -> waits uint64 (N, P)``: each seat's waits, as
  ``FastBatch.waits`` (computed from the hands; records carry no wait table).
- :func:`refresh` ``(records, rules)``: recompute those caches after an edit. A claim window is rebuilt
  as the discard would open it with the hands now (every eligible seat asked again, earlier answers
  forgotten: R22 gives a seat no sight of them); if nobody is eligible any more the game goes on as
  the engine would (the next seat draws, or the final discard ends the round in a draw, R14).

The checks run in C (``_fast.check_cards``, GIL released); a record never reaches ``step`` unchecked,
so an edited record is refused until refreshed, never played inconsistently.
"""

from __future__ import annotations

import functools

import numpy as np

from meld8_env.actions import as_action_array
from meld8_env.engine import _fast
from meld8_env.engine.fast import STATE_DTYPE, pack_rules
from meld8_env.rules import RuleConfig

__all__ = [
    "check_conservation",
    "check_ranges",
    "concat_records",
    "observe_records",
    "put_records",
    "refresh",
    "start_records",
    "step_records",
    "take_records",
    "waits_records",
]


@functools.cache
def packed(rules: RuleConfig, reward: str = "points") -> bytes:
    """The rules as the C engine reads them (packed once per rule set)."""
    return pack_rules(rules, reward)


def _records(records: np.ndarray, what: str) -> np.ndarray:
    if not isinstance(records, np.ndarray) or records.dtype != STATE_DTYPE or records.ndim != 1:
        got = type(records).__name__
        if isinstance(records, np.ndarray):
            got = f"dtype {records.dtype}, shape {records.shape}"
        raise TypeError(f"{what} takes a 1-d array of engine records (dtype STATE_DTYPE), got {got[:120]}")
    if not records.flags.c_contiguous:
        raise ValueError(f"{what}: the records must be C-contiguous (np.ascontiguousarray makes a copy)")
    return records


_RAW = np.dtype((np.void, STATE_DTYPE.itemsize))
"""A record as one opaque item: numpy copies a struct with padding field by field (56 fields), about 15x slower
than copying it whole, so the copying helpers below move records as raw items."""


def concat_records(parts: list[np.ndarray]) -> np.ndarray:
    """Records of several arrays in one (``np.concatenate`` would drop the struct's padding: a new dtype)."""
    if not parts:
        return np.zeros(0, STATE_DTYPE)
    # each part checked before the raw view: any other dtype of a matching byte length would become garbage
    raw = [_records(np.ascontiguousarray(p), f"concat_records (part {i})").view(_RAW) for i, p in enumerate(parts)]
    return np.concatenate(raw).view(STATE_DTYPE)


def take_records(records: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``records[index]`` for an integer or boolean index array: a new C-contiguous array, copied whole.

    Slices and scalars are refused (as ``records[index]`` they would be a view or a single record, not a copy).
    """
    if (
        not isinstance(index, np.ndarray)
        or index.ndim != 1
        or not (np.issubdtype(index.dtype, np.integer) or index.dtype == np.bool_)
    ):
        got = f"dtype {index.dtype}, shape {index.shape}" if isinstance(index, np.ndarray) else type(index).__name__
        raise TypeError(f"take_records takes a 1-d integer or boolean index array, got {got[:80]}")
    return _records(records, "take_records").view(_RAW)[index].view(STATE_DTYPE)


def put_records(records: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    """``records[index] = values``, in place, copied whole."""
    _records(records, "put_records").view(_RAW)[index] = _records(values, "put_records").view(_RAW)


def start_records(rules: RuleConfig, seeds: np.ndarray) -> np.ndarray:
    """New games, one per seed: records (N,) ready to step."""
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    if seeds.ndim != 1:
        raise ValueError(f"seeds must be a 1-d array, got shape {seeds.shape}")
    records = np.zeros(seeds.shape[0], STATE_DTYPE)
    _fast.reset(records, packed(rules), seeds)
    return records


def check_ranges(records: np.ndarray, rules: RuleConfig) -> None:
    """Raise ValueError naming the first record with a field the C engine would index out of bounds with, or a score
    no game under ``rules`` reaches (the numpy twin: ``fast.check_records``); cheaper than :func:`check_conservation`,
    which adds the cards and caches."""
    bad = _fast.check_cards(records, packed(rules), False)
    if bad is not None:
        raise ValueError(f"engine record {bad[0]}: {bad[1]}")


def check_conservation(records: np.ndarray, rules: RuleConfig) -> None:
    """Raise ValueError naming the first record whose fields, cards or caches are wrong (module docstring)."""
    records = _records(records, "check_conservation")
    bad = _fast.check_cards(records, packed(rules))
    if bad is not None:
        raise ValueError(f"engine record {bad[0]}: {bad[1]}")


def refresh(records: np.ndarray, rules: RuleConfig) -> None:
    """Recompute the claim window and legal mask of every live record from its hands, in place."""
    records = _records(records, "refresh")
    check_ranges(records, rules)
    _fast.refresh(records, packed(rules))


def step_records(rules: RuleConfig, records: np.ndarray, actions: np.ndarray, reward: str = "points") -> np.ndarray:
    """Check, then apply one action per record in place (-1 holds it still); True where an action was refused."""
    records = _records(records, "step_records")
    actions = as_action_array(actions, records.shape[0])
    check_conservation(records, rules)
    illegal = np.zeros(records.shape[0], np.uint8)
    _fast.step(records, packed(rules, reward), actions, illegal)
    return illegal.view(bool)


def waits_records(rules: RuleConfig, records: np.ndarray) -> np.ndarray:
    """uint64 (N, P): each seat's waits (R33: the cards that would complete a win form, yaku ignored), as
    ``FastBatch.waits``: the drawer's of its hand before the draw, 0 for the seat holding 8 cards after a
    call and for finished games."""
    records = _records(records, "waits_records")
    check_ranges(records, rules)
    out = np.zeros((records.shape[0], rules.num_players), np.uint64)
    _fast.waits(records, packed(rules), out)
    return out


def observe_records(
    rules: RuleConfig, records: np.ndarray, seats: np.ndarray | None = None, oracle: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Observations (N, D) uint8 and masks (N, 64) bool of ``seats`` (-1 or None: the acting seat)."""
    records = _records(records, "observe_records")
    check_ranges(records, rules)
    n = records.shape[0]
    s = np.full(n, -1, np.int8) if seats is None else np.ascontiguousarray(seats, dtype=np.int8)
    if s.shape != (n,):
        raise ValueError(f"seats must have shape ({n},), got {s.shape}")
    if ((s < -1) | (s >= rules.num_players)).any():
        raise ValueError(f"seats must be -1 (the acting seat) or 0..{rules.num_players - 1}")
    p = packed(rules)
    obs = np.zeros((n, _fast.obs_size(p, oracle)), np.uint8)
    masks = np.zeros((n, 64), np.uint8)
    _fast.observe(records, p, s, oracle, obs, masks)
    return obs, masks.view(bool)
