"""``defensive``: greedy, but it stops feeding a threatening opponent.

An opponent is a threat when it has called this deal, or when the wall is nearly empty (≤ 8 cards).
Facing a threat and not yet tenpai itself, the bot ranks its legal discards by safety against each
threat, then by the greedy order (distance to win, acceptance count, card id). Otherwise it plays
exactly like ``greedy``.

Safety, per threatening opponent. Every card is unique, so the opponent's own discards are never in
our hand; what furiten (R33, per wait) gives instead is this: if the opponent discarded X, any wait
of theirs that includes X is furiten, so they cannot Ron at all with it. Hence
- 2: a "dead" card: none of its possible partners (rank-mates, same-suit cards within two ranks) is
  unseen, so no hidden hand can use it;
- 1: same rank as one of their discards (a pair or triplet wait on that rank would include the
  discard) or three ranks from one in the same suit (suji: the two-sided wait through both is furiten);
- 0: otherwise.
"""

from __future__ import annotations

import numpy as np

from agents.greedy import BITS, RANK_MASKS, GreedyAgent, _bits_of, neighbours
from meld8_env.hands import distance_batch


class DefensiveAgent(GreedyAgent):
    name = "defensive"
    late_wall = 8  # from here on every opponent is a threat
    push_distance = 1  # at or below this distance after the best discard, play to win

    def _discard(self, d: dict, masks: np.ndarray, idx: np.ndarray) -> np.ndarray:
        greedy_choice = super()._discard(d, masks, idx)
        P = self.rules.num_players
        threat = (d["calls_used"][idx, 1:P] > 0) | (d["wall_left"][idx, None] <= self.late_wall)
        if not threat.any():
            return greedy_choice
        hands, melds, unseen = d["hand"][idx], d["melds"][idx, 0], d["unseen"][idx]
        rows, cards = _bits_of(self._allowed(masks, idx))
        after = hands[rows] & ~BITS[cards]
        dist = distance_batch(after, melds[rows], unseen[rows]).astype(np.int64)
        best = np.full(len(idx), 127, np.int64)
        np.minimum.at(best, rows, dist)
        bit = BITS[cards]
        dead = (neighbours(bit) & unseen[rows]) == 0  # no hidden card can make a group with it
        rank_of_card = RANK_MASKS[cards % 13]
        suji = np.zeros(len(rows), np.uint64)
        r, s = cards % 13, cards // 13
        for delta in (-3, 3):
            ok = (r + delta >= 0) & (r + delta <= 12)
            suji[ok] |= BITS[13 * s[ok] + r[ok] + delta]
        safety = np.zeros(len(rows), np.int64)
        for k in range(P - 1):
            theirs = d["discarded"][idx[rows], k + 1]
            partial = ((theirs & rank_of_card) != 0) | ((theirs & suji) != 0)
            level = np.where(dead, 2, np.where(partial, 1, 0))
            safety += np.where(threat[rows, k], level, 0)
        order = np.lexsort((cards, dist, -safety, rows))
        first = order[np.r_[True, rows[order][1:] != rows[order][:-1]]]
        defend = np.full(len(idx), -1, np.int64)
        defend[rows[first]] = cards[first]
        push = best <= self.push_distance  # close to winning: play to win
        return np.where(push | ~threat.any(axis=1), greedy_choice, defend)
