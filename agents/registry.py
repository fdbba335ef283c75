"""Agents by name: built-in bots (``random``, ``greedy``, ``defensive``), user code as
``module:Class`` (constructed with ``rules=`` and ``seed=`` when it accepts them), a trained
checkpoint as ``ppo:PATH`` / a ``.zip`` path (``agents.policy.PolicyAgent``; ``ppo`` alone is
the baseline shipped in ``agents/models/``), or a bot in any language speaking the seat protocol as
``cmd:COMMAND`` (``agents.external.ExternalAgent``, options in ``BotOptions``)."""

from __future__ import annotations

import importlib
import inspect

from agents.base import AgentProtocol
from agents.external import PREFIX, BotOptions, BotStartError, ExternalAgent
from meld8_env.rules import RuleConfig

BUILTIN = {
    "random": ("agents.random_agent", "RandomAgent"),
    "greedy": ("agents.greedy", "GreedyAgent"),
    "defensive": ("agents.defensive", "DefensiveAgent"),
}


class AgentLoadError(ValueError):
    """An agent spec that names nothing loadable."""


def load_agent(
    spec: str, rules: RuleConfig | None = None, seed: int = 0, trust: bool = False, bots: BotOptions | None = None
) -> AgentProtocol:
    """``random`` / ``greedy`` / ``defensive`` or ``package.module:ClassName`` (imports and runs that code,
    by design), a checkpoint (loaded weights-only; ``trust=True`` lets SB3 unpickle a foreign zip), or
    ``cmd:COMMAND`` (starts that program; ``bots`` sets its timeout, fallback and log folder)."""
    rules = rules or RuleConfig()
    if spec.startswith("rllib:"):
        return _load_rllib(spec.removeprefix("rllib:"), rules, seed)
    if spec.startswith(PREFIX):
        try:
            return ExternalAgent(spec[len(PREFIX) :], rules, seed, bots)
        except BotStartError as exc:
            raise AgentLoadError(str(exc)) from None
    if spec == "search" or spec.startswith("search:"):  # agents.search, options in the spec
        from agents.search import load_search

        try:
            return load_search(spec.removeprefix("search").removeprefix(":"), rules, seed)
        except ValueError as exc:
            raise AgentLoadError(str(exc)) from None
    if spec == "ppo":  # the trained baseline shipped in the package
        return _load_checkpoint(str(shipped_baseline()), rules, seed, trust)
    if spec.startswith("ppo:") or spec.endswith(".zip"):
        return _load_checkpoint(spec.removeprefix("ppo:"), rules, seed, trust)
    if spec in BUILTIN:
        module, cls_name = BUILTIN[spec]
    elif ":" in spec:
        module, cls_name = spec.split(":", 1)
    else:
        raise AgentLoadError(
            f"unknown agent {spec!r}: use one of {', '.join(BUILTIN)}, search (search:worlds=32,...), "
            "ppo (the shipped baseline), "
            "ppo:PATH.zip (a checkpoint), rllib:FOLDER (an RLlib policy), 'package.module:ClassName' or "
            "'cmd:COMMAND' (a seat-protocol bot)"
        )
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise AgentLoadError(f"agent {spec!r}: cannot import module {module!r} ({exc})") from None
    cls = getattr(mod, cls_name, None)
    if cls is None:
        raise AgentLoadError(f"agent {spec!r}: module {module!r} has no {cls_name!r}")
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        params = {}
    kwargs = {k: v for k, v in (("rules", rules), ("seed", seed)) if k in params}
    try:
        agent = cls(**kwargs)
    except Exception as exc:  # user code: report, do not crash deep inside
        raise AgentLoadError(f"agent {spec!r}: constructing {cls_name} failed: {exc}") from None
    if not isinstance(agent, AgentProtocol):
        raise AgentLoadError(f"agent {spec!r} lacks name / act / act_batch (see agents.base.AgentProtocol)")
    return agent


def shipped_baseline():
    """Path of the PPO baseline shipped with the package (agents/models/ppo_baseline.zip)."""
    from importlib.resources import files

    return files("agents") / "models" / "ppo_baseline.zip"


def _load_rllib(path: str, rules: RuleConfig, seed: int) -> AgentProtocol:
    return _load_trained("agents.rllib_policy", "RllibPolicyAgent", "rllib: agents", "rllib", path, rules, seed)


def _load_checkpoint(path: str, rules: RuleConfig, seed: int, trust: bool = False) -> AgentProtocol:
    return _load_trained("agents.policy", "PolicyAgent", "checkpoint agents", "train", path, rules, seed, trust=trust)


def _load_trained(
    module: str, cls: str, what: str, extra: str, path: str, rules: RuleConfig, seed: int, **kwargs
) -> AgentProtocol:
    """A trained agent class of ``module`` loaded from ``path``; a missing extra or a bad file is one
    AgentLoadError line."""
    from agents.checkpoint import CheckpointError

    try:
        agent_class = getattr(importlib.import_module(module), cls)
        return agent_class(path, rules=rules, seed=seed, **kwargs)
    except ModuleNotFoundError as exc:
        raise AgentLoadError(
            f"{what} need the {extra} extra: pip install torch==2.13.0 'meld8[{extra}]' (missing: {exc.name})"
        ) from None
    except CheckpointError as exc:
        raise AgentLoadError(str(exc)) from None
