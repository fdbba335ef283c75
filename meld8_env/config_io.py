"""Reading options from outside with one set of clear errors: YAML config files (rules, training, tournaments),
integer and on/off arguments (``check_int``, ``check_flag``) and on/off environment variables (``env_flag``).

Configs are taken as a path or as the name of a config shipped in the package
(``meld8_env/configs/<kind>/<name>.yaml``, also reachable as ``configs/`` in a checkout):
``--rules two_player``, ``--config bots``, ``meld8 train ppo_vs_bots``."""

from __future__ import annotations

import functools
import json
import math
import operator
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

KINDS = ("rules", "tournament", "train")


def packaged(kind: str) -> Path:
    """The folder of the configs of one kind shipped with the package."""
    return Path(__file__).resolve().parent / "configs" / kind


def builtin_names(kind: str) -> list[str]:
    return sorted(p.stem for p in packaged(kind).glob("*.yaml"))


def resolve(spec: str | Path, kind: str, what: str, error: type[Exception] = ValueError) -> Path:
    """A config file path: ``spec`` itself when it is a file, else the shipped config of that name."""
    p = Path(spec)
    if p.is_file():
        return p
    name = str(spec)
    if "/" not in name and not name.endswith((".yaml", ".yml")) and (packaged(kind) / f"{name}.yaml").is_file():
        return packaged(kind) / f"{name}.yaml"
    if p.exists():  # a folder, FIFO or device: it was "not found", which it was not
        raise error(f"{what} {p} is not a file (a folder, FIFO or device): give a YAML file")
    raise error(f"{what} not found: {spec} (give a YAML file or a built-in name: {', '.join(builtin_names(kind))})")


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error lines that must stay one short line whatever a
    file held."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


class DuplicateKeyError(ValueError):
    """A JSON object gives one key twice (:func:`no_duplicate_keys`); the message names the key."""


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json object hook: a key given twice is refused (json keeps the last, so a field could be replaced unseen by
    a reader that keeps the first; red team, session 35). Replays, logs, bot lines and web messages read JSON
    through it."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise DuplicateKeyError(f"the key {dup[:40]!r} is given twice in one object")
    return out


class JsonNumberError(ValueError):
    """A number Python's JSON reader takes and the JSON standard does not: ``NaN``, ``Infinity``, or a float beyond
    float64's range (``1e400`` read as inf). Refused where JSON comes from outside (:func:`strict_json_loads`)."""


def _no_constant(name: str) -> Any:
    raise JsonNumberError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonNumberError(f"the number {text[:24]} is beyond a float's range")
    return value


def strict_json_loads(text: str | bytes) -> Any:
    """``json.loads`` for JSON from outside (bot lines, web messages): a key given twice (DuplicateKeyError) and
    ``NaN`` / ``Infinity`` / an overflowing float (JsonNumberError) are refused; a bot's ``"action": NaN`` was
    answered "got nan" and a ``1e400`` "got inf" (red team, session 46). Both errors are ValueErrors."""
    return json.loads(text, object_pairs_hook=no_duplicate_keys, parse_constant=_no_constant, parse_float=_finite_float)


class ConfigSyntaxError(ValueError):
    """A config file this reader refuses before any option is looked at (the message names the line)."""


AMBIGUOUS = "tag:meld8,2026:ambiguous-number"


@functools.cache
def _strict_loader() -> type:
    """yaml.SafeLoader with three changes for hand-written config files:

    - booleans are only ``true`` / ``false`` (YAML 1.2): YAML 1.1 read ``kuikae: off`` (a documented rule
      value) as False, and ``yes`` / ``no`` / ``on`` as booleans too;
    - an alias (``*name``) is refused: a few hundred bytes of nested aliases expand to gigabytes; so is a merge
      key (``<<``), which exists for aliases;
    - a key given twice in one mapping is refused (YAML silently kept the last one);
    - numbers are decimal (YAML 1.2): YAML 1.1 read ``starting_score: 030000`` as octal (12288) and ``seed: 1:00``
      as base 60 (60); such a number, and hex or binary, is refused naming its line (``1_000`` stays 1000).
    """
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise ConfigSyntaxError(f"line {mark.line + 1}: an alias (*name), which config files may not use")
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    line = key_node.start_mark.line + 1
                    raise ConfigSyntaxError(f"line {line}: a merge key (<<), which config files may not use")
                key = self.construct_object(key_node, deep=True)
                try:
                    dup = key in seen
                    seen.add(key)
                except TypeError:  # an unhashable key: the base class says so
                    break
                if dup:
                    line = key_node.start_mark.line + 1
                    raise ConfigSyntaxError(f"line {line}: the key {key!r} is given twice in one mapping"[:200])
            return super().construct_mapping(node, deep)

        def construct_ambiguous(self, node: Any) -> Any:
            raise ConfigSyntaxError(
                f"line {node.start_mark.line + 1}: {node.value[:40]!r} is not a decimal number (YAML 1.1 reads 030 as "
                "octal, 1:30 as base 60): write it in decimal, or quote it if it is text"
            )

    replaced = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
    StrictLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in replaced]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    StrictLoader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
    )
    digits = list("-+0123456789")
    integer = r"[-+]?(?:0|[1-9][0-9]*(?:_[0-9]+)*)"
    StrictLoader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(f"^{integer}$"), digits)
    decimal = r"[-+]?(?:0|[1-9][0-9]*)"
    floats = (
        rf"{decimal}\.[0-9]*(?:[eE][-+]?[0-9]+)?",
        r"[-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?",
        rf"{decimal}[eE][-+]?[0-9]+",  # 1e5, as YAML 1.2 reads it (1.1 kept it text)
        r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
    )
    StrictLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float", re.compile(f"^(?:{'|'.join(floats)})$"), [*digits, "."]
    )
    # what YAML 1.1 reads as a number that is not what it looks like: refused, not read as text or as that number
    ambiguous = (
        r"[-+]?0[0-9_]+(?:\.[0-9_]*)?",  # a leading zero: octal in YAML 1.1
        r"[-+]?0[xXbBoO][0-9a-fA-F_]+",  # hex, binary, octal
        r"[-+]?[0-9][0-9_]*(?::[0-9_]+)+(?:\.[0-9_]*)?",  # base 60
    )
    StrictLoader.add_implicit_resolver(AMBIGUOUS, re.compile(f"^(?:{'|'.join(ambiguous)})$"), digits)
    StrictLoader.add_constructor(AMBIGUOUS, StrictLoader.construct_ambiguous)
    return StrictLoader


