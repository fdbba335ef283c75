"""The agent contract: what every player of a Meld8 seat is - bots, trained policies, user code.

An agent has a ``name`` (str) and:

- ``setup(rules)`` before play (the rule config it plays under; may raise when it cannot play them),
- ``act(obs, mask) -> int`` for one observation (D,) uint8 and mask (64,) bool,
- ``act_batch(obs, masks) -> int64[B]`` for a batch (B, D) / (B, 64) in one call,
- ``close()`` when it is no longer needed (ends processes, frees files; a no-op for most).

``wants_infoset`` (default False): an agent that sets it True (a search agent) is called by the
``Table`` as ``act_batch(obs, masks, infosets=[InfoSet, ...])`` with the acting seat's information set
(``meld8_env.infoset``) per row - what that seat may know, never the true record.
``wants_records`` (default False): a CHEATING diagnostic (``agents.oracle.OracleAgent``) that decides from the
TRUE engine records, ``act_batch(obs, masks, records=...)``. No table or face hands them out; only the
evaluation harnesses ``training.search_eval`` and ``bench/search_regret.py`` do, so its numbers are yardsticks,
never results.
``plays_streams`` (default False): the agent plays through the seat protocol's event streams
(:class:`StreamAgent`, e.g. ``meld8_env.seat_process.ExternalAgent``), not through ``act_batch``.
``reseed(seed)`` (optional): play on as if made with ``seed``, without loading anything again. A face that re-seeds
the agents it loaded by name (``Meld8VectorEnv.reset(seed=S)``) calls it where the agent's own class declares it
(:func:`reseed_in_place`), and loads the agent again from its name otherwise: a subclass that inherits ``reseed``
may keep more seed-made state than the method knows of.

Faces take any object honouring :class:`AgentProtocol`; :func:`as_agent` is the one place that adapts
an object lacking ``setup`` / ``close`` (user code written against the older protocol), so no caller
probes for them. Agents are found by name in ``meld8_env.agent_spec`` (built-ins are ``module:Class``
strings resolved at run time: this layer never imports ``agents``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from meld8_env.rules import RuleConfig

BUILTIN: dict[str, str] = {
    "random": "agents.random_agent:RandomAgent",
    "greedy": "agents.greedy:GreedyAgent",
    "defensive": "agents.defensive:DefensiveAgent",
}
"""The built-in bots, registered as ``module:Class`` strings (imported only when a spec names them)."""


@runtime_checkable
class AgentProtocol(Protocol):
    """What faces call on an agent (``name``, ``act``, ``act_batch``); see the module docstring."""

    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int: ...

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class StreamAgent(Protocol):
    """An agent that plays through the seat protocol's event streams (``plays_streams = True``), seated
    by ``meld8_env.table.Table``: each game seat it plays is a stream ``key``. ``open_stream(key, info)``
    when the game starts (``info``: its ``seat`` and labels, never the game's seed, which would tell it every hidden
    card), ``feed(key, events)`` with that seat's events (``meld8_env.protocol``),
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
    """Base of the contract: implement ``act_batch``; ``act`` is a batch of one."""

    name = "agent"
    wants_infoset = False
    wants_records = False
    plays_streams = False

    def __init__(self, rules: RuleConfig | None = None, seed: int = 0) -> None:
        self.rules = rules or RuleConfig()
        self.seed = seed

    def setup(self, rules: RuleConfig) -> None:
        self.rules = rules

    def close(self) -> None:
        """Nothing to release by default."""

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(obs)[None, :], np.asarray(mask)[None, :])[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class AdaptedAgent(Agent):
    """An object with ``name`` / ``act`` / ``act_batch`` lacking ``setup`` or ``close``, given the full
    contract: ``setup`` records the rules (and calls the object's own, if any), ``close`` calls the
    object's own or does nothing; every other attribute is the object's."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner
        self.name = str(getattr(inner, "name", type(inner).__name__))
        self.wants_infoset = bool(getattr(inner, "wants_infoset", False))
        self.plays_streams = bool(getattr(inner, "plays_streams", False))  # its stream methods are the inner's

    def setup(self, rules: RuleConfig) -> None:
        super().setup(rules)
        if callable(getattr(self.inner, "setup", None)):  # it may have one of the two
            self.inner.setup(rules)

    def close(self) -> None:
        if callable(getattr(self.inner, "close", None)):
            self.inner.close()

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.inner.act(obs, mask))

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, **kwargs: Any) -> np.ndarray:
        return self.inner.act_batch(obs, masks, **kwargs)

    def __getattr__(self, attr: str) -> Any:  # only reached for names the adapter lacks
        try:
            inner = self.__dict__["inner"]
        except KeyError:
            raise AttributeError(attr) from None
        return getattr(inner, attr)


class CheckpointError(ValueError):
    """A trained agent's files that are missing, unreadable, or made for other observations or rules."""


CONTRACT = ("setup", "close")


def reseed_seed_only(agent: Any, seed: int) -> None:
    """``reseed`` of an agent whose play never reads its seed (fixed tie-breaks, a network's most probable action):
    only the seed it reports changes. A class declares it in its body (``reseed = reseed_seed_only``)."""
    agent.seed = seed


def reseed_in_place(agent: object, seed: int) -> bool:
    """Re-seed ``agent`` through the ``reseed`` its own class declares (True), or do nothing (False: load it again
    to re-seed it). The class's own body, as ``c_twin`` is read: a subclass inheriting ``reseed`` may hold more
    seed-made state (the review of session 36: a GreedyAgent subclass drawing from ``self.seed`` kept its seed)."""
    method = type(agent).__dict__.get("reseed")
    if method is None:
        return False
    agent.reseed(seed)  # type: ignore[attr-defined]
    return True


def as_agent(obj: Any) -> Any:
    """``obj`` itself when it honours the whole contract (methods ``setup`` and ``close`` included),
    else an :class:`AdaptedAgent` around it; TypeError (one line) when it is no agent at all (neither
    :class:`AgentProtocol` nor a :class:`StreamAgent`)."""
    if not isinstance(obj, AgentProtocol) and not (plays_streams(obj) and isinstance(obj, StreamAgent)):
        raise TypeError(
            f"{obj!r} is not an agent: it needs name, act and act_batch (meld8_env.agent.Agent) or the stream "
            "methods of meld8_env.agent.StreamAgent"
        )
    if isinstance(obj, Agent) or all(callable(getattr(obj, m, None)) for m in CONTRACT):
        return obj
    return AdaptedAgent(obj)


def plays_streams(agent: object) -> bool:
    """Whether ``agent`` plays through the seat protocol's event streams."""
    return bool(getattr(agent, "plays_streams", False))


def wants_infoset(agent: object) -> bool:
    """Whether ``agent`` asks for the acting seat's information set with each decision."""
    return bool(getattr(agent, "wants_infoset", False))


def wants_records(agent: object) -> bool:
    """Whether ``agent`` is a CHEATING diagnostic that decides from the true engine records."""
    return bool(getattr(agent, "wants_records", False))


def records_refusal(spec: str, where: str) -> str:
    """The one wording for refusing a CHEATING diagnostic (:func:`wants_records`) where ``where`` (a tournament, the
    browser table, training) never hands out the true records; the faces raise it in their own error type."""
    return (
        f"agent {spec!r} is a CHEATING diagnostic that decides from the true records, which {where} never hands "
        "out: play it with python -m training.search_eval"
    )
