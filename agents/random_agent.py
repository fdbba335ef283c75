"""``random``: a uniformly random legal action.

The draw is a deterministic function of (observation, seed): a seeded hash of the observation
picks among the legal actions. So a tournament gives the same games however they are batched,
spread over workers or resumed after a crash, while different seeds give independent players.
By default the same hash runs in C (``meld8_env.policies.act_obs``); ``MELD8_BACKEND=python`` runs it here.
"""

from __future__ import annotations

import numpy as np

from meld8_env.agent import Agent
from meld8_env.engine.seeding import GOLDEN, mix64_array
from meld8_env.observation import obs_size
from meld8_env.policies import SeatPolicy, act_obs, c_bots_enabled

_GOLDEN = np.uint64(GOLDEN)


class RandomAgent(Agent):
    name = "random"

    def __init__(self, rules=None, seed: int = 0) -> None:
        super().__init__(rules, seed)
        self._weights: np.ndarray | None = None

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return self.act_batch_python(obs, masks, c_twin=self.runs_in_c())

    def runs_in_c(self) -> bool:
        return type(self) is RandomAgent and c_bots_enabled()

    def reseed(self, seed: int) -> None:
        """Play as if made with ``seed``: the hash weights are drawn from it again at the next decision."""
        self.seed = seed
        self._weights = None

    def obs_weights(self, size: int) -> np.ndarray:
        """(size,) uint64: the hash's weight of each observation byte (odd, from the seed alone)."""
        if self._weights is None or self._weights.shape[0] != size:
            rng = np.random.default_rng(self.seed)
            self._weights = rng.integers(1, 2**63, size, dtype=np.uint64) | np.uint64(1)
        return self._weights

    def c_policy(self) -> SeatPolicy | None:
        """This agent as a C policy over engine records (the same hash of the acting seat's observation), or None
        where it runs its Python (``MELD8_BACKEND=python``, a subclass)."""
        if not self.runs_in_c():
            return None
        return SeatPolicy("random", self.seed, self.obs_weights(obs_size(self.rules)))

    def act_batch_python(self, obs: np.ndarray, masks: np.ndarray, c_twin: bool = False) -> np.ndarray:
        """The reference decision (``c_twin=True``: the same hash computed in C)."""
        obs = np.atleast_2d(np.asarray(obs))
        masks = np.atleast_2d(np.asarray(masks)).astype(bool)
        self.obs_weights(obs.shape[1])
        if c_twin:
            return act_obs(self.rules, "random", obs, masks, self._weights, self.seed)
        with np.errstate(over="ignore"):
            h = (obs.astype(np.uint64) * self._weights).sum(axis=1, dtype=np.uint64)
            h = mix64_array(h + _GOLDEN * np.uint64(self.seed + 1))
        counts = masks.sum(axis=1)
        pick = (h % np.maximum(counts, 1).astype(np.uint64)).astype(np.int64)
        order = np.cumsum(masks, axis=1) - 1  # rank of each legal action in its row
        hit = masks & (order == pick[:, None])
        return np.where(counts > 0, hit.argmax(axis=1), 0).astype(np.int64)
