"""The one protocol every agent follows: bots, trained policies and user code.

``name`` (str), ``act(obs, mask) -> int`` for one observation (D,) and mask (64,), and
``act_batch(obs, masks) -> int64[B]`` for a batch (B, D) / (B, 64) in one call. An agent only sees
what the observation shows. ``setup(rules)`` tells it the rule config before play (optional).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from meld8_env.rules import RuleConfig


@runtime_checkable
class AgentProtocol(Protocol):
    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int: ...

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray: ...


class Agent:
    """Convenience base: implement ``act_batch``; ``act`` is a batch of one."""

    name = "agent"

    def __init__(self, rules: RuleConfig | None = None, seed: int = 0) -> None:
        self.rules = rules or RuleConfig()
        self.seed = seed

    def setup(self, rules: RuleConfig) -> None:
        self.rules = rules

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(obs)[None, :], np.asarray(mask)[None, :])[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError
