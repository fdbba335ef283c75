"""Checkpoint metadata: what a trained policy expects, written into the checkpoint itself.

A MaskablePPO checkpoint is a zip; Meld8 adds one member, ``meld8.json``, beside SB3's own files
(SB3 ignores it when loading). It records how to build and feed the policy, so nothing is guessed
from sizes - and nothing is unpickled: ``agents.networks.load_policy`` rebuilds the network from this metadata
and reads only tensors (``policy.pth``) with ``torch.load(weights_only=True)``. SB3's own ``data``
member is never read by default, because SB3 unpickles it with cloudpickle and a crafted checkpoint
would run code. Loading a foreign zip that needs that (no ``meld8.json``) takes ``trust=True``
(``--trust-checkpoint`` on the command line).

| key | meaning |
|---|---|
| ``format`` | ``meld8-checkpoint`` and ``version`` 1 |
| ``features`` | whether observations carry the look-ahead features (``meld8_env.features``) |
| ``network``, ``net_arch`` | the policy network (``agents.networks``) and its hidden sizes |
| ``obs_layout_version``, ``features_layout_version`` | the layouts it was trained on |
| ``obs_size`` | the size of its input vector |
| ``rules_hash``, ``num_players``, ``rounds`` | the rule set it was trained under |
| ``num_timesteps`` | learner steps when it was saved (``meld8 train`` resumes from it) |
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from meld8_env.agent import CheckpointError
from meld8_env.features import FEATURES_LAYOUT_VERSION, augmented_size
from meld8_env.observation import OBS_LAYOUT_VERSION, obs_size
from meld8_env.rules import RuleConfig

NETWORKS = ("separate", "shared", "card_heads")
"""The policy networks ``agents.networks`` builds (named here, where no torch import is needed)."""
__all__ = [
    "NETWORKS",
    "CheckpointError",
    "check_compatible",
    "load_tensors",
    "make_metadata",
    "read_member",
    "read_metadata",
    "write_metadata",
]
MEMBER = "meld8.json"
FORMAT = "meld8-checkpoint"
VERSION = 1


def make_metadata(rules: RuleConfig, features: bool, network: str, net_arch: list[int]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "features": bool(features),
        "network": network,
        "net_arch": [int(h) for h in net_arch],
        "obs_layout_version": OBS_LAYOUT_VERSION,
        "features_layout_version": FEATURES_LAYOUT_VERSION,
        "obs_size": augmented_size(rules) if features else obs_size(rules),
        "rules_hash": rules.rules_hash,
        "num_players": rules.num_players,
        "rounds": rules.rounds,
    }


def write_metadata(path: str | Path, meta: dict[str, Any]) -> None:
    """Add (or replace) ``meld8.json`` in the checkpoint zip at ``path``."""
    path = Path(path)
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist() if n != MEMBER}
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
        z.writestr(MEMBER, json.dumps(meta, indent=1, sort_keys=True))
    tmp.replace(path)


def read_member(path: str | Path, name: str) -> bytes:
    try:
        with zipfile.ZipFile(path) as z:
            return z.read(name)
    except KeyError:
        raise CheckpointError(f"{path}: no {name} inside") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint zip ({exc})") from None


def load_tensors(path: str | Path, name: str) -> Any:
    """A member saved with torch.save, read with ``weights_only=True`` (tensors and plain data only)."""
    import io

    import torch

    try:
        return torch.load(io.BytesIO(read_member(path, name)), map_location="cpu", weights_only=True)
    except CheckpointError:
        raise
    except Exception as exc:  # the weights-only unpickler refuses anything but tensors and plain data
        why = " ".join(str(exc).split())[:200]
        raise CheckpointError(f"{path}: {name} is not a plain tensor file ({why})") from None


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The checkpoint's metadata; CheckpointError when it is not a Meld8 checkpoint."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        with zipfile.ZipFile(path) as z:
            if MEMBER not in z.namelist():
                raise CheckpointError(
                    f"{path}: no {MEMBER} inside (not written by meld8 train). Loading it would unpickle code "
                    "stored in the file: pass --trust-checkpoint (trust=True) only if you trust its author, or add "
                    "the metadata with agents.checkpoint.write_metadata"
                )
            meta = json.loads(z.read(MEMBER))
    except (zipfile.BadZipFile, OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint zip ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: {MEMBER} is not Meld8 checkpoint metadata")
    if meta.get("version") != VERSION:
        raise CheckpointError(f"{path}: metadata version {meta.get('version')!r}; this meld8 reads {VERSION}")
    return meta


def check_compatible(meta: dict[str, Any], rules: RuleConfig, where: str) -> None:
    """Raise CheckpointError unless a policy with ``meta`` can play under ``rules``."""
    if meta.get("obs_layout_version") != OBS_LAYOUT_VERSION:
        raise CheckpointError(
            f"{where}: trained on observation layout v{meta.get('obs_layout_version')}, this meld8 writes "
            f"v{OBS_LAYOUT_VERSION}"
        )
    if meta.get("features") and meta.get("features_layout_version") != FEATURES_LAYOUT_VERSION:
        raise CheckpointError(
            f"{where}: trained on look-ahead features v{meta.get('features_layout_version')}, this meld8 "
            f"computes v{FEATURES_LAYOUT_VERSION}"
        )
    want = augmented_size(rules) if meta.get("features") else obs_size(rules)
    if meta.get("obs_size") != want:
        raise CheckpointError(
            f"{where}: expects observations of size {meta.get('obs_size')} ({meta.get('num_players')} players, "
            f"{meta.get('rounds')} rounds); these rules give {want}"
        )
