"""Scoring a winning hand (docs/rules.md R26-R38): yaku, reductions, bonuses, points, payments.

``score_hand(concealed, win_card, ...)`` returns a :class:`ScoreResult`. The best reading is chosen
over every decomposition and Joker stand-in (R28): highest yakuman multiplier, then total han,
then standard-yaku han (rule ``reading_tiebreak``), then the first reading in canonical order.
Only readings that satisfy the win conditions (standard yaku >= 1 and >= the round minimum, R30)
compete. ``score_batch`` is the C scorer over arrays; it gives the same numbers.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from meld8_env.cards import (
    JOKER,
    CardError,
    as_card,
    card_str,
    format_cards,
    from_mask,
    parse_cards,
    rank_of,
    suit_of,
    to_mask,
)
from meld8_env.config_io import check_flag, check_int
from meld8_env.hands import backend, native_module, readings_of_masks, relaxed_joker_standard, waits_of_masks
from meld8_env.hands.contract import (
    CARD_BITS,
    check_card_sets,
    check_hands,
    check_mask_args,
    exact_int,
    exact_mask,
    exact_uint64,
    parse_meld,
)
from meld8_env.hands.forms import (
    FORM_CROWN_PAIRS,
    FORM_FOUR_PAIRS,
    FORM_NAMES,
    FORM_PURE_STRAIGHT,
    FORM_ROYAL_STRAIGHT,
    FORM_STANDARD,
    FORM_TWO_QUADS,
    Reading,
)
from meld8_env.rules import DEFAULT_RULES, YAKU_HAN, RuleConfig

YAKU_IDS = (
    "closed_tsumo",
    "value_triplet",
    "tanyao",
    "four_pairs",
    "haitei",
    "all_red",
    "all_black",
    "toitoi",
    "chanta",
    "identical_sequences",
    "pinfu",
    "jun_chanta",
    "tenhou",
    "chiihou",
    "two_quads",
    "pure_straight",
    "royal_straight",
    "four_crown_pairs",
    "counted_yakuman",
)
REASONS = ("", "no_form", "illegal_joker", "furiten", "no_yaku", "below_minimum")
REASON_TEXT = {
    "no_form": "no winning form: the 8 cards make none of the forms of R26",
    "illegal_joker": "illegal joker: the Joker only stands for a missing card of a sequence, triplet, quad or pure "
    "straight - a pair never contains it - and a hand holding it must win with such a form (R25, R27)",
    "furiten": "furiten: a card this hand waits on is in its own discards, so it cannot Ron (R33)",
    "no_yaku": "no standard yaku: dora and the bonuses do not make a win (R26, section 7)",
    "below_minimum": "below the round minimum of standard-yaku han (R30)",
}
"""Why a hand does not win, in words, with the rule that says so (``meld8 score`` prints these)."""
# Yaku that lose 1 han with a call or with the Joker (R32, §7 table).
REDUCIBLE = frozenset(
    (
        "all_red",
        "all_black",
        "toitoi",
        "chanta",
        "identical_sequences",
        "pinfu",
        "jun_chanta",
        "two_quads",
        "pure_straight",
    )
)
CROWN = {1, 11, 12, 13}
FLAG_TSUMO, FLAG_DEALER, FLAG_FIRST_DRAW, FLAG_LAST_CARD = 1, 2, 4, 8


@dataclasses.dataclass(frozen=True)
class ScoreResult:
    """Outcome of a win declaration. ``win`` False carries ``reason`` (see REASONS)."""

    win: bool
    reason: str = ""
    form: str = ""
    groups: tuple[tuple[int, ...], ...] = ()
    meld: tuple[int, ...] = ()
    joker_as: int | None = None
    yaku: tuple[tuple[str, int], ...] = ()
    reductions: tuple[str, ...] = ()
    bonuses: dict[str, int] = dataclasses.field(default_factory=dict)
    yaku_han: int = 0
    han: int = 0
    yakuman: int = 0
    points: int = 0
    payments: dict[str, int] = dataclasses.field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "win": self.win,
            "reason": self.reason or None,
            "form": self.form or None,
            "groups": [[card_str(c) for c in g] for g in self.groups],
            "meld": [card_str(c) for c in self.meld] or None,
            "joker_as": card_str(self.joker_as) if self.joker_as is not None else None,
            "yaku": [{"id": y, "han": h, "reduced": y in self.reductions} for y, h in self.yaku],
            "bonuses": dict(self.bonuses),
            "yaku_han": self.yaku_han,
            "han": self.han,
            "yakuman": self.yakuman,
            "points": self.points,
            "payments": dict(self.payments),
        }


@dataclasses.dataclass(frozen=True)
class _Context:
    tsumo: bool
    dealer: bool
    first_draw: bool
    last_card: bool
    dora: int  # the dora card id (R35), -1 without an indicator
    rules: RuleConfig


def dora_of(indicator: int) -> int:
    """R35: the next rank of the indicator's suit, K wrapping to A."""
    return suit_of(indicator) * 13 + rank_of(indicator) % 13


