"""Reading YAML config files (rules, training, tournaments) with one set of clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def read_yaml_mapping(path: str | Path, what: str, error: type[Exception] = ValueError) -> dict[str, Any]:
    """The mapping in a YAML file; ``error`` names the file when it is missing, invalid or not a mapping."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise error(f"{what} not found: {p}")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as exc:
        raise error(f"{p}: not valid YAML ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise error(f"{p}: expected a mapping of options, got {type(data).__name__}")
    return data
