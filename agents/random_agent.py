"""``random``: a uniformly random legal action."""

from __future__ import annotations

import numpy as np

from agents.base import Agent


class RandomAgent(Agent):
    name = "random"

    def __init__(self, rules=None, seed: int = 0) -> None:
        super().__init__(rules, seed)
        self.rng = np.random.default_rng(seed)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks).astype(bool)
        noise = self.rng.random(masks.shape)
        noise[~masks] = -1.0
        return noise.argmax(axis=1).astype(np.int64)
