"""Reading YAML config files (rules, training, tournaments) with one set of clear errors.

Configs are taken as a path or as the name of a config shipped in the package
(``meld8_env/configs/<kind>/<name>.yaml``, also reachable as ``configs/`` in a checkout):
``--rules two_player``, ``--config bots``, ``meld8 train ppo_vs_bots``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    raise error(f"{what} not found: {spec} (give a YAML file or a built-in name: {', '.join(builtin_names(kind))})")


def read_yaml_mapping(
    path: str | Path, what: str, error: type[Exception] = ValueError, kind: str | None = None
) -> dict[str, Any]:
    """The mapping in a YAML file (or, with ``kind``, a shipped config named ``path``); ``error`` names
    the file when it is missing, invalid or not a mapping."""
    import yaml

    p = resolve(path, kind, what, error) if kind else Path(path)
    if not p.is_file():
        raise error(f"{what} not found: {p}")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as exc:
        raise error(f"{p}: not valid YAML ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise error(f"{p}: expected a mapping of options, got {type(data).__name__}")
    return data
