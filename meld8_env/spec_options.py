"""The ``key=value`` options of an agent spec (``search:worlds=32,cands=4``, ``wary:lam=20``).

Options are separated by ``,`` or ``+`` (command lines whose agent lists are comma-separated use ``+``).
Every option is input from outside: a part without ``=``, an unknown key or a key given twice is refused in
one line (a repeated key used to be taken last-wins, so a distillation part stored a spec that named the
other value). Values are read strictly, ASCII only: Python's ``int`` / ``float`` also read ``1_0`` as 10 and
other scripts' digits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection

_INT = re.compile(r"-?[0-9]{1,9}")
_FLOAT = re.compile(r"-?([0-9]{1,12}(\.[0-9]{0,12})?|\.[0-9]{1,12})([eE][-+]?[0-9]{1,3})?")


def spec_options(text: str, agent: str, keys: Collection[str]) -> dict[str, str]:
    """``k=v,k=v`` -> {k: v} for an agent named ``agent`` whose options are ``keys`` (ValueError in one line)."""
    out: dict[str, str] = {}
    parts = [p.strip() for p in text.replace("+", ",").split(",")] if text else []
    if "" in parts:  # dropped silently, so 'search:worlds=1+' was another agent's name for the same agent (s37)
        raise ValueError(f"{agent} options {text[:80]!r}: an empty option (a stray ',' or '+'): give key=value parts")
    for part in parts:
        key, eq, value = part.partition("=")
        last = next(reversed(out), None)
        if not eq and last is not None and (out[last].startswith("ppo:") or "/" in out[last] or "\\" in out[last]):
            # 'prior=ppo:/m/a+b.zip' said "option 'b.zip': use key=value with key one of ..." (red team, session 48)
            raise ValueError(
                f"{agent} option {last}={out[last][:80]} is followed by {part[:40]!r}, which has no '=': a ',' or '+' "
                "separates the options, so a value (a checkpoint path) cannot hold one: rename or move the file"
            )
        if not eq or key not in keys:
            raise ValueError(
                f"{agent} option {part[:80]!r}: use key=value with key one of {', '.join(keys)} (e.g. {agent}:"
                f"{next(iter(keys))}=...)"
            )
        if key in out:
            raise ValueError(f"{agent} option {key} given twice ({out[key][:40]!r} and {value[:40]!r}): give it once")
        out[key] = value
    return out


def int_option(agent: str, key: str, value: str) -> int:
    """An integer option value: ASCII digits, at most 9 of them, an optional minus."""
    if not _INT.fullmatch(value):
        raise ValueError(f"{agent} option {key}={value[:40]!r}: give an integer of at most 9 digits (0-9)")
    return int(value)


def float_option(agent: str, key: str, value: str) -> float:
    """A finite decimal number option value (ASCII digits, a point, an exponent)."""
    if not _FLOAT.fullmatch(value) or not math.isfinite(float(value)):
        raise ValueError(f"{agent} option {key}={value[:40]!r}: give a finite number (digits 0-9, e.g. 20 or 0.5)")
    return float(value)
