"""Action spaces shared by the faces."""

from __future__ import annotations

import copy

import numpy as np
from gymnasium import spaces

from meld8_env.actions import NUM_ACTIONS


class LegalDiscrete(spaces.Discrete):
    """``Discrete(64)`` whose ``sample()`` without a mask draws a legal action of the env's current state
    (``contains`` still accepts every id; an illegal one is refused by ``step``). Generic tools that
    probe an env with ``action_space.sample()`` then exercise real play instead of an error."""

    def __init__(self, legal_mask) -> None:
        super().__init__(NUM_ACTIONS)
        self._legal_mask = legal_mask

    def __deepcopy__(self, memo: dict) -> LegalDiscrete:  # a deep copy of an env keeps sampling its copy
        new = LegalDiscrete.__new__(LegalDiscrete)
        memo[id(self)] = new
        new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    def __reduce__(self):
        # a copy sent elsewhere (RLlib ships spaces to its learner and runners) is a plain Discrete(64):
        # the live env it samples from stays here
        return (spaces.Discrete, (NUM_ACTIONS,))

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None:
            mask = self._legal_mask().astype(np.int8)
        return super().sample(mask=mask, probability=probability)
