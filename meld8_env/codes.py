"""The engine's codes, named once: phases, hand results, win flags and the sizes the C engine shares.

These values are also compiled into the C engine (``meld8_env/engine/_engine.h``); the engine exports
its copies (``constants()`` of the ``_fast`` extension) and :func:`check_native_constants` compares the two sides when
``meld8_env.engine.fast`` is imported, so a change on one side only refuses to import. Action ids live
in ``meld8_env.actions`` and are checked the same way.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from meld8_env import actions as A

HAND_SIZE = 7
"""Cards dealt to each player (R10)."""
N_CARDS = 53
"""52 playing cards and the Joker (id 52, R1)."""
MAX_PLAYERS = 3
MAX_DISCARDS = 24
"""Discard slots per seat in the engine state and the observation."""


class _Code(enum.IntEnum):
    @property
    def label(self) -> str:
        """The lower-case name used in messages and JSON (``"call_discard"``, ``"ron"``)."""
        return self.name.lower()


class Phase(_Code):
    """What the acting seat is asked for (the engine's ``phase``)."""

    DRAW = 0  # holds 8 cards after a draw: Tsumo or discard (R11)
    CALL_DISCARD = 1  # just called: must discard (R19, R20)
    CLAIM = 2  # a discard is under claim: Ron / Pon / Chii / pass (R21, R22)
    OVER = 3  # the game has ended


class Result(_Code):
    """How the last step ended a hand (``NONE``: it did not)."""

    NONE = 0
    RON = 1
    TSUMO = 2
    DRAW = 3  # exhausted wall (R39)
    CHOMBO = 4  # false win in penalty mode (R41)


class WinFlag(enum.IntFlag):
    """Circumstances of a win, as the scorer takes them."""

    TSUMO = 1
    DEALER = 2
    FIRST_DRAW = 4  # Tenhou / Chiihou (R36)
    LAST_CARD = 8  # Haitei (§7)


PHASE_NAMES = tuple(p.label for p in Phase)
RESULT_NAMES = tuple(r.label for r in Result)


def python_constants() -> dict[str, int]:
    """Every shared code under the names the C engine exports them."""
    out = {"MAX_PLAYERS": MAX_PLAYERS, "MAX_DISCARDS": MAX_DISCARDS, "HAND_SIZE": HAND_SIZE, "N_CARDS": N_CARDS}
    out.update({f"PHASE_{p.name}": int(p) for p in Phase})
    out.update({f"RESULT_{r.name}": int(r) for r in Result})
    out.update({f"FLAG_{f.name}": int(f) for f in WinFlag})
    out.update(
        ACTION_TSUMO=A.TSUMO,
        ACTION_RON=A.RON,
        ACTION_PON_BASE=A.PON_BASE,
        ACTION_CHII_LOW=A.CHII_LOW,
        ACTION_CHII_MID=A.CHII_MID,
        ACTION_CHII_HIGH=A.CHII_HIGH,
        ACTION_PASS=A.PASS,
        N_CALL_ACTIONS=A.N_CALL_ACTIONS,
    )
    return out


def constant_mismatches(native: Mapping[str, int], python: Mapping[str, int] | None = None) -> list[str]:
    """Lines naming each code that differs between the C engine's ``native`` and the Python side."""
    python = python_constants() if python is None else python
    out = []
    for name in sorted(set(native) | set(python)):
        a, b = native.get(name), python.get(name)
        if a != b:
            out.append(f"{name}: C has {a}, Python has {b}")
    return out


def check_native_constants(native: Mapping[str, int]) -> None:
    """Raise ImportError listing every code that the C engine and the Python side define differently."""
    bad = constant_mismatches(native)
    if bad:
        raise ImportError("meld8: the C engine and the Python definitions disagree (rebuild?): " + "; ".join(bad))
