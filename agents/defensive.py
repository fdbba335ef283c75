"""``defensive``: greedy, but it avoids feeding opponents.

Danger of discarding card c to an opponent = the number of wait shapes on c it could still hold and
Ron with, counted over the cards we have not seen: a pair/triplet wait on c's rank (a rank-mate of c
is unseen), and the sequence shapes c+1 c+2, c-2 c-1, c-1 c+1 (both cards unseen). Every card is
unique, so the opponent's own discards are never in our hand; what furiten (R33, per wait) gives
instead is that a shape whose other wait the opponent has discarded is dead (same rank as one of its
discards kills the pair shapes; c+3 / c-3 discarded kills the two-sided shapes).

- Always: among discards that greedy rates equally (distance to win, acceptance count), the least
  dangerous one; so its offense is greedy's.
- Against a threat (an opponent who has called, or any opponent once the wall is nearly empty) while
  still far from winning (distance >= ``fold_distance`` after the best discard): the least dangerous
  discard to the threats first, then the greedy order.
"""

from __future__ import annotations

import numpy as np

from agents.greedy import GreedyAgent, discard_table, first_per_row
from meld8_env.cardmask import BITS, RANK_MASKS, discard_masks

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

    def b(dr: int) -> np.ndarray:
        return _card_bit(r + dr, s)

    live = lambda m: (m != U0) & ((unseen & m) == m)  # noqa: E731 - all cards of the shape unseen
    pair = ((unseen & RANK_MASKS[r] & ~me) != U0) & ((their_discards & RANK_MASKS[r]) == U0)
    up = live(b(1) | b(2)) & ((b(1) != U0) & (b(2) != U0)) & ((their_discards & b(3)) == U0)
    down = live(b(-1) | b(-2)) & ((b(-1) != U0) & (b(-2) != U0)) & ((their_discards & b(-3)) == U0)
    mid = live(b(-1) | b(1)) & ((b(-1) != U0) & (b(1) != U0))
    return pair.astype(np.int64) + up + down + mid


class DefensiveAgent(GreedyAgent):
    name = "defensive"
    c_twin = "defensive"
    late_wall = 8  # from here on every opponent is a threat
    fold_distance = 3  # fold against threats only when at least this far from winning

    def runs_in_c(self) -> bool:  # the C twin knows only the default thresholds
        return (self.late_wall, self.fold_distance) == (8, 3) and super().runs_in_c()

    def _discard(self, d: dict, masks: np.ndarray, idx: np.ndarray) -> np.ndarray:
        P = self.rules.num_players
        hands, melds, unseen = d["hand"][idx], d["melds"][idx, 0], d["unseen"][idx]
        rows, cards, dist, accept, best = discard_table(hands, melds, unseen, discard_masks(masks[idx]))
        threat = (d["calls_used"][idx, 1:P] > 0) | (d["wall_left"][idx, None] <= self.late_wall)
        total = np.zeros(len(rows), np.int64)
        to_threats = np.zeros(len(rows), np.int64)
        for k in range(P - 1):
            dk = danger(cards, unseen[rows], d["discarded"][idx[rows], k + 1])
            total += dk
            to_threats += np.where(threat[rows, k], dk, 0)
        fold = threat.any(axis=1) & (best >= self.fold_distance)
        key_fold = np.where(fold[rows], to_threats, 0)
        first = first_per_row(rows, np.lexsort((cards, total, -accept, dist, key_fold, rows)))
        out = np.full(len(idx), -1, np.int64)
        out[rows[first]] = cards[first]
        return out
