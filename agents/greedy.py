"""``greedy``: win when it can, otherwise get closer to winning.

- Tsumo / Ron whenever the mask offers it.
- Discard: the legal discard whose remaining hand has the smallest distance to win (exact, over the
  cards this seat has not seen), ties broken by the number of unseen cards that would bring it one
  step closer (the acceptance count), then by the lowest card id.
- Calls: Pon / Chii only when the call lowers the distance (after the best discard that follows) and
  keeps a yaku possible (heuristic: a crown-rank Pon, a one-colour hand, a Pon with another pair or
  triplet in hand for Toitoi, or a crown meld with only terminal-side cards for Chanta); else pass.

Everything is batched: one ``distance_batch`` call scores every candidate of every game. This class is
the readable reference; by default ``act_batch`` runs its exact C twin (``meld8_env/engine/_bots.c``,
``meld8_env.policies``) and ``MELD8_BACKEND=python`` runs the code below.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from meld8_env.actions import CHII_LOW, PASS, PON_BASE, RON, TSUMO
from meld8_env.calls import call_cards, kuikae_after
from meld8_env.cardmask import BITS, BLACK, CROWN, JK, NOT_K, NOT_QK, RANK_MASKS, REAL, RED, bits_of, discard_masks
from meld8_env.hands import acceptance_batch, distance_batch
from meld8_env.observation import decode
from meld8_env.policies import act_obs, c_bots_enabled

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
    hands: np.ndarray, melds: np.ndarray, unseen: np.ndarray, allowed: np.ndarray, all_acceptance: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every allowed discard of every row: (row, card, distance after it, acceptance count), and
    each row's smallest distance (N,) (127 for a row with no allowed discard).

    The acceptance count (unseen cards that would bring the hand one step closer) is computed only
    where it breaks a tie for the smallest distance (elsewhere 0), or everywhere with ``all_acceptance``.
    """
    n = len(hands)
    rows, cards = bits_of(allowed)
    after = hands[rows] & ~BITS[cards]
    dist = distance_batch(after, melds[rows], unseen[rows]).astype(np.int64)
    best = np.full(n, 127, np.int64)
    np.minimum.at(best, rows, dist)
    tied = dist == best[rows]
    n_tied = np.bincount(rows[tied], minlength=n)
    accept = np.zeros(len(rows), np.int64)
    need = np.arange(len(rows)) if all_acceptance else np.flatnonzero(tied & (n_tied[rows] > 1))
    if need.size:
        pool = (neighbours(after[need]) | JK) & unseen[rows[need]]
        accept[need] = acceptance_batch(after[need], melds[rows[need]], unseen[rows[need]], pool, dist[need])
    return rows, cards, dist, accept, best


def first_per_row(rows: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Indices (into the table) of the first entry of each row in ``order``."""
    return order[np.r_[True, rows[order][1:] != rows[order][:-1]]]


def best_discards(
    hands: np.ndarray, melds: np.ndarray, unseen: np.ndarray, allowed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row: the allowed discard leaving the smallest distance (ties: acceptance, then id).

    ``allowed`` (N,) uint64 masks of legal discards. Returns (card, distance, acceptance) per row.
    """
    n = len(hands)
    rows, cards, dist, accept, _ = discard_table(hands, melds, unseen, allowed)
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


class GreedyAgent(Agent):
    name = "greedy"
    c_twin = "greedy"  # the C policy that decides exactly like this class (subclasses run their Python)

    def runs_in_c(self) -> bool:
        return type(self).__dict__.get("c_twin") is not None and c_bots_enabled()

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self.runs_in_c():
            return act_obs(self.rules, self.c_twin, obs, masks)
        return self.act_batch_python(obs, masks)

    def act_batch_python(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The reference decision (what the C twin must equal)."""
        masks = np.asarray(masks).astype(bool)
        d = decode(np.asarray(obs), self.rules)
        n = len(masks)
        out = np.full(n, -1, np.int64)
        out[masks[:, TSUMO]] = TSUMO
        out[masks[:, RON]] = RON
        todo = out < 0
        claim = todo & masks[:, PASS]
        if claim.any():
            out[claim] = self._claims(d, masks, np.flatnonzero(claim))
        disc = todo & ~masks[:, PASS]
        if disc.any():
            out[disc] = self._discard(d, masks, np.flatnonzero(disc))
        return out

    # -- discards ---------------------------------------------------------------------------------
    def _discard(self, d: dict, masks: np.ndarray, idx: np.ndarray) -> np.ndarray:
        card, _, _ = best_discards(d["hand"][idx], d["melds"][idx, 0], d["unseen"][idx], discard_masks(masks[idx]))
        return card

    # -- claims -----------------------------------------------------------------------------------
    def _claims(self, d: dict, masks: np.ndarray, idx: np.ndarray) -> np.ndarray:
        out = np.full(len(idx), PASS, np.int64)
        rows, acts, now, dist, yaku = call_table(d, masks, idx, self.rules.kuikae == "other_end")
        if rows.size == 0:
            return out
        good = (dist < now) & yaku
        # the best good call per game: smallest distance, then lowest action id
        first = first_per_row(rows, np.lexsort((acts, dist, ~good, rows)))
        chosen = first[good[first]]
        out[rows[chosen]] = acts[chosen]
        return out


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
