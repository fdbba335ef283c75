"""Look-ahead features and the bot kernels they share: game knowledge computed from an observation.

The kernels (what the ``greedy`` and ``defensive`` bots decide with, ``agents.greedy``,
``agents.defensive``; all batched, one ``distance_batch`` call per table):

- :func:`discard_table` - every allowed discard of every row: distance to win after it, acceptance
  count where it breaks a tie, each row's smallest distance; :func:`best_discards` picks per row.
- :func:`call_table` - every legal Pon/Chii of claim-phase rows: distance now, after the call and its
  best discard, and :func:`yaku_possible` (greedy's heuristic).
- :func:`danger` - live, non-furiten wait shapes on each card for one opponent (R33 furiten per wait).
- :func:`neighbours` - rank-mates and same-suit cards within two ranks (the acceptance pool).

Look-ahead features for learning agents: the bots' answers appended to the observation. A policy
network sees the hand as 53 one-hot bytes; learning from them which discard leaves the hand closest
to winning is a hard combinatorial problem. These features hand it the exact answers the bots use, so
learning can spend its budget on what the bots do not know (when to fold, when to call, which tied
discard is better).

``augment(obs, masks, rules)`` -> ``uint8[N, obs_size + extra_size(rules)]``: the observation (any
seat, any phase) followed by, for the observing seat (P players):

| field | size | content |
|---|---|---|
| discard_distance | 53 | legal discard c: 1 + distance to win after discarding c (0 = not legal now) |
| discard_accept | 53 | acceptance count after c where c ties for the smallest distance (else 0) |
| danger | (P-1)*53 | held card c: live, non-furiten wait shapes on c of each opponent (defensive) |
| call_distance | 9 | legal Pon/Chii action: 1 + distance after it and its best discard (0 = not legal) |
| call_yaku | 9 | legal Pon/Chii action: 1 if a yaku stays possible after it (greedy's heuristic) |
| distance_now | 1 | 1 + distance of the concealed hand before acting (0 when not to act) |

Distances are exact over the cards the seat has not seen (``meld8_env.hands.distance_batch``),
clipped to 15 for an unreachable hand. A checkpoint trained with features records it in its metadata
(``agents.checkpoint``), with ``FEATURES_LAYOUT_VERSION``.
"""

from __future__ import annotations

import numpy as np

from meld8_env import hands as _hands
from meld8_env.actions import CHII_LOW, N_CALL_ACTIONS, NUM_ACTIONS, PASS, PON_BASE
from meld8_env.calls import call_cards, kuikae_after
from meld8_env.cardmask import (
    BITS,
    BLACK,
    CROWN,
    JK,
    NOT_K,
    NOT_QK,
    RANK_MASKS,
    REAL,
    RED,
    bits_of,
    discard_masks,
)
from meld8_env.hands import acceptance_batch, distance_batch
from meld8_env.observation import decode, obs_size
from meld8_env.rules import RuleConfig

# -- bot kernels -------------------------------------------------------------------------------------

TERMINAL_SIDE = CROWN | RANK_MASKS[1] | RANK_MASKS[2] | RANK_MASKS[8] | RANK_MASKS[9]  # A 2 3 9 T J Q K


def neighbours(s: np.ndarray) -> np.ndarray:
    """Cards that are rank-mates of, or within two ranks in the same suit of, a card of ``s``."""
    s = s & REAL
    sh = [np.uint64(k) for k in (13, 26, 39)]
    mates = np.zeros_like(s)
    for k in sh:
        mates |= (s << k) | (s >> k)
    one, two = np.uint64(1), np.uint64(2)
    nb = ((s & NOT_K) << one) | ((s >> one) & NOT_K) | ((s & NOT_QK) << two) | ((s >> two) & NOT_QK)
    return (mates | nb) & REAL


def discard_table(
    hands: np.ndarray,
    melds: np.ndarray,
    unseen: np.ndarray,
    allowed: np.ndarray,
    all_acceptance: bool = False,
    lite: bool = False,
    one_pass: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every allowed discard of every row: (row, card, distance after it, acceptance count), and
    each row's smallest distance (N,) (127 for a row with no allowed discard).

    The acceptance count (unseen cards that would bring the hand one step closer) is computed only
    where it breaks a tie for the smallest distance (elsewhere 0), or everywhere with ``all_acceptance``.
    ``lite`` (the rollout bots ``greedy_lite`` / ``defensive_lite``): where the distance after the discard is
    2 or more, the count is replaced by the size of its pool (the unseen neighbours of the hand and the
    Joker, an upper bound of the count), which costs a popcount instead of a search.

    ``one_pass`` (not with ``lite``): the same table from the C evaluator's one pass (``eval_discard_table``,
    ``tests/test_cbots.py``'s one-pass checks hold it to this function's per-discard path) where the C backend is
    in use, about a tenth of the time for one row: the search's candidates and the networks' features ask for it.
    The Python bots keep the per-discard path, the readable twin of the C bots.
    """
    n = len(hands)
    rows, cards = bits_of(allowed)
    if one_pass and not lite and _hands.BACKEND == "c" and n:
        table = _one_pass(hands, melds, unseen, allowed, rows, cards, all_acceptance)
        if table is not None:
            return table
    after = hands[rows] & ~BITS[cards]
    dist = distance_batch(after, melds[rows], unseen[rows]).astype(np.int64)
    best = np.full(n, 127, np.int64)
    np.minimum.at(best, rows, dist)
    tied = dist == best[rows]
    n_tied = np.bincount(rows[tied], minlength=n)
    accept = np.zeros(len(rows), np.int64)
    need = np.arange(len(rows)) if all_acceptance else np.flatnonzero(tied & (n_tied[rows] > 1))
    pool = (neighbours(after[need]) | JK) & unseen[rows[need]]
    if lite:
        cheap = dist[need] >= 2
        accept[need[cheap]] = np.bitwise_count(pool[cheap])
        need, pool = need[~cheap], pool[~cheap]
    if need.size:
        accept[need] = acceptance_batch(
            after[need], melds[rows[need]], unseen[rows[need]], pool, dist[need], exact_distances=True
        )
    return rows, cards, dist, accept, best


def _one_pass(hands, melds, unseen, allowed, rows, cards, all_acceptance: bool):
    """:func:`discard_table`'s answer from ``_native.discard_table_batch`` (acc_mode 2: every count, 1: the counts
    that break a tie), or None where the C table leaves an allowed card unanswered (a card the row does not hold)."""
    shape = (len(hands), 53)
    dist8, acc8 = np.empty(shape, np.int8), np.empty(shape, np.int8)
    _hands.native_module().discard_table_batch(hands, melds, unseen, allowed, 2 if all_acceptance else 1, dist8, acc8)
    dist = dist8[rows, cards].astype(np.int64)
    if (dist < 0).any():
        return None
    best = np.full(len(hands), 127, np.int64)
    np.minimum.at(best, rows, dist)
    return rows, cards, dist, acc8[rows, cards].astype(np.int64), best


def first_per_row(rows: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Indices (into the table) of the first entry of each row in ``order``."""
    return order[np.r_[True, rows[order][1:] != rows[order][:-1]]]


