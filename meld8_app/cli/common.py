"""What several commands share."""

from __future__ import annotations

from meld8_env.rules import RuleConfig


def rules_from(spec: str | None) -> RuleConfig:
    """``--rules``: a YAML path or a built-in name; the defaults when not given."""
    return RuleConfig.load(spec) if spec else RuleConfig()
