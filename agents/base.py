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


@runtime_checkable
class StreamAgent(Protocol):
    """An agent that plays through the seat protocol's event streams (``plays_streams = True``), seated
    by ``meld8_env.table.Table``: each game seat it plays is a stream ``key``. ``open_stream(key, info)``
    when the game starts, ``feed(key, events)`` with that seat's events (``meld8_env.protocol``),
    ``flush()`` when its requests should go out, ``act_streams(keys, obs, masks)`` for one answer per
    pending request (the observations and masks are there for a fallback), ``close_stream(key)`` when
    the game ends, returning the stream's faults (dicts with ``kind``, ``detail``, optional ``line``)."""

    name: str
    plays_streams: bool

    def open_stream(self, key: int, info: dict) -> None: ...

    def feed(self, key: int, events: list[dict]) -> None: ...

    def flush(self) -> None: ...

    def act_streams(self, keys: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray: ...

    def close_stream(self, key: int) -> list[dict]: ...


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
