"""Any MaskablePPO checkpoint written by ``meld8 train`` as an agent: ``act_batch`` is one forward pass
for all games.

The checkpoint's own metadata (``agents.checkpoint``) says whether its observations carry the
look-ahead features (``agents.lookahead``); the agent computes them before the forward pass.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.base import Agent
from agents.checkpoint import check_compatible, read_metadata
from agents.lookahead import augment
from meld8_env.rules import RuleConfig


class PolicyAgent(Agent):
    name = "ppo"

    def __init__(self, path: str | Path, rules: RuleConfig | None = None, seed: int = 0, deterministic: bool = True):
        super().__init__(rules, seed)
        self.path = str(path)
        self.meta = read_metadata(path)
        self.features = bool(self.meta["features"])
        check_compatible(self.meta, self.rules, self.path)
        from sb3_contrib import MaskablePPO

        self.model = MaskablePPO.load(self.path, device="cpu")
        self.deterministic = deterministic

    def setup(self, rules: RuleConfig) -> None:
        check_compatible(self.meta, rules, self.path)
        self.rules = rules

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(obs), np.asarray(masks)
        if self.features:
            obs = augment(obs, masks, self.rules)
        actions, _ = self.model.predict(obs, action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(-1)
