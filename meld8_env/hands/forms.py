"""Shared constants of the hand evaluator: form codes, reading tuples and group helpers.

A *reading* (R28) is ``(form, groups, joker_as)``:
- ``form``: one of the ``FORM_*`` codes below (R26),
- ``groups``: tuple of 53-bit masks of the concealed groups (the Joker is bit 52 inside its group;
  a straight is one 8-card group), sorted ascending; the exposed meld is not among them,
- ``joker_as``: the card id the Joker stands for, or -1 without a Joker (R27).
Both backends return the same readings; the public API sorts them into canonical order.
"""

from __future__ import annotations

FORM_STANDARD = 0
FORM_FOUR_PAIRS = 1
FORM_TWO_QUADS = 2
FORM_PURE_STRAIGHT = 3
FORM_ROYAL_STRAIGHT = 4
FORM_CROWN_PAIRS = 5
FORM_NAMES = (
    "standard",
    "four_pairs",
    "two_quads",
    "pure_straight",
    "royal_straight",
    "four_crown_pairs",
)

UNREACHABLE = 99
"""distance_to_win when no winning hand can be reached with the unseen cards."""

Reading = tuple[int, tuple[int, ...], int]
