"""Compatibility name: agent specs are resolved in the env layer, ``meld8_env.agent_spec`` (this module
re-exports its ``load_agent`` for code written against ``agents.registry``)."""

from meld8_env.agent_spec import BUILTIN, AgentLoadError, load_agent, shipped_baseline

__all__ = ["BUILTIN", "AgentLoadError", "load_agent", "shipped_baseline"]
