"""Action spaces shared by the faces."""

from __future__ import annotations

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

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None:
            mask = self._legal_mask().astype(np.int8)
        return super().sample(mask=mask, probability=probability)