def _resolve(group: int, joker_as: int) -> list[int]:
    cards = [c for c in range(52) if group >> c & 1]
    if group >> JOKER & 1:
        cards.append(joker_as)
    return sorted(cards)


def _is_triplet(cards: Sequence[int]) -> bool:
    return len(cards) == 3 and len({rank_of(c) for c in cards}) == 1


def _is_sequence(cards: Sequence[int]) -> bool:
    return len(cards) == 3 and len({rank_of(c) for c in cards}) == 3


def _evaluate(reading: Reading, meld: int, win_card: int, ctx: _Context) -> dict[str, Any]:
    """Yaku, bonuses and han of one reading (§7, R31, R32, R34-R37)."""
    form, groups, joker_as = reading
    rules = ctx.rules
    called = meld != 0
    has_joker = joker_as >= 0
    resolved = [_resolve(g, joker_as) for g in groups]
    raw = list(groups)
    if called:
        resolved.append(_resolve(meld, -1))
        raw.append(meld)
    cards8 = [c for g in resolved for c in g]
    if form == FORM_ROYAL_STRAIGHT:  # yakuman (ignore every other yaku and bonus)
        mult = 2 if suit_of(cards8[0]) == 0 else 1
        return _yakuman("royal_straight", mult, rules)
    if form == FORM_CROWN_PAIRS:
        one_colour = len({suit_of(c) in (1, 2) for c in cards8}) == 1
        mult = 2 if one_colour else 1
        return _yakuman("four_crown_pairs", mult, rules)

    triplets = [g for g, rg in zip(raw, resolved, strict=True) if _is_triplet(rg)]
    sequences = [(g, rg) for g, rg in zip(raw, resolved, strict=True) if _is_sequence(rg)]
    ranks_of = [{rank_of(c) for c in rg} for rg in resolved]
    yaku: list[tuple[str, int]] = []
    if ctx.tsumo and not called:
        yaku.append(("closed_tsumo", YAKU_HAN["closed_tsumo"]))
    value = sum(1 for g in triplets if rank_of(_resolve(g, joker_as)[0]) in CROWN and not g >> JOKER & 1)
    if value:
        yaku.append(("value_triplet", value * rules.value_triplet_han))
    if not called and all(2 <= rank_of(c) <= 10 for c in cards8):
        yaku.append(("tanyao", YAKU_HAN["tanyao"]))
    if form == FORM_FOUR_PAIRS:
        yaku.append(("four_pairs", YAKU_HAN["four_pairs"]))
    if ctx.last_card:
        yaku.append(("haitei", rules.haitei_han))
    if form != FORM_PURE_STRAIGHT:  # Pure Straight replaces All Red / All Black
        if all(suit_of(c) in (1, 2) for c in cards8):
            yaku.append(("all_red", YAKU_HAN["all_red"]))
        elif all(suit_of(c) in (0, 3) for c in cards8):
            yaku.append(("all_black", YAKU_HAN["all_black"]))
    if form == FORM_STANDARD and len(triplets) == 2:
        yaku.append(("toitoi", YAKU_HAN["toitoi"]))
    if form in (FORM_STANDARD, FORM_FOUR_PAIRS, FORM_TWO_QUADS):
        if all(rs <= CROWN for rs in ranks_of):
            yaku.append(("jun_chanta", YAKU_HAN["jun_chanta"]))
        elif all(rs & CROWN for rs in ranks_of):
            yaku.append(("chanta", YAKU_HAN["chanta"]))
    if len(sequences) == 2:
        (_, a), (_, b) = sequences
        if [rank_of(c) for c in a] == [rank_of(c) for c in b] and suit_of(a[0]) != suit_of(b[0]):
            yaku.append(("identical_sequences", YAKU_HAN["identical_sequences"]))
        if _two_sided(groups, joker_as, win_card):
            yaku.append(("pinfu", YAKU_HAN["pinfu"]))
    if ctx.tsumo and ctx.first_draw and not called:
        yaku.append(("tenhou", YAKU_HAN["tenhou"]) if ctx.dealer else ("chiihou", YAKU_HAN["chiihou"]))
    if form == FORM_TWO_QUADS:
        yaku.append(("two_quads", YAKU_HAN["two_quads"]))
    if form == FORM_PURE_STRAIGHT:
        yaku.append(("pure_straight", YAKU_HAN["pure_straight"]))

    reductions = []
    if called or has_joker:  # R32: -1 per reducible yaku, call and Joker do not stack
        for i, (name, han) in enumerate(yaku):
            if name in REDUCIBLE:
                yaku[i] = (name, han - 1)
                reductions.append(name)
    bonuses = {}
    n_seq = sum(1 for g, _ in sequences if not g >> JOKER & 1)
    if n_seq:
        bonuses["sequence"] = min(n_seq, rules.sequence_bonus_max)
    real = meld | sum(g & ~(1 << JOKER) for g in groups)
    if ctx.dora >= 0 and real >> ctx.dora & 1:
        bonuses["dora"] = 1  # only the real card: the Joker is never dora, whatever it stands for (R35)
    if ctx.dealer:
        bonuses["dealer"] = 1
    yaku_han = sum(h for _, h in yaku)
    total = yaku_han + sum(bonuses.values())
    counted = 1 if total >= rules.counted_yakuman_han else 0
    if counted:
        yaku.append(("counted_yakuman", 0))
    return {
        "yakuman": counted,
        "counted": bool(counted),
        "yaku": yaku,
        "reductions": reductions,
        "bonuses": bonuses,
        "yaku_han": yaku_han,
        "total": total,
    }


