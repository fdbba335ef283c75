"""``wary``: greedy's offense with the wait model's defense; honest (it reads its information set only).

For every legal discard c of a decision: the distance to win after it d(c) and its acceptance a(c) (greedy's
``meld8_env.features.discard_table``), and its deal-in risk

    r(c) = 1 - prod_j (1 - ready_prior(info, j) * q_j(c))

over the opponents j, with ``ready_prior`` the belief's fitted P(j ready | public facts) and q_j the per-card
wait model ``meld8_env.wait_model.wait_probs`` (P(c in j's waits | j ready); R29-R33: a Ron needs the card to
be a wait). It discards the c with the smallest ``d(c) + floor(lam * r(c))``, then the most acceptance, then
the smallest risk, then the lowest card: ``lam`` (default 10) is what a certain deal-in costs in steps of
distance, so at ``lam=10`` a risk of 10 % weighs like one step further from winning, and below it acceptance
decides as in ``greedy``. (A first version keyed on the unrounded ``d + lam * r`` let any risk difference
override acceptance; it placed 2.26-2.56 against ``defensive`` + ``greedy`` and this one 2.39 at ``lam=10``:
rounding did not rescue it.) Tsumo, Ron and claims are
``greedy``'s.

Spec ``wary`` or ``wary:lam=20``. It wants information sets (``wants_infoset``): at a table that gives none
it plays as ``greedy`` and counts those decisions in ``fallback_decisions``. Why it exists: ``defensive``'s
danger count (live wait shapes) barely ranks the cards an opponent can Ron (AUC 0.48 in the pilot), the wait
model does (0.80, docs/belief.md), and a greedy that never deals in (the CHEATING ``agents.oracle``) places far
better than either bot. Measured (docs/search_log.md, "Perfect defense, measured"), it places far *worse* than both: at
AUC 0.8 most of the cards it avoids are safe, and the offense it gives up costs more than the deal-ins it saves.
"""

from __future__ import annotations

import numpy as np

from agents.greedy import GreedyAgent
from meld8_env.actions import PASS
from meld8_env.agent import Agent
from meld8_env.belief import ready_prior
from meld8_env.cardmask import discard_masks
from meld8_env.features import discard_table
from meld8_env.observation import decode
from meld8_env.rules import RuleConfig
from meld8_env.spec_options import float_option, spec_options
from meld8_env.wait_model import wait_probs

#: about the ``scale`` that makes ``deal_in_risk`` match the rate of a Ron offered on the discard in bot games:
#: per opponent and card the model says 0.0415 where 0.0198 happens (``bench/belief_quality.py --seed 206``,
#: docs/search_runs/belief_calibration_s27.txt), and the combined risk is 0.078 against 0.036, a ratio of
#: 0.38-0.55 in every risk bin (docs/search_runs/regret_s27_ronscale.txt)
RON_SCALE = 0.45

OPTIONS = {"lam": (float, 10.0, "distance steps a certain deal-in costs (>= 0; 0 = greedy)")}


def deal_in_risk(info, cards: np.ndarray, scale: float = 1.0, ready: dict[int, float] | None = None) -> np.ndarray:
    """r(c) for each card id in ``cards`` (module docstring), from one seat's information set; ``scale``
    multiplies each opponent's ``P(ready) * q_j(c)`` (capped at 1) before they are combined: the model's waits
    ignore the yaku a Ron needs (R29-R30), so on bot games it overstates the chance of a Ron offered on the
    discard about 2x (``RON_SCALE``). ``ready`` ({opponent: P(ready)}) replaces the fitted prior (the search's
    CHEATING ``ron=status`` passes the true statuses)."""
    safe = np.ones(len(cards))
    for j in info.opponents:
        p = ready_prior(info, j) if ready is None else ready[j]
        safe *= 1.0 - np.minimum(1.0, scale * p * wait_probs(info, j)[cards])
    return 1.0 - safe


def deal_in_risk_rows(infos: list, rows: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """r(c) for every entry of a discard table (``rows`` index ``infos``, one information set per decision)."""
    risk = np.zeros(len(rows))
    for k, info in enumerate(infos):
        at = rows == k
        risk[at] = deal_in_risk(info, cards[at])
    return risk


class WaryAgent(Agent):
    name = "wary"
    wants_infoset = True

    def __init__(self, rules: RuleConfig | None = None, seed: int = 0, lam: float = 10.0) -> None:
        super().__init__(rules, seed)
        if not 0.0 <= float(lam) <= 1000.0:
            raise ValueError(f"wary option lam={lam}: must be 0..1000 (distance steps per certain deal-in)")
        self.lam = float(lam)
        self.fallback_decisions = 0
        self._greedy = GreedyAgent(rules=self.rules, seed=seed)

    def setup(self, rules: RuleConfig) -> None:
        self.rules = rules
        self._greedy = GreedyAgent(rules=rules, seed=self.seed)

    def reseed(self, seed: int) -> None:
        """Nothing is drawn from the seed; kept for what it reports."""
        self.seed = seed
        self._greedy.reseed(seed)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, infosets: list | None = None) -> np.ndarray:
        masks = np.asarray(masks).astype(bool)
        out = self._greedy.act_batch(obs, masks)
        if infosets is None:
            self.fallback_decisions += len(masks)
            return out
        # a discard to choose: no Tsumo / Ron taken by greedy, not a claim window, more than one legal card
        disc = np.flatnonzero(~masks[:, PASS] & (out < 52) & (masks[:, :52].sum(axis=1) > 1))
        if disc.size == 0 or self.lam == 0.0:
            return out
        d = decode(np.asarray(obs)[disc], self.rules)
        rows, cards, dist, accept, _ = discard_table(
            d["hand"], d["melds"][:, 0], d["unseen"], discard_masks(masks[disc]), all_acceptance=True
        )
        risk = deal_in_risk_rows([infosets[i] for i in disc.tolist()], rows, cards)
        # the risk counts in whole steps of distance, so that acceptance still decides between discards of
        # about the same risk (a float key would let any risk difference, however small, override it)
        order = np.lexsort((cards, risk, -accept, dist + np.floor(self.lam * risk), rows))
        first = order[np.r_[True, rows[order][1:] != rows[order][:-1]]]
        out[disc[rows[first]]] = cards[first]
        return out


def load_wary(options: str, rules: RuleConfig, seed: int) -> WaryAgent:
    """The agent of spec ``wary`` / ``wary:lam=20`` (ValueError in one line on a bad option)."""
    kwargs = {k: float_option("wary", k, v) for k, v in spec_options(options, "wary", OPTIONS).items()}
    return WaryAgent(rules=rules, seed=seed, **kwargs)
