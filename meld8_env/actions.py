"""The action space: one flat ``Discrete(64)``, shared by the engine, masks, docs and agents.

| ids     | action                                                                 |
|---------|------------------------------------------------------------------------|
| 0-51    | discard the card with that id (R11; never the Joker, R12)              |
| 52      | Tsumo: declare a win on your own draw (R29)                            |
| 53      | Ron: declare a win on the discard under claim (R29)                    |
| 54-59   | Pon with the two hand cards of suits (s,h) (s,d) (s,c) (h,d) (h,c) (d,c) (R15) |
| 60-62   | Chii with the discard as the low / middle / high card of the sequence (R16) |
| 63      | pass (decline every claim, R22)                                        |
"""

from __future__ import annotations

import numpy as np

from meld8_env.cards import card_str

NUM_ACTIONS = 64
DISCARD_MAX = 51
TSUMO = 52
RON = 53
PON_BASE = 54
PON_SUIT_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
CHII_BASE = 60
CHII_LOW, CHII_MID, CHII_HIGH = 60, 61, 62
PASS = 63
N_CALL_ACTIONS = PASS - PON_BASE  # Pon and Chii ids

_SUIT = "shdc"


def pon_action(suit_a: int, suit_b: int) -> int:
    """Action id of a Pon using hand cards of the two suits (order-free)."""
    return PON_BASE + PON_SUIT_PAIRS.index((min(suit_a, suit_b), max(suit_a, suit_b)))


def action_name(action: int) -> str:
    """Readable name of an action id, e.g. ``discard 7h``, ``pon (s,d)``, ``chii low``."""
    if 0 <= action <= DISCARD_MAX:
        return f"discard {card_str(action)}"
    if action == TSUMO:
        return "tsumo"
    if action == RON:
        return "ron"
    if PON_BASE <= action < CHII_BASE:
        a, b = PON_SUIT_PAIRS[action - PON_BASE]
        return f"pon ({_SUIT[a]},{_SUIT[b]})"
    if CHII_BASE <= action < PASS:
        return "chii " + ("low", "middle", "high")[action - CHII_BASE]
    if action == PASS:
        return "pass"
    raise ValueError(f"action must be 0..{NUM_ACTIONS - 1}, got {action}")


def legal_ids(mask: int) -> list[int]:
    """The action ids set in a 64-bit legal-action mask."""
    out = []
    mask = int(mask) & ((1 << NUM_ACTIONS) - 1)
    while mask:  # one pass per set bit: a mask holds about eight legal actions of 64
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class IllegalActionError(ValueError):
    """An action that is not legal now (default mode, R43), or no action id at all. Nothing changed."""


def is_action_id(action: object) -> bool:
    """An integer 0..63 (Python or numpy int; not a bool, float or string)."""
    return isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)) and 0 <= action < 64


def unwrap_action(action: object) -> object:
    """A 0-d integer array as its scalar (what SB3's ``predict`` and RLlib's modules hand an env for one
    ``Discrete`` action, and what ``Discrete.contains`` accepts); anything else unchanged, for
    :func:`is_action_id` to judge (red team, session 37: a legal action given so was penalised as illegal)."""
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return action[()]
    return action


def illegal_action_message(action: object, who: str, phase: str, legal: list[int]) -> str:
    """The one wording of an illegal-action error, listing the legal actions (every face uses it)."""
    if is_action_id(action):
        name = action_name(int(action))  # type: ignore[call-overload]
    elif isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        name = f"out of range 0..{NUM_ACTIONS - 1}"
    else:
        name = f"not an action id: a {type(action).__name__}, expected an integer 0..{NUM_ACTIONS - 1}"
    listed = ", ".join(f"{a} ({action_name(a)})" for a in legal) or "none (the game is over)"
    shown = action if isinstance(action, (int, np.integer)) else repr(action)
    return f"illegal action {shown} ({name}) for {who} in phase {phase}; legal: {listed}"


def as_action_array(actions: object, n: int, hold: bool = True) -> np.ndarray:
    """Actions for a batch of ``n`` games as int64, refusing anything that is not exactly an action id
    (floats, booleans, values outside 0..63; -1 "hold this game still" where ``hold``)."""
    arr = np.asarray(actions)
    lo = -1 if hold else 0
    if arr.dtype.kind not in "iu":
        raise IllegalActionError(f"actions must be integers {lo}..{NUM_ACTIONS - 1}, got dtype {arr.dtype}")
    if arr.shape != (n,):
        raise ValueError(f"actions must have shape ({n},), one per game, got shape {arr.shape}")
    if arr.size:
        bad = (arr > NUM_ACTIONS - 1) | ((arr < lo) if arr.dtype.kind == "i" else False)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            what = "an action id 0..63" + (" or -1 (hold the game still)" if hold else "")
            raise IllegalActionError(f"game {i}: action {arr[i]} is not {what}")
    return np.ascontiguousarray(arr, dtype=np.int64)
