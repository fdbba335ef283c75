"""What several commands share."""

from __future__ import annotations

from meld8_env.paths import nonempty_path
from meld8_env.rules import RuleConfig


def rules_from(spec: str | None, flag: str = "--rules") -> RuleConfig:
    """``--rules``: a YAML path or a built-in name; the defaults when not given. An empty value is refused, not
    read as the defaults: ``--rules "$UNSET_VARIABLE"`` is a mistake to say, not a choice."""
    if spec is None:
        return RuleConfig()
    nonempty_path(spec, flag, "a rule config YAML or a built-in name (default, two_player), or leave it out for the "
                  "default rules")  # fmt: skip
    return RuleConfig.load(spec)


GAME_FILE = "a replay file, or a tournament log (games.jsonl) with --game"
"""What replay, view and review read (their FILE argument)."""


def game_file(value: str) -> str:
    """The FILE of replay / view / review, refused when empty (``.`` was read as 'not a replay')."""
    return nonempty_path(value, "FILE", GAME_FILE)