def best_discards(
    hands: np.ndarray, melds: np.ndarray, unseen: np.ndarray, allowed: np.ndarray, lite: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row: the allowed discard leaving the smallest distance (ties: acceptance, then id).

    ``allowed`` (N,) uint64 masks of legal discards; ``lite`` as in :func:`discard_table`. Returns (card,
    distance, acceptance) per row.
    """
    n = len(hands)
    rows, cards, dist, accept, _ = discard_table(hands, melds, unseen, allowed, lite=lite)
    first = first_per_row(rows, np.lexsort((cards, -accept, dist, rows)))
    out_card = np.full(n, -1, np.int64)
    out_dist = np.full(n, 127, np.int64)
    out_acc = np.zeros(n, np.int64)
    out_card[rows[first]] = cards[first]
    out_dist[rows[first]] = dist[first]
    out_acc[rows[first]] = accept[first]
    return out_card, out_dist, out_acc


def yaku_possible(hand: np.ndarray, meld: np.ndarray, action: np.ndarray) -> np.ndarray:
    """Heuristic: does a yaku stay reachable with this called meld (call-legal yaku only)?"""
    allc = (hand | meld) & REAL
    pon = action < CHII_LOW
    crown_pon = pon & ((meld & CROWN) == meld)
    one_colour = ((allc & RED) == 0) | ((allc & BLACK) == 0)
    counts = np.stack([np.bitwise_count(hand & m) for m in RANK_MASKS], axis=1)
    toitoi = pon & (counts >= 2).any(axis=1)
    chanta = ((meld & CROWN) != 0) & ((hand & REAL & ~TERMINAL_SIDE) == 0)
    return crown_pon | one_colour | toitoi | chanta


def call_table(
    d: dict, masks: np.ndarray, idx: np.ndarray, kuikae: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every legal Pon/Chii of the claim-phase games ``idx`` (``d`` = ``decode`` of the batch).

    Returns (row into idx, action, distance now, distance after the call and its best discard,
    yaku still possible) per call.
    """
    rows, acts = np.nonzero(masks[idx, PON_BASE:PASS])
    acts = acts + PON_BASE
    g = idx[rows]
    card = d["claim_card"][g]
    hand, unseen = d["hand"][g], d["unseen"][g]
    now = distance_batch(hand, d["melds"][g, 0], unseen).astype(np.int64)
    pair = call_cards(acts, card)
    meld = pair | BITS[card]
    after = hand & ~pair
    allowed = after & ~kuikae_after(acts, card, kuikae) & REAL
    _, dist, _ = best_discards(after, meld, unseen, allowed)
    return rows, acts, now, dist, yaku_possible(after, meld, acts)


U0 = np.uint64(0)


def _card_bit(rank: np.ndarray, suit: np.ndarray) -> np.ndarray:
    ok = (rank >= 0) & (rank <= 12)
    out = np.zeros(len(rank), np.uint64)
    out[ok] = BITS[13 * suit[ok] + rank[ok]]
    return out


def danger(cards: np.ndarray, unseen: np.ndarray, their_discards: np.ndarray) -> np.ndarray:
    """Live, non-furiten wait shapes on each card for one opponent (vectorized)."""
    r, s = cards % 13, cards // 13
    me = BITS[cards]
    near = {dr: _card_bit(r + dr, s) for dr in (-3, -2, -1, 1, 2, 3)}  # each neighbour once, not per shape

    def b(dr: int) -> np.ndarray:
        return near[dr]

    live = lambda m: (m != U0) & ((unseen & m) == m)  # noqa: E731 - all cards of the shape unseen
    pair = ((unseen & RANK_MASKS[r] & ~me) != U0) & ((their_discards & RANK_MASKS[r]) == U0)
    up = live(b(1) | b(2)) & ((b(1) != U0) & (b(2) != U0)) & ((their_discards & b(3)) == U0)
    down = live(b(-1) | b(-2)) & ((b(-1) != U0) & (b(-2) != U0)) & ((their_discards & b(-3)) == U0)
    mid = live(b(-1) | b(1)) & ((b(-1) != U0) & (b(1) != U0))
    return pair.astype(np.int64) + up + down + mid


# -- look-ahead features ------------------------------------------------------------------------------

N_CALLS = N_CALL_ACTIONS
FEATURES_LAYOUT_VERSION = 1
"""Bumped whenever the features below change; checkpoints record the version they were trained on."""
_CLIP = 15


def feature_layout(base: int, players: int) -> dict[str, tuple[int, int]]:
    """Field -> (offset, size) of the appended features, after a plain observation of ``base`` bytes."""
    sizes = [
        ("discard_distance", 53),
        ("discard_accept", 53),
        ("danger", 53 * (players - 1)),
        ("call_distance", N_CALLS),
        ("call_yaku", N_CALLS),
        ("distance_now", 1),
    ]
    out, off = {}, base
    for name, size in sizes:
        out[name] = (off, size)
        off += size
    return out


def extra_size(rules: RuleConfig) -> int:
    return sum(size for _, size in feature_layout(0, rules.num_players).values())


def augmented_size(rules: RuleConfig) -> int:
    return obs_size(rules) + extra_size(rules)


def _code(dist: np.ndarray) -> np.ndarray:
    return (1 + np.minimum(dist, _CLIP - 1)).astype(np.uint8)


def augment(obs: np.ndarray, masks: np.ndarray, rules: RuleConfig) -> np.ndarray:
    """``obs`` (N, obs_size) uint8 and ``masks`` (N, 64) bool (or integers 0/1, as the engine's uint8 and the AEC's
    int8 masks) -> (N, augmented_size) uint8."""
    obs, masks = np.asarray(obs), np.asarray(masks)
    base, P = obs_size(rules), rules.num_players
    # checked, not cast: float observations were truncated, int64 ones wrapped at 256, and masks of another
    # shape gave other features or an IndexError deep inside; integers 0..255 of a wider type are the same bytes
    if obs.dtype.kind not in "iu" or obs.ndim != 2 or obs.shape[1] != base:
        raise ValueError(
            f"augment expects observations of shape (N, {base}) and dtype uint8, got shape {obs.shape} {obs.dtype}"
        )
    if obs.dtype != np.uint8:
        if obs.size and (obs.min() < 0 or obs.max() > 255):
            raise ValueError(f"augment expects observation bytes 0..255, got values {obs.min()}..{obs.max()}")
        obs = obs.astype(np.uint8)
    n = len(obs)
    if masks.shape != (n, NUM_ACTIONS):
        raise ValueError(f"augment expects masks of shape ({n}, {NUM_ACTIONS}), one per observation, got {masks.shape}")
    if masks.dtype != np.bool_:
        if masks.dtype.kind not in "iu":
            raise ValueError(f"augment expects masks of bools (or integers 0/1), got dtype {masks.dtype}")
        other = masks[(masks != 0) & (masks != 1)]
        if other.size:
            raise ValueError(f"augment expects masks of bools (or integers 0/1), got the value {other[0]}")
        masks = masks.astype(bool)
    out = np.zeros((n, base + extra_size(rules)), np.uint8)
    out[:, :base] = obs
    if n == 0:
        return out
    o = {name: off for name, (off, _) in feature_layout(base, P).items()}
    o_dist, o_acc, o_danger = o["discard_distance"], o["discard_accept"], o["danger"]
    o_call, o_yaku, o_now = o["call_distance"], o["call_yaku"], o["distance_now"]
    d = decode(obs, rules)

    disc = np.flatnonzero(masks[:, :52].any(axis=1))
    if disc.size:
        hands, melds, unseen = d["hand"][disc], d["melds"][disc, 0], d["unseen"][disc]
        rows, cards, dist, accept, best = discard_table(hands, melds, unseen, discard_masks(masks[disc]), one_pass=True)
        g = disc[rows]
        out[g, o_dist + cards] = _code(dist)
        out[g, o_acc + cards] = np.minimum(accept, 255).astype(np.uint8)
        out[disc, o_now] = _code(best)

    held_rows, held_cards = bits_of(d["hand"] & REAL)
    for k in range(1, P):
        dk = danger(held_cards, d["unseen"][held_rows], d["discarded"][held_rows, k])
        out[held_rows, o_danger + 53 * (k - 1) + held_cards] = np.minimum(dk, 255).astype(np.uint8)

    claim = np.flatnonzero(masks[:, PON_BASE : PON_BASE + N_CALLS].any(axis=1))
    if claim.size:
        rows, acts, now, dist, yaku = call_table(d, masks, claim, rules.kuikae == "other_end")
        g = claim[rows]
        out[g, o_call + acts - PON_BASE] = _code(dist)
        out[g, o_yaku + acts - PON_BASE] = yaku.astype(np.uint8)
        out[g, o_now] = _code(now)
    return out