def load_yaml_text(text: str) -> Any:
    """The YAML document in ``text`` read by the strict loader (see :func:`_strict_loader`); raises
    :class:`ConfigSyntaxError` (one line, naming the line where it can) for anything it refuses."""
    import yaml

    try:
        return yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader subclass
    except ConfigSyntaxError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        raise ConfigSyntaxError(f"{where}not valid YAML ({problem})") from None
    except RecursionError:
        raise ConfigSyntaxError("nested too deeply to read") from None
    except ValueError as exc:  # an integer of more digits than Python converts (its message advises a setting)
        raise ConfigSyntaxError(f"a value that cannot be read ({str(exc).split(';')[0][:100]})") from None


def read_yaml_mapping(
    path: str | Path, what: str, error: type[Exception] = ValueError, kind: str | None = None
) -> dict[str, Any]:
    """The mapping in a YAML file (or, with ``kind``, a shipped config named ``path``), read by
    :func:`load_yaml_text`; ``error`` names the file when it is missing, unreadable, invalid or not a
    mapping (an empty file is an empty mapping: every option at its default)."""
    p = resolve(path, kind, what, error) if kind else Path(path)
    if not p.is_file():
        if p.exists():  # a folder, FIFO or device: it was "not found", which it was not
            raise error(f"{what} {p} is not a file (a folder, FIFO or device): give a YAML file")
        raise error(f"{what} not found: {p}")
    try:
        data = load_yaml_text(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise error(f"{p}: not UTF-8 text") from None
    except OSError as exc:  # a bare "[Errno 13] Permission denied" named no option (red team, session 37)
        raise error(f"{what} {p}: cannot read ({exc.strerror}): give a YAML file you can read") from None
    except ConfigSyntaxError as exc:
        raise error(f"{p}: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise error(f"{p}: expected a mapping of options (key: value lines), got {type(data).__name__}")
    return data


def is_int(value: object) -> bool:
    """An integer as JSON and YAML give them: an int that is not a bool (True is an int in Python)."""
    return isinstance(value, int) and not isinstance(value, bool)


def plain_int(value: object) -> object:
    """A numpy integer as the Python int of the same value; anything else unchanged (validated by its caller)."""
    return int(value) if isinstance(value, np.integer) else value


def check_finite(value: object, what: str) -> float:
    """``value`` as a finite float (Python or numpy numbers, not bools or strings), or ValueError naming ``what``:
    float('x') failed without naming the argument, and nan or inf were taken as rewards."""
    if not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating):
        try:
            if math.isfinite(number := float(value)):
                return number
        except OverflowError:  # an int beyond the float range
            pass
    raise ValueError(f"{what} must be a finite number, got {short_repr(value)}")


def check_int(value: object, what: str, lo: int, hi: int | None = None, error: type[Exception] = ValueError) -> int:
    """``value`` as an int in ``lo..hi`` (``hi`` None: no upper end), or ``error`` naming ``what`` and the range.
    Python and numpy integers are integers; bools, floats and strings are not (``int()`` read 2.5 as 2, True
    as 1 and '3' as 3)."""
    allowed = f"an integer >= {lo}" if hi is None else f"{lo}..{hi} (an integer)"
    if isinstance(value, bool):
        raise error(f"{what} must be {allowed}, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise error(f"{what} must be {allowed}, got {short_repr(value)}") from None
    if n < lo or (hi is not None and n > hi):
        raise error(f"{what} must be {allowed}, got {n}")
    return n


def check_flag(value: object, what: str) -> bool:
    """``value`` as a bool, or ValueError naming ``what``: a switch is True or False (a Python or numpy bool, or the
    integers 0 and 1), never any other truthy value ('no' switched the cheating oracle observation on)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{what} must be True or False, got {short_repr(value)}")


def env_flag(name: str) -> bool:
    """An on/off environment variable (MELD8_NO_REGISTER, MELD8_REQUIRE_NATIVE): unset, "" or "0" is off, "1" is on;
    any other value is refused (only "1" counted, so MELD8_REQUIRE_NATIVE=yes silently required nothing)."""
    value = os.environ.get(name, "")
    if value not in ("", "0", "1"):
        raise ValueError(f"{name} must be 1 (on), or 0, empty or unset (off), got {value!r}")
    return value == "1"
