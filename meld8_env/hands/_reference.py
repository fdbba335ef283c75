"""Pure-Python twin of the C hand evaluator: readable brute force, used as the test oracle.

Same functions and results as ``_native`` (masks in, masks/ints out):
``readings(mask, meld) -> list[Reading]``, ``is_win_form``, ``waits(mask, meld) -> mask``,
``distance(mask, meld, unseen) -> int``. Masks are 53-bit ints (bit = card id, R5; Joker = 52).

- Readings try every split of the cards into groups (R23-R26) and every Joker stand-in (R27).
- Waits try every card (R33: completes a winning form, yaku ignored).
- Distance is computed from its definition: the minimum ``|W \\ H|`` over the complete table of
  winning concealed hands W (generated constructively; 1,865,828 of them, HAND_EVAL_NOTES.md).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np

from meld8_env.cards import JOKER, REAL_MASK, card_id, from_mask, rank_of, suit_of
from meld8_env.hands.contract import check_hand
from meld8_env.hands.forms import (
    FORM_CROWN_PAIRS,
    FORM_FOUR_PAIRS,
    FORM_PURE_STRAIGHT,
    FORM_ROYAL_STRAIGHT,
    FORM_STANDARD,
    FORM_TWO_QUADS,
    UNREACHABLE,
    Reading,
)

JK = 1 << JOKER
CROWNS = (1, 11, 12, 13)


def _mask(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _is_real_meld(cards: list[int]) -> bool:
    """R23/R24: a triplet (one rank) or a sequence (one suit, consecutive, A low only)."""
    ranks = sorted(rank_of(c) for c in cards)
    if len(set(ranks)) == 1:
        return True
    same_suit = len({suit_of(c) for c in cards}) == 1
    return same_suit and ranks == list(range(ranks[0], ranks[0] + 3))


def _meld_standins(group: tuple[int, ...], held: int) -> list[int]:
    """Ways a 3-card group is a meld: [-1] if real, else each legal Joker stand-in (R27)."""
    if JOKER not in group:
        return [-1] if _is_real_meld(list(group)) else []
    real = [c for c in group if c != JOKER]
    return [s for s in range(52) if not held >> s & 1 and _is_real_meld(real + [s])]


def _is_pair(group: tuple[int, ...]) -> bool:
    """R25: two cards of one rank, never the Joker."""
    a, b = group
    return JOKER not in group and rank_of(a) == rank_of(b)


def _melds(cards: list[int], n: int, held: int):
    """Every split of ``cards`` into ``n`` melds: yields (group masks, joker stand-in)."""
    if n == 0:
        yield (), -1
        return
    first, rest = cards[0], cards[1:]
    for others in combinations(rest, 2):
        group = (first, *others)
        left = [c for c in rest if c not in others]
        for s in _meld_standins(group, held):
            for tail, s2 in _melds(left, n - 1, held):
                yield (_mask(group), *tail), max(s, s2)


def _standard(cards: list[int], n_melds: int, held: int) -> list[Reading]:
    out = []
    for pair in combinations(cards, 2):
        if not _is_pair(pair):
            continue
        left = [c for c in cards if c not in pair]
        for melds, s in _melds(left, n_melds, held):
            out.append((FORM_STANDARD, tuple(sorted((_mask(pair), *melds))), s))
    return out


def _specials(cards: list[int]) -> list[Reading]:
    """R26 forms 2-5 for a concealed 8-card hand."""
    out: list[Reading] = []
    hand = _mask(cards)
    real = [c for c in cards if c != JOKER]
    has_jk = JOKER in cards
    by_rank: dict[int, list[int]] = {}
    for c in real:
        by_rank.setdefault(rank_of(c), []).append(c)
    counts = sorted(len(v) for v in by_rank.values())
    # four pairs: 4 ranks x 2 cards, no Joker (R26.2); crown pairs: A J Q K, each pair one colour (R26.5)
    if not has_jk and counts == [2, 2, 2, 2]:
        pairs = tuple(sorted(_mask(v) for v in by_rank.values()))
        out.append((FORM_FOUR_PAIRS, pairs, -1))
        one_colour = all(len({suit_of(c) in (1, 2) for c in v}) == 1 for v in by_rank.values())
        if sorted(by_rank) == list(CROWNS) and one_colour:
            out.append((FORM_CROWN_PAIRS, pairs, -1))
    # two quads, the Joker standing for one missing card (R26.3)
    if counts == [4, 4] and not has_jk:
        out.append((FORM_TWO_QUADS, tuple(sorted(_mask(v) for v in by_rank.values())), -1))
    if counts == [3, 4] and has_jk:
        groups, standin = [], -1
        for r, v in by_rank.items():
            if len(v) == 3:
                standin = next(card_id(r, s) for s in range(4) if card_id(r, s) not in v)
                groups.append(_mask(v) | JK)
            else:
                groups.append(_mask(v))
        out.append((FORM_TWO_QUADS, tuple(sorted(groups)), standin))
    # straights: one suit (R26.4)
    if len({suit_of(c) for c in real}) == 1:
        suit = suit_of(real[0])
        ranks = {rank_of(c) for c in real}
        if not has_jk and ranks == {1, 7, 8, 9, 10, 11, 12, 13}:
            out.append((FORM_ROYAL_STRAIGHT, (hand,), -1))
        for start in range(1, 7):
            run = set(range(start, start + 8))
            missing = run - ranks
            if not ranks <= run:
                continue
            if not has_jk and not missing:
                out.append((FORM_PURE_STRAIGHT, (hand,), -1))
            elif has_jk and len(missing) == 1:
                out.append((FORM_PURE_STRAIGHT, (hand,), card_id(missing.pop(), suit)))
    return out


def readings(mask: int, meld: int = 0) -> list[Reading]:
    """Every reading of the concealed cards ``mask`` with exposed meld ``meld`` (R26-R28)."""
    check_hand("readings", mask, meld)
    cards = from_mask(mask)
    held = (mask | meld) & REAL_MASK
    if meld:
        return _standard(cards, 1, held)
    return _standard(cards, 2, held) + _specials(cards)


def relaxed_joker_standard(mask: int, meld: int = 0) -> bool:
    """Standard form if the Joker's stand-in could be any card, even one held (used for the
    'illegal_joker' diagnosis, R27)."""
    return bool(_standard(from_mask(mask), 1 if meld else 2, 0))


def is_win_form(mask: int, meld: int = 0) -> bool:
    check_hand("is_win_form", mask, meld)
    return bool(readings(mask, meld))


def waits(mask: int, meld: int = 0) -> int:
    """R33: every card (the Joker included) that completes a winning form."""
    check_hand("waits", mask, meld)
    out = 0
    for c in range(53):
        bit = 1 << c
        if not (mask | meld) & bit and is_win_form(mask | bit, meld):
            out |= bit
    return out


# -- distance to win: the definition, over the full table of winning hands ----------------------
def _all_melds() -> list[tuple[int, int]]:
    """Every meld as (mask, joker stand-in bit or 0): real triplets/sequences and Joker melds."""
    out = []
    for r in range(1, 14):
        for suits in combinations(range(4), 3):
            out.append((_mask(card_id(r, s) for s in suits), 0))
    for s in range(4):
        for r in range(1, 12):
            out.append((_mask(card_id(r + i, s) for i in range(3)), 0))
    for a, b in combinations(range(52), 2):
        for st in _meld_standins((a, b, JOKER), (1 << a) | (1 << b)):
            out.append(((1 << a) | (1 << b) | JK, 1 << st))
    return out


def _all_pairs() -> list[int]:
    return [(1 << a) | (1 << b) for a, b in combinations(range(52), 2) if rank_of(a) == rank_of(b)]


@lru_cache(maxsize=1)
def winning_parts() -> tuple[np.ndarray, np.ndarray]:
    """All 5-card concealed parts (pair + meld) that win beside an exposed meld.

    Returns (masks, standin_bits): a part is valid beside meld E when ``standin & E == 0``.
    """
    melds = np.array(_all_melds(), dtype=np.uint64)
    pairs = np.array(_all_pairs(), dtype=np.uint64)
    m, s = melds[:, 0][None, :], melds[:, 1][None, :]
    p = pairs[:, None]
    ok = ((m & p) == 0) & ((s & p) == 0)  # stand-in not among the concealed cards (R27)
    w = (m | p)[ok]
    st = np.broadcast_to(s, ok.shape)[ok]
    keys = np.unique(np.stack([w, st], axis=1), axis=0)
    return keys[:, 0].copy(), keys[:, 1].copy()


@lru_cache(maxsize=1)
def winning_hands() -> np.ndarray:
    """Sorted unique masks of every winning concealed 8-card hand (R26, R27)."""
    melds = np.array(_all_melds(), dtype=np.uint64)
    mm, ms = melds[:, 0], melds[:, 1]
    i, j = np.triu_indices(len(melds), k=1)
    ok = (mm[i] & mm[j]) == 0  # also forbids two Joker melds
    two = mm[i][ok] | mm[j][ok]
    two_st = ms[i][ok] | ms[j][ok]
    chunks = []
    for p in _all_pairs():
        p = np.uint64(p)
        sel = ((two & p) == 0) & ((two_st & (two | p)) == 0)  # stand-in not in the hand (R27)
        chunks.append(two[sel] | p)
    chunks.append(np.array(sorted(_special_hands()), dtype=np.uint64))
    return np.unique(np.concatenate(chunks))


def _special_hands() -> set[int]:
    out = set()
    pair_masks = {r: [_mask(card_id(r, s) for s in ss) for ss in combinations(range(4), 2)] for r in range(1, 14)}
    for ranks in combinations(range(1, 14), 4):
        stack = [0]
        for r in ranks:
            stack = [m | pm for m in stack for pm in pair_masks[r]]
        out.update(stack)
    quad = {r: _mask(card_id(r, s) for s in range(4)) for r in range(1, 14)}
    for a, b in combinations(range(1, 14), 2):
        out.add(quad[a] | quad[b])
    for a in range(1, 14):
        for b in range(1, 14):
            if a != b:
                for s in range(4):
                    out.add(quad[a] | quad[b] & ~(1 << card_id(b, s)) | JK)
    for s in range(4):
        row = {r: 1 << card_id(r, s) for r in range(1, 14)}
        out.add(sum(row[r] for r in (1, 7, 8, 9, 10, 11, 12, 13)))
        for start in range(1, 7):
            run = sum(row[r] for r in range(start, start + 8))
            out.add(run)
            for r in range(start, start + 8):
                out.add(run & ~row[r] | JK)
    return out


def distance(mask: int, meld: int = 0, unseen: int | None = None) -> int:
    """Fewest further cards to a winning hand, by definition (HAND_EVAL_NOTES.md).

    min |W \\ H| over winning concealed W with W \\ H among the unseen cards, a held Joker kept.
    """
    check_hand("distance", mask, meld)
    if unseen is not None and not 0 <= unseen < 1 << 53:
        raise ValueError("unseen: a card id outside 0..52")
    held = mask | meld
    avail = (~held & ((1 << 53) - 1)) if unseen is None else (unseen & ~held)
    if meld:
        parts, standins = winning_parts()
        table = parts[(standins & np.uint64(meld)) == 0]
    else:
        table = winning_hands()
    ok = (table & np.uint64(~(mask | avail) & ((1 << 64) - 1))) == 0
    if mask & JK:
        ok &= (table & np.uint64(JK)) != 0
    cand = table[ok]
    if cand.size == 0:
        return UNREACHABLE
    return int(np.bitwise_count(cand & np.uint64(~mask & ((1 << 64) - 1))).min())
