"""Any MaskablePPO checkpoint as an agent: ``act_batch`` is one forward pass for all games.

A checkpoint trained on look-ahead features (``training.features``) has a larger observation size;
the agent recognises it by that size and computes the same features before the forward pass.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.base import Agent
from meld8_env.engine.fast import FastBatch
from meld8_env.rules import RuleConfig
from training.features import augment, augmented_size


class PolicyAgent(Agent):
    name = "ppo"

    def __init__(self, path: str | Path, rules: RuleConfig | None = None, seed: int = 0, deterministic: bool = True):
        super().__init__(rules, seed)
        from sb3_contrib import MaskablePPO

        self.path = str(path)
        if not Path(path).is_file():
            raise FileNotFoundError(f"checkpoint not found: {path}")
        self.model = MaskablePPO.load(self.path, device="cpu")
        self.deterministic = deterministic
        self._check(self.rules)

    def _check(self, rules: RuleConfig) -> None:
        plain = FastBatch(1, rules).obs_size
        got = int(self.model.observation_space.shape[0])
        if got not in (plain, augmented_size(rules)):
            raise ValueError(
                f"checkpoint {self.path} expects observations of size {got}; these rules give {plain} "
                f"({augmented_size(rules)} with look-ahead features)"
            )
        self.features = got != plain

    def setup(self, rules: RuleConfig) -> None:
        self._check(rules)
        self.rules = rules

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(obs), np.asarray(masks)
        if self.features:
            obs = augment(obs, masks, self.rules)
        actions, _ = self.model.predict(obs, action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(-1)