def _yakuman(name: str, mult: int, rules: RuleConfig) -> dict[str, Any]:
    """Yakuman ignore every other yaku, dora and bonus (§7); valued as counted_yakuman_han x mult."""
    han = rules.counted_yakuman_han * mult
    return {"yakuman": mult, "yaku": [(name, han)], "bonuses": {}, "yaku_han": 0, "total": han}


def _two_sided(groups: tuple[int, ...], joker_as: int, win_card: int) -> bool:
    """R31: the winning card's group is a sequence whose other two cards x, x+1 wait on both ends."""
    bit = 1 << win_card
    for g in groups:
        if g & bit:
            rg = _resolve(g, joker_as)
            if not _is_sequence(rg):
                return False
            target = joker_as if win_card == JOKER else win_card
            others = sorted(rank_of(c) for c in rg if c != target)
            x = others[0]
            return others[1] == x + 1 and x >= 2 and x + 1 <= 12
    return False


def _sort_key(ev: dict[str, Any], index: int, tiebreak: str) -> tuple:
    yaku_key = ev["yaku_han"] if tiebreak == "yaku_han" else 0
    return (-ev["yakuman"], -ev["total"], -yaku_key, index)


def _finish(ev: dict[str, Any], reading: Reading, meld: int, tsumo: bool, rules: RuleConfig) -> ScoreResult:
    form, groups, joker_as = reading
    if ev["yakuman"] and not ev.get("counted"):
        points, han = rules.yakuman_value * ev["yakuman"], rules.counted_yakuman_han * ev["yakuman"]
    elif ev.get("counted"):
        points, han = rules.yakuman_value, ev["total"]
    else:
        points, han = ev["total"] * rules.points_per_han, ev["total"]
    payments = {"each": points // 2} if tsumo else {"discarder": points}
    return ScoreResult(
        win=True,
        form=FORM_NAMES[form],
        groups=tuple(tuple(_resolve_display(g)) for g in groups),
        meld=tuple(_resolve_display(meld)) if meld else (),
        joker_as=joker_as if joker_as >= 0 else None,
        yaku=tuple(ev["yaku"]),
        reductions=tuple(ev.get("reductions", ())),
        bonuses=dict(ev["bonuses"]),
        yaku_han=ev["yaku_han"] if not (ev["yakuman"] and not ev.get("counted")) else 0,
        han=han,
        yakuman=ev["yakuman"],
        points=points,
        payments=payments,
    )


def _resolve_display(group: int) -> list[int]:
    return [c for c in range(53) if group >> c & 1]


def _fail(reason: str) -> ScoreResult:
    return ScoreResult(win=False, reason=reason)


def _illegal_joker(hand: int, meld: int) -> bool:
    """R27: the hand would win if the Joker could stand for any card, in any group."""
    if not hand >> JOKER & 1:
        return False
    base = hand & ~(1 << JOKER)
    held = (hand | meld) & ((1 << 52) - 1)
    if any(not held >> c & 1 and backend().is_win_form(base | 1 << c, meld) for c in range(52)):
        return True
    return relaxed_joker_standard(hand, meld)


def _check_rules(rules: object) -> None:
    if not isinstance(rules, RuleConfig):
        raise TypeError(f"rules must be a RuleConfig (RuleConfig.load reads names, files), got {type(rules).__name__}")


def score_masks(
    hand: int,
    meld: int,
    win_card: int,
    *,
    tsumo: bool,
    min_han: int,
    dealer: bool = False,
    dora: int = -1,
    first_draw: bool = False,
    last_card: bool = False,
    discards: int = 0,
    rules: RuleConfig = DEFAULT_RULES,
) -> ScoreResult:
    """Score on masks (the engine's entry point); see :func:`score_hand`. Checked as :func:`score_batch` checks its
    arrays: a winning card that is not in the hand was scored as if it were."""
    _check_rules(rules)
    hand, meld = check_mask_args("score", hand, meld)
    win_card = check_int(win_card, "win_card", 0, JOKER)
    if not hand >> win_card & 1:
        raise ValueError(f"win_card: the winning card {card_str(win_card)} is not in the hand")
    min_han = check_int(min_han, "min_han", 0, 127)
    dora = check_int(dora, "dora", -1, JOKER)
    discards = exact_mask(discards, "discards")
    if not 0 <= discards <= CARD_BITS:
        raise ValueError(f"discards: a card id outside 0..52 (mask {discards:#x})")
    tsumo, dealer = check_flag(tsumo, "tsumo"), check_flag(dealer, "dealer")
    first_draw, last_card = check_flag(first_draw, "first_draw"), check_flag(last_card, "last_card")
    reads = readings_of_masks(hand, meld)
    if not reads:
        return _fail("illegal_joker" if _illegal_joker(hand, meld) else "no_form")
    if not tsumo and discards and waits_of_masks(hand & ~(1 << win_card), meld) & discards:
        return _fail("furiten")  # R33
    ctx = _Context(tsumo, dealer, first_draw, last_card, dora, rules)
    evs = [(_evaluate(r, meld, win_card, ctx), i) for i, r in enumerate(reads)]
    valid = [(ev, i) for ev, i in evs if (ev["yakuman"] and not ev.get("counted")) or ev["yaku_han"] >= max(1, min_han)]
    if not valid:
        has_yaku = any(ev["yaku_han"] >= 1 for ev, _ in evs)
        return _fail("below_minimum" if has_yaku else "no_yaku")
    ev, i = min(valid, key=lambda t: _sort_key(t[0], t[1], rules.reading_tiebreak))
    return _finish(ev, reads[i], meld, tsumo, rules)


def score_hand(
    concealed: str | Iterable[int | str],
    win_card: int | str,
    *,
    meld: str | Iterable[int | str] | None = None,
    tsumo: bool,
    round: int = 1,
    dealer: bool = False,
    dora_indicator: int | str | None = None,
    first_draw: bool = False,
    last_card: bool = False,
    discards: str | Iterable[int | str] = (),
    rules: RuleConfig = DEFAULT_RULES,
) -> ScoreResult:
    """Score a win declaration.

    ``concealed``: the concealed cards including the winning card (8, or 5 with ``meld``);
    ``meld``: the exposed called meld (3 cards); ``discards``: the winner's own discard history
    still in front of them (R33, only matters for Ron); ``round``: 1-based (R30 minimum).
    A declaration that cannot happen is a :class:`CardError` naming the rule: a card both held and discarded (R1),
    a dora indicator the winner holds, drew, called or (not being the dealer) discarded (R18, R35), a first-draw win
    by Ron, after a call or discard, or on a last card this rule config's wall never makes one (R11, R14).
    """
    _check_rules(rules)
    # the switches this function reads itself (score_masks checks them all again)
    tsumo, dealer, first_draw, last_card = (
        check_flag(tsumo, "tsumo"),
        check_flag(dealer, "dealer"),
        check_flag(first_draw, "first_draw"),
        check_flag(last_card, "last_card"),
    )
    min_han = rules.min_han(round)
    cards = parse_cards(concealed)
    hand = to_mask(cards)
    meld_mask = 0 if meld is None else parse_meld(meld, hand)
    expected = 5 if meld_mask else 8
    if len(cards) != expected:
        raise CardError(f"expected {expected} concealed cards including the winning card, got {len(cards)}")
    win = as_card(win_card, "win_card")
    if win not in cards:
        raise CardError(f"winning card {card_str(win)} is not among the concealed cards")
    disc = to_mask(parse_cards(discards, what="discards"))
    if disc >> JOKER & 1:
        raise CardError("the Joker can never be discarded (R12)")
    if disc & (hand | meld_mask):  # every card exists once (R1): a held or called card is not also a discard
        c = from_mask(disc & (hand | meld_mask))[0]
        where = "hand" if hand >> c & 1 else "meld"
        raise CardError(f"discards: {card_str(c)} is in the {where}, and a card is never both held and discarded (R1)")
    if first_draw and (not tsumo or meld_mask or disc):
        # Tenhou / Chiihou (section 7): won by Tsumo on one's first draw, with no call before it - so no discard yet
        why = "a Ron" if not tsumo else "a called meld" if meld_mask else f"discards ({format_cards(from_mask(disc))})"
        raise CardError(
            f"first_draw: Tenhou and Chiihou are won by Tsumo on one's first draw before any call or discard "
            f"(section 7), so it does not go with {why}"
        )
    if first_draw:
        _check_first_draw(dealer, last_card, rules)
    if tsumo:
        _check_tsumo_reachable(dealer, first_draw, last_card, meld_mask, disc, rules)
    dora = -1
    if dora_indicator is not None:
        ind = as_card(dora_indicator, "dora_indicator")
        if ind == JOKER:
            raise CardError("the Joker cannot be the dora indicator (R35)")
        if first_draw and dealer:
            raise CardError("dora_indicator: there is none when the dealer wins on the first draw (R35)")
        _check_indicator(ind, win, hand, meld_mask, disc, tsumo=tsumo, dealer=dealer, last_card=last_card, rules=rules)
        if dealer and not tsumo:
            # R18 keeps the indicator out of every call, so it stays in the dealer's discards: furiten for a Ron (R33)
            disc |= 1 << ind
        dora = dora_of(ind)
    return score_masks(
        hand,
        meld_mask,
        win,
        tsumo=tsumo,
        min_han=min_han,
        dealer=dealer,
        dora=dora,
        first_draw=first_draw,
        last_card=last_card,
        discards=disc,
        rules=rules,
    )


@functools.lru_cache(maxsize=16)
def tsumo_situations(num_players: int, wall_draws: int) -> dict[tuple[bool, bool, bool, bool], int]:
    """What a Tsumo can be declared with, over every order of draws and calls a deal of ``wall_draws`` drawable cards
    allows: (dealer, first_draw, last_card, called) -> the most discards the winner can have made by then. The winner
    is the dealer, draws for the first time with no call before it (Tenhou / Chiihou), draws the wall's last card
    (R14), holds a called meld; each of its earlier draws and its call was followed by one discard.

    The turn structure alone decides it (R6, R11, R14-R19): the dealer draws first; a discard passes the turn to the
    next seat, unless another seat that has not called yet (R17) takes it, then discards and passes the turn on from
    its own seat; no call on the dealer's first discard or the final one (R18). Which calls the cards allow is left
    open, so this is what some deal reaches. With the built-in walls every declaration without first_draw is one of
    them (up to its count of discards); with a drawable wall of a few cards some are not (a non-dealer's Tsumo where
    only the dealer draws)."""
    found: dict[tuple[bool, bool, bool, bool], int] = {}
    seen: set = set()
    # a state before a draw: (draws made, seat to draw, per seat (its draws so far, whether it called))
    todo = [(0, 0, ((0, False),) * num_players)]
    while todo:
        state = todo.pop()
        if state in seen or state[0] == wall_draws:
            continue
        seen.add(state)
        k, seat, seats = state
        draws, called = seats[seat]
        key = (seat == 0, draws == 0 and not any(c for _, c in seats), k + 1 == wall_draws, called)
        found[key] = max(found.get(key, 0), draws + called)
        if k + 1 == wall_draws:  # the final discard: no call (R18) and no draw after it
            continue
        seats = seats[:seat] + ((draws + 1, called),) + seats[seat + 1 :]
        chain, chained = [(seat, seats, k > 0)], set()  # (discarder, seats, whether the discard may be called)
        while chain:
            item = chain.pop()
            if item in chained:
                continue
            chained.add(item)
            by, now, callable_ = item
            todo.append((k + 1, (by + 1) % num_players, now))
            for c in range(num_players):
                if callable_ and c != by and not now[c][1]:
                    chain.append((c, now[:c] + ((now[c][0], True),) + now[c + 1 :], True))
    return found


def _check_tsumo_reachable(
    dealer: bool, first_draw: bool, last_card: bool, meld: int, disc: int, rules: RuleConfig
) -> None:
    """A Tsumo no order of draws and calls reaches under ``rules`` (:func:`tsumo_situations`), or one whose declared
    discards outnumber those its winner can have made by then (those called away are not in front of it, so fewer
    is fine, none included: the history is optional)."""
    most = tsumo_situations(rules.num_players, rules.wall_draws).get((dealer, first_draw, last_card, bool(meld)))
    count = len(from_mask(disc))
    if most is not None and count <= most:
        return
    who = "the dealer" if dealer else "a non-dealer"
    wall = (f"the drawable wall is {rules.wall_draws} cards ({rules.wall_size} wall cards less wall_limit "
            f"{rules.wall_limit}, R10, R14), drawn in turn from the dealer (R6, R11)")  # fmt: skip
    if most is not None:
        raise CardError(
            f"discards: {count} given, but {who}'s Tsumo here comes after at most {most} discard"
            f"{'' if most == 1 else 's'} of theirs: {wall}"
        )
    parts = [
        ("a called meld" if meld else ""),
        ("first_draw" if first_draw else ""),
        ("last_card" if last_card else ""),
    ]
    with_ = " with " + ", ".join(p for p in parts if p) if any(parts) else " without first_draw or last_card"
    raise CardError(f"tsumo: no deal under these rules reaches a Tsumo by {who}{with_}: {wall}")


def _check_first_draw(dealer: bool, last_card: bool, rules: RuleConfig) -> None:
    """A first-draw win (Tenhou, Chiihou) is on the last wall card exactly when that seat's first draw is the wall's
    last draw (RuleConfig.first_draws): never with the built-in rules, always where the drawable wall is that short."""
    draws, last = rules.first_draws(dealer), rules.wall_draws
    wall = f"the last card is draw {last} ({rules.wall_size} wall cards less wall_limit {rules.wall_limit}, R10, R14)"
    if not draws:
        raise CardError(f"first_draw: only the dealer draws under these rules ({wall}), so there is no Chiihou")
    who = f"{'the dealer' if dealer else 'a non-dealer'}'s first draw is draw {' or '.join(map(str, draws))}"
    if last_card and last not in draws:
        raise CardError(f"last_card: a first draw is never the last card under these rules: {who} and {wall}")
    if not last_card and min(draws) == last:
        raise CardError(
            f"last_card: a first draw is always the last card under these rules: {who} and {wall}, so first_draw "
            f"needs last_card"
        )


def _check_indicator(
    ind: int,
    win: int,
    hand: int,
    meld: int,
    disc: int,
    *,
    tsumo: bool,
    dealer: bool,
    last_card: bool,
    rules: RuleConfig,
) -> None:
    """R35: the indicator is the dealer's first discard, and no one can Pon or Chii it (R18), so it stays in the
    dealer's discards - the winner holds it only after a non-dealer's Ron on that very discard."""
    name = card_str(ind)
    if meld >> ind & 1:
        raise CardError(
            f"dora_indicator: {name} is in the called meld, but no one can call the dealer's first discard (R18, R35)"
        )
    if disc >> ind & 1 and not dealer:
        raise CardError(
            f"dora_indicator: {name} is among the winner's discards, but the indicator is the dealer's "
            f"first discard (R35) and every card is discarded once (R1); only a dealer's discards hold it"
        )
    if not hand >> ind & 1:
        return
    if ind == win and not tsumo and dealer:
        raise CardError(
            f"dora_indicator: {name} is the winning card, but the indicator is the dealer's own first "
            f"discard and no one Rons on their own discard (R29, R35)"
        )
    if ind != win or tsumo:
        what = "the Tsumo card" if ind == win else "in the hand"
        raise CardError(
            f"dora_indicator: {name} is {what}, but the indicator is the dealer's first discard, which no "
            f"one can call or draw back (R18, R35); only a non-dealer's Ron on that card holds it"
        )
    # a Ron on the indicator is a Ron on the deal's first discard, before the winner's first turn (R11)
    if meld or disc:
        why = "a called meld" if meld else f"discards ({format_cards(from_mask(disc))})"
        raise CardError(
            f"dora_indicator: a Ron on {name}, the dealer's first discard, comes before the winner's first "
            f"turn (R11, R35), so it does not go with {why}"
        )
    final = rules.wall_draws == 1  # the dealer's first discard follows draw 1; it is final when no draw is left
    if last_card != final:
        raise CardError(
            f"last_card: a Ron on {name}, the dealer's first discard, is a Ron on the final discard "
            f"{'exactly' if final else 'only'} when the wall has 1 draw, and it has {rules.wall_draws} "
            f"under these rules (R14, R35)"
        )


def score_params(rules: RuleConfig) -> tuple[int, ...]:
    return (
        rules.value_triplet_han,
        rules.haitei_han,
        rules.points_per_han,
        rules.counted_yakuman_han,
        rules.yakuman_value,
        rules.sequence_bonus_max,
        1 if rules.reading_tiebreak == "yaku_han" else 0,
    )


def score_batch(
    hands: np.ndarray,
    melds: np.ndarray | None,
    win_cards: np.ndarray,
    flags: np.ndarray,
    min_han: np.ndarray,
    dora: np.ndarray,
    furiten: np.ndarray | None = None,
    rules: RuleConfig = DEFAULT_RULES,
) -> dict[str, np.ndarray]:
    """C scorer over a batch: masks (B,) uint64, win_cards/min_han/dora (B,) int8 (dora -1 = none),
    flags (B,) uint8 of FLAG_* bits, furiten (B,) uint64 discard masks (Ron only).

    Returns arrays ``reason`` (index into REASONS; 0 = win), ``han``, ``yakuman``, ``points``,
    ``yaku_han``. Needs the C backend.
    """
    native = native_module()
    hands = exact_uint64(hands, "hands")
    n = hands.shape[0]

    def arr(x, what: str, dt, lo: int, hi: int):
        out = exact_int(x, what, dt, lo, hi)
        if out.shape != (n,):
            raise ValueError(f"{what}: expected {n} values, got {out.shape[0]}")
        return out

    melds = None if melds is None else exact_uint64(melds, "melds")
    if melds is not None and melds.shape != (n,):
        raise ValueError(f"melds: expected {n} masks, got {melds.shape[0]}")
    check_hands("score", hands, melds)
    win_cards = arr(win_cards, "win_cards", np.int8, 0, 52)
    if ((hands >> win_cards.astype(np.uint64)) & np.uint64(1) == 0).any():
        i = int(np.flatnonzero((hands >> win_cards.astype(np.uint64)) & np.uint64(1) == 0)[0])
        raise ValueError(f"win_cards: row {i}: the winning card is not in the hand")
    flags, min_han = arr(flags, "flags", np.uint8, 0, 15), arr(min_han, "min_han", np.int8, 0, 127)
    dora = arr(dora, "dora", np.int8, -1, 52)
    if furiten is not None:
        furiten = exact_uint64(furiten, "furiten")
        check_card_sets("furiten", furiten)
    out = {
        "reason": np.zeros(n, np.int8),
        "han": np.zeros(n, np.int16),
        "yakuman": np.zeros(n, np.int8),
        "points": np.zeros(n, np.int32),
        "yaku_han": np.zeros(n, np.int16),
    }
    native.score_batch(
        hands, melds, win_cards, flags, min_han, dora, furiten, score_params(rules),
        out["reason"], out["han"], out["yakuman"], out["points"], out["yaku_han"],
    )  # fmt: skip
    return out
