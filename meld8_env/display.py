"""Words for players: card glyphs, yaku and bonus display names, actions as sentences.

One table of names shared by every face that talks to a person (the browser table, ``meld8 score``);
the engine, the logs and the seat protocol keep the ids of ``meld8_env.scoring`` and the R4 notation.

- :func:`card_glyph`: ``"Ah"`` -> ``"A♥"``, ``"Td"`` -> ``"10♦"``, ``"JK"`` -> ``"Joker"`` (R4).
- :data:`YAKU_NAMES` / :func:`yaku_name`: every id of ``scoring.YAKU_IDS`` -> its name in docs/rules.md §7.
- :data:`BONUS_NAMES` / :func:`bonus_name`: the han bonuses (R34-R36), which are not yaku.
- :func:`action_words`: an action id as a player says it, with the cards it uses when a claim card is
  known: ``Pon A♥ with A♠ A♦``, ``Chii 5♥ with 6♥ 7♥``, ``Ron on 7♠``, ``Discard 7♠`` (R11-R29).
"""

from __future__ import annotations

from meld8_env.actions import CHII_BASE, DISCARD_MAX, PASS, PON_BASE, RON, TSUMO, action_name
from meld8_env.calls import call_pair
from meld8_env.cards import card_str, from_mask, parse_card

SUIT_GLYPHS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}

YAKU_NAMES = {
    "closed_tsumo": "Closed Tsumo",
    "value_triplet": "Value Triplet",
    "tanyao": "Tanyao (all simples)",
    "four_pairs": "Four Pairs",
    "haitei": "Haitei (last card)",
    "all_red": "All Red",
    "all_black": "All Black",
    "toitoi": "Toitoi (two triplets)",
    "chanta": "Chanta",
    "identical_sequences": "Identical Sequences",
    "pinfu": "Pinfu",
    "jun_chanta": "Jun Chanta",
    "tenhou": "Tenhou (dealer's first draw)",
    "chiihou": "Chiihou (first draw)",
    "two_quads": "Two Quads",
    "pure_straight": "Pure Straight",
    "royal_straight": "Royal Straight (yakuman)",
    "four_crown_pairs": "Four Crown Pairs (yakuman)",
    "counted_yakuman": "Counted Yakuman",
}
BONUS_NAMES = {"sequence": "Sequence bonus", "dora": "Dora", "dealer": "Dealer bonus"}


def card_glyph(card: str) -> str:
    """One card in R4 notation as a player reads it: rank and suit symbol, ``10`` for T, ``Joker``."""
    if card.upper() == "JK":
        return "Joker"
    rank = "10" if card[0] == "T" else card[0]
    return rank + SUIT_GLYPHS.get(card[-1], card[-1])


def cards_glyphs(cards: str | list[str]) -> str:
    """Several cards (a space-separated R4 string or a list) as glyphs, space-separated."""
    items = cards.split() if isinstance(cards, str) else cards
    return " ".join(card_glyph(c) for c in items)


def yaku_name(yaku_id: str) -> str:
    """The display name of a yaku id; an unknown id is shown as itself with spaces (never an error)."""
    return YAKU_NAMES.get(yaku_id, yaku_id.replace("_", " ").title())


def bonus_name(bonus_id: str) -> str:
    """The display name of a han bonus (``sequence``, ``dora``, ``dealer``)."""
    return BONUS_NAMES.get(bonus_id, bonus_id.replace("_", " ").title() + " bonus")


def action_words(action: int, claim_card: str | None = None) -> str:
    """An action as a sentence fragment for a player. With ``claim_card`` (the discard under claim,
    R4 notation) a Pon or Chii names the two hand cards it uses (``meld8_env.calls.call_pair``)."""
    if 0 <= action <= DISCARD_MAX:
        return "Discard " + card_glyph(action_name(action).split()[1])
    if action == TSUMO:
        return "Tsumo"
    if action == RON:
        return "Ron" + (f" on {card_glyph(claim_card)}" if claim_card else "")
    if action == PASS:
        return "Pass"
    kind = "Pon" if PON_BASE <= action < CHII_BASE else "Chii"
    if claim_card is None or claim_card.upper() == "JK":
        return kind + " " + action_name(action).split(" ", 1)[1]
    pair = from_mask(call_pair(action, parse_card(claim_card)))
    if not pair:  # a shape that cannot exist (the page is only offered legal actions)
        return f"{kind} {card_glyph(claim_card)}"
    return f"{kind} {card_glyph(claim_card)} with {cards_glyphs([card_str(c) for c in pair])}"


__all__ = [
    "BONUS_NAMES",
    "SUIT_GLYPHS",
    "YAKU_NAMES",
    "action_words",
    "bonus_name",
    "card_glyph",
    "cards_glyphs",
    "yaku_name",
]
