"""Cards, ids and the R4 text notation.

Contract (docs/rules.md R1-R5):
- 53 cards: ids 0..51 are the standard cards, ``id = suit * 13 + (rank - 1)`` with suits
  ordered s, h, d, c and A = 1 ... K = 13 (so ``As = 0``, ``Ks = 12``, ``Ah = 13``, ``Kc = 51``);
  the Joker is ``52``.
- Notation: rank ``A 2 3 4 5 6 7 8 9 T J Q K`` (``10`` accepted on input), suit ``s h d c``
  (``♠ ♥ ♦ ♣`` accepted on input), Joker ``JK``. ``format_cards(parse_cards(s))`` is canonical.
- A hand is also handled as a 53-bit mask (``uint64``, bit = card id), the form the C evaluator uses.
Bad input raises :class:`CardError` naming the offending token and what would be right.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

JOKER = 52
NUM_CARDS = 53
NUM_RANKS = 13
NUM_SUITS = 4
SUITS = "shdc"
RANKS = "A23456789TJQK"
RED_SUITS = (1, 2)  # hearts, diamonds (R2)
CROWN_RANKS = (1, 11, 12, 13)  # A, J, Q, K (R3)
ALL_MASK = (1 << NUM_CARDS) - 1
REAL_MASK = (1 << JOKER) - 1

_SUIT_ALIASES = {"s": 0, "h": 1, "d": 2, "c": 3, "♠": 0, "♥": 1, "♦": 2, "♣": 3}
_RANK_ALIASES = {ch: i + 1 for i, ch in enumerate(RANKS)} | {"10": 10}


class CardError(ValueError):
    """Bad card input: unknown token, duplicate card or wrong count."""


def card_id(rank: int, suit: int) -> int:
    """Id of the card with ``rank`` 1..13 (A..K) and ``suit`` 0..3 (s, h, d, c) (R5)."""
    return suit * NUM_RANKS + (rank - 1)


def rank_of(card: int) -> int:
    """Rank 1..13 of a standard card (R5)."""
    return card % NUM_RANKS + 1


def suit_of(card: int) -> int:
    """Suit index 0..3 of a standard card (R5)."""
    return card // NUM_RANKS


def is_red(card: int) -> bool:
    return suit_of(card) in RED_SUITS


def card_str(card: int) -> str:
    """R4 notation of one card id."""
    if card == JOKER:
        return "JK"
    if not 0 <= card < JOKER:
        raise CardError(f"card id {card} out of range 0..52")
    return RANKS[card % NUM_RANKS] + SUITS[card // NUM_RANKS]


def parse_card(token: str, position: int | None = None) -> int:
    """Parse one R4 token (``'Th'``, ``'10♥'``, ``'JK'``) into a card id."""
    where = f" at position {position}" if position is not None else ""
    tok = token.strip()
    if tok.upper() == "JK":
        return JOKER
    if len(tok) >= 2:
        rank = _RANK_ALIASES.get(tok[:-1].upper())
        suit = _SUIT_ALIASES.get(tok[-1].lower())
        if rank is not None and suit is not None:
            return card_id(rank, suit)
    raise CardError(f"unknown card {tok!r}{where}: expected rank A 2-9 T/10 J Q K + suit s h d c, or JK")


def as_card(item: object, what: str | None = None, position: int | None = None) -> int:
    """One card given as an R4 token or an id 0..52 (a Python or numpy integer). Floats and bools are no card
    ids: ``int()`` read 1.9 as card 1 and True as card 1, and numpy's 44 failed inside ``str.strip``."""
    head = f"{what}: " if what else ""
    where = f" at position {position}" if position is not None else ""
    if isinstance(item, str):
        try:
            return parse_card(item, position)
        except CardError as exc:
            raise CardError(head + str(exc)) from None
    try:
        c = None if isinstance(item, bool) else operator.index(item)
    except TypeError:
        c = None
    if c is None:
        raise CardError(f"{head}unknown card {item!r}{where}: give an R4 token such as '9c' or an integer id 0..52")
    if not 0 <= c < NUM_CARDS:
        raise CardError(f"{head}unknown card id {c}{where}: ids are 0..52")
    return c


def parse_cards(text: str | Iterable[int | str], count: int | None = None, what: str | None = None) -> list[int]:
    """Parse cards given as R4 text, or as an iterable of ids / tokens; reject duplicates.

    ``count`` (optional) is the exact number of cards required; ``what`` (optional) names the argument in errors.
    """
    try:
        return _parse_cards(text, count)
    except CardError as exc:
        if what is None:
            raise
        raise CardError(f"{what}: {exc}") from None


def _parse_cards(text: str | Iterable[int | str], count: int | None) -> list[int]:
    if isinstance(text, str):
        items: list[object] = list(text.replace(",", " ").split())
    elif isinstance(text, Iterable) and not isinstance(text, bytes | bytearray):
        items = list(text)
    else:
        raise CardError(f"cards must be R4 text or a list of card ids or tokens, got {type(text).__name__}")
    cards: list[int] = []
    seen: set[int] = set()
    for pos, item in enumerate(items, start=1):
        c = as_card(item, position=pos)
        if c in seen:
            raise CardError(f"duplicate card {card_str(c)}")
        seen.add(c)
        cards.append(c)
    if count is not None and len(cards) != count:
        raise CardError(f"expected {count} cards, got {len(cards)}")
    return cards


def format_cards(cards: Iterable[int], sort: bool = False) -> str:
    """R4 notation of several cards, space separated (in the given order unless ``sort``)."""
    seq = sorted(cards) if sort else list(cards)
    return " ".join(card_str(c) for c in seq)


def to_mask(cards: Iterable[int]) -> int:
    """53-bit mask of card ids (duplicates are an error)."""
    mask = 0
    for c in cards:
        bit = 1 << int(c)
        if mask & bit:
            raise CardError(f"duplicate card {card_str(int(c))}")
        mask |= bit
    return mask


def from_mask(mask: int) -> list[int]:
    """Card ids in a 53-bit mask, ascending."""
    out = []
    m = int(mask)
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def mask_str(mask: int) -> str:
    return format_cards(from_mask(mask))


def popcount(mask: int) -> int:
    return int(mask).bit_count()
