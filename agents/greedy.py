"""``greedy``: win when it can, otherwise get closer to winning.

- Tsumo / Ron whenever the mask offers it.
- Discard: the legal discard whose remaining hand has the smallest distance to win (exact, over the
  cards this seat has not seen), ties broken by the number of unseen cards that would bring it one
  step closer (the acceptance count), then by the lowest card id.
- Calls: Pon / Chii only when the call lowers the distance (after the best discard that follows) and
  keeps a yaku possible (heuristic: a crown-rank Pon, a one-colour hand, a Pon with another pair or
  triplet in hand for Toitoi, or a crown meld with only terminal-side cards for Chanta); else pass.

Everything is batched: one ``distance_batch`` call scores every candidate of every game. The kernels
(``discard_table``, ``best_discards``, ``call_table``, ...) are game knowledge shared with the look-ahead
features and live in ``meld8_env.features``; this module is the policy over them. This class is
the readable reference; by default ``act_batch`` runs its exact C twin (``meld8_env/engine/_bots.c``,
``meld8_env.policies``) and ``MELD8_BACKEND=python`` runs the code below.
"""

from __future__ import annotations

import numpy as np

from meld8_env.actions import PASS, RON, TSUMO
from meld8_env.agent import Agent, reseed_seed_only
from meld8_env.cardmask import discard_masks
from meld8_env.features import best_discards, call_table, first_per_row
from meld8_env.observation import decode
from meld8_env.policies import SeatPolicy, act_obs, c_bots_enabled


class GreedyAgent(Agent):
    name = "greedy"
    # the C policy that decides exactly like this class; a subclass runs its Python unless it declares c_twin in its
    # own body (a promise that it decides exactly as that policy: c_policy() then replaces it in whole-game C runs)
    c_twin = "greedy"
    lite = False  # the tie-break by pool size at distance >= 2 (meld8_env.features.discard_table)

    def runs_in_c(self) -> bool:
        return type(self).__dict__.get("c_twin") is not None and c_bots_enabled()

    reseed = reseed_seed_only  # every tie is broken by a fixed rule

    def c_policy(self) -> SeatPolicy | None:
        """This agent as a C policy over engine records (whole games in C, ``meld8_env.rollout.play_games``), or
        None where it runs its Python (``MELD8_BACKEND=python``, a subclass, other options)."""
        return SeatPolicy(self.c_twin) if self.runs_in_c() else None

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
        hands, melds, unseen = d["hand"][idx], d["melds"][idx, 0], d["unseen"][idx]
        card, _, _ = best_discards(hands, melds, unseen, discard_masks(masks[idx]), lite=self.lite)
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


class GreedyLiteAgent(GreedyAgent):
    """``greedy_lite``: greedy whose tie-break between discards that leave two or more cards to win counts the
    pool of unseen neighbours (and the Joker) instead of the exact acceptance: a cheaper model of ``greedy``
    for the search's rollouts (``search:lite=1``). Twin of the C policy ``greedy_lite``."""

    name = "greedy_lite"
    c_twin = "greedy_lite"
    lite = True
    reseed = reseed_seed_only  # declared in the body: meld8_env.agent.reseed_in_place reads only the class's own
