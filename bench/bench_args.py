"""Argument checks the bench scripts share: a bad value is one line from argparse (exit 2), never a traceback
from deep inside a measurement (helper walkthrough, session 46: ``--states 0`` was an IndexError, a misspelt
agent an AgentLoadError traceback, ``--seconds -1`` rows of zeros).

``at_least(k)`` and ``positive_seconds`` are argparse ``type=`` callables; :func:`load_or_exit` loads an agent
spec or ends the script through ``ap.error`` naming the spec."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}"  # argparse names the type in its own errors
    return parse


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text}")
    return value


def load_or_exit(ap: argparse.ArgumentParser, spec: str, rules: Any, **kwargs: Any) -> Any:
    """``agents.registry.load_agent(spec, rules, **kwargs)``, or ``ap.error`` with its one-line reason."""
    from agents.registry import AgentLoadError, load_agent

    try:
        return load_agent(spec, rules, **kwargs)
    except (AgentLoadError, ValueError) as exc:
        ap.error(str(exc))
