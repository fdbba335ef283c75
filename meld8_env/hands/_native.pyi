"""Type stub of the C hand evaluator; the pure-Python twin with the same functions is _reference.py."""

from typing import Any

Reading = tuple[int, tuple[int, ...], int]

def is_win_form(hand: int, meld: int, /) -> bool: ...
def readings(hand: int, meld: int, /) -> list[Reading]: ...
def waits(hand: int, meld: int, /) -> int: ...
def distance(hand: int, meld: int, unseen: int, /) -> int: ...
def is_win_form_batch(hands: Any, melds: Any | None, out: Any, /) -> None: ...
def waits_batch(hands: Any, melds: Any | None, out: Any, /) -> None: ...
def distance_batch(hands: Any, melds: Any | None, unseen: Any | None, out: Any, /) -> None: ...
def score_batch(
    hands: Any,
    melds: Any | None,
    win_cards: Any,
    flags: Any,
    min_han: Any,
    dora: Any,
    furiten: Any | None,
    params: tuple[int, int, int, int, int, int, int],
    reason: Any,
    han: Any,
    yakuman: Any,
    points: Any,
    yaku_han: Any,
    /,
) -> None: ...
def count_all(k: int, /) -> dict[str, int]: ...
