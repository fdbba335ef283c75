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

``danger`` and the discard table are in ``meld8_env.features`` (shared with the look-ahead features).
"""

from __future__ import annotations

import numpy as np

from agents.greedy import GreedyAgent
from meld8_env.agent import reseed_seed_only
from meld8_env.cardmask import discard_masks
from meld8_env.features import danger, discard_table, first_per_row


class DefensiveAgent(GreedyAgent):
    name = "defensive"
    c_twin = "defensive"
    reseed = reseed_seed_only  # declared in the body: meld8_env.agent.reseed_in_place reads only the class's own
    late_wall = 8  # from here on every opponent is a threat
    fold_distance = 3  # fold against threats only when at least this far from winning

    def runs_in_c(self) -> bool:  # the C twin knows only the default thresholds
        return (self.late_wall, self.fold_distance) == (8, 3) and super().runs_in_c()

    def _discard(self, d: dict, masks: np.ndarray, idx: np.ndarray) -> np.ndarray:
        P = self.rules.num_players
        hands, melds, unseen = d["hand"][idx], d["melds"][idx, 0], d["unseen"][idx]
        rows, cards, dist, accept, best = discard_table(hands, melds, unseen, discard_masks(masks[idx]), lite=self.lite)
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


class DefensiveLiteAgent(DefensiveAgent):
    """``defensive_lite``: defensive with ``greedy_lite``'s tie-break (see there). Twin of the C policy
    ``defensive_lite``."""

    name = "defensive_lite"
    c_twin = "defensive_lite"
    lite = True
    reseed = reseed_seed_only
