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
| ``critic``, ``critic_arch`` | optional: ``oracle`` when the value net read the oracle view (dropped to play) |

The same schema (with ``format`` ``meld8-rllib-policy``) describes the RLlib backend's policy folders
(``agents.rllib_policy``), and both loaders make the same checks in the same order, each failure one
line (:class:`CheckpointError`): the metadata is a JSON object with every field above of the right
type (:func:`check_metadata`), it fits these rules (:func:`check_compatible`), and the stored weights
hold the layers it names (:func:`check_weights_fit`) - **before** any network is built, so metadata
that claims huge layers never makes the loader allocate them.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

from meld8_env.agent import CheckpointError
from meld8_env.config_io import is_int, short_repr
from meld8_env.features import FEATURES_LAYOUT_VERSION, augmented_size
from meld8_env.observation import OBS_LAYOUT_VERSION, obs_size
from meld8_env.paths import nonempty_path
from meld8_env.rules import MAX_ROUNDS, RuleConfig

NETWORKS = ("separate", "shared", "card_heads")
"""The policy networks ``agents.networks`` builds (named here, where no torch import is needed)."""
CONTEXTS = ("scores",)
"""Inputs a ``card_heads`` network may add to its trunk's (metadata ``context``; absent: none): ``scores``, the
score situation read linearly (``agents.card_net.ScoreContext``)."""
CRITICS = ("plain", "oracle")
"""What the value network reads: ``plain`` the policy's own input, ``oracle`` the learner seat's
full-information observation too (training only: the policy never reads it)."""
__all__ = [
    "CRITICS",
    "NETWORKS",
    "CheckpointError",
    "check_compatible",
    "checkpoint_file",
    "load_tensors",
    "make_metadata",
    "read_member",
    "read_metadata",
    "write_metadata",
]
MEMBER = "meld8.json"
FORMAT = "meld8-checkpoint"
VERSION = 1
MAX_HIDDEN = 16_384
"""The largest hidden layer a policy may have (train options are refused above it too)."""
FIELDS: dict[str, type] = {
    "features": bool,
    "network": str,
    "net_arch": list,
    "obs_layout_version": int,
    "features_layout_version": int,
    "obs_size": int,
    "rules_hash": str,
    "num_players": int,
    "rounds": int,
}
"""The fields every policy's metadata holds (SB3 zips and RLlib folders alike) and their types."""


def make_metadata(
    rules: RuleConfig, features: bool, network: str, net_arch: list[int], fmt: str = FORMAT
) -> dict[str, Any]:
    """The metadata of a policy (``fmt``: this module's FORMAT, or the RLlib folders' format)."""
    return {
        "format": fmt,
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


#: the largest member read from a checkpoint (the shipped ones hold a few MB); a zip whose member claims more is
#: refused before it is inflated (a 1 MB zip inflated to 1 GiB, red team, session 32)
MAX_MEMBER = 256 << 20


def read_member(path: str | Path, name: str) -> bytes:
    try:
        with zipfile.ZipFile(path) as z:
            size = z.getinfo(name).file_size
            if size > MAX_MEMBER:
                raise CheckpointError(f"{path}: {name} holds {size:,} bytes, more than {MAX_MEMBER:,}")
            return z.read(name)  # zipfile inflates no more than the size its header says (and checks the CRC)
    except KeyError:
        raise CheckpointError(f"{path}: no {name} inside") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint zip ({exc})") from None


def load_tensors(path: str | Path, name: str) -> Any:
    """A member saved with torch.save, read with ``weights_only=True`` (tensors and plain data only)."""
    import io
    import warnings

    import torch

    data = read_member(path, name)
    try:
        # torch warns in two lines of its own about a pickle protocol it did not write, before it refuses the file:
        # the refusal below is the one line the user sees (red team, session 47)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
            return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # the weights-only unpickler refuses anything but tensors and plain data
        text = str(exc)
        # torch's text advises weights_only=False, the unsafe load meld8 never makes: only its reason is shown
        _, marker, reason = text.partition("WeightsUnpickler error:")
        why = " ".join((reason.split("Check the documentation")[0] if marker else text).split())[:200]
        if marker:
            why = f"it holds pickled objects the weights-only reader refuses: {why}"
        raise CheckpointError(f"{path}: {name} is not a plain tensor file ({why})") from None


def checkpoint_file(path: str | Path) -> Path:
    """``path`` as a checkpoint file to open; CheckpointError when it is empty, missing, or there but no regular
    file: a folder or a device (``ppo:/tmp`` and ``ppo:/dev/zero`` were "checkpoint not found", and
    ``ppo:`` was "checkpoint not found: ." - Path("") is the current folder)."""
    what = "a checkpoint file (as an agent: ppo:PATH.zip, or plain ppo for the shipped baseline)"
    p = Path(nonempty_path(path, "the checkpoint", what, CheckpointError))
    if not p.exists():
        raise CheckpointError(f"checkpoint not found: {p}")
    if not p.is_file():
        kind = "a folder" if p.is_dir() else "a device, pipe or socket"
        # a training run's folder: name the files in it that are checkpoints (a user gave the run's folder)
        try:  # a folder this user cannot search raised PermissionError here (review, session 45)
            inside = [f.name for f in (p / "best.zip", p / "final.zip") if p.is_dir() and f.is_file()]
        except OSError:
            inside = []
        hint = f"; in it: {' or '.join(str(p / n) for n in inside)}" if inside else ""
        raise CheckpointError(f"{p} exists but is not a checkpoint file (a regular .zip file): it is {kind}{hint}")
    return p


TRUST_ADVICE = (
    "Loading it would unpickle code stored in the file: only if you trust its author, add --trust-checkpoint on the "
    "command line, or pass trust=True to load_agent"
)
"""What a foreign checkpoint's refusal advises (a loader the command's trust never reaches says otherwise). Both
switches: the refusal reaches Python callers of ``load_agent`` / ``opponents=`` too, who have no command line (a
newcomer's walkthrough, session 47)."""


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The checkpoint's metadata; CheckpointError when it is not a Meld8 checkpoint."""
    path = checkpoint_file(path)
    try:
        with zipfile.ZipFile(path) as z:
            if MEMBER not in z.namelist():
                raise CheckpointError(f"{path}: no {MEMBER} inside (not written by meld8 train). {TRUST_ADVICE}")
            if z.getinfo(MEMBER).file_size > 1 << 20:  # metadata is a few hundred bytes
                raise CheckpointError(f"{path}: {MEMBER} holds more than 1 MiB; not meld8 metadata")
            if sum(i.filename == MEMBER for i in z.infolist()) > 1:
                raise CheckpointError(f"{path}: {MEMBER} appears twice inside")
            meta = json.loads(z.read(MEMBER))
    except CheckpointError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint zip ({exc})") from None
    return check_metadata(meta, f"{path}: {MEMBER}", FORMAT)


def check_metadata(meta: object, where: str, fmt: str) -> dict[str, Any]:
    """``meta`` if it is policy metadata of format ``fmt`` with every field of :data:`FIELDS`, else
    CheckpointError naming the first thing wrong (``where``: the file, for the message), in one line of at most a
    few hundred characters whatever the field held (a 1 MB string was quoted whole)."""
    if not isinstance(meta, dict):
        raise CheckpointError(f"{where} is not a JSON object (got {type(meta).__name__})")
    if meta.get("format") != fmt:
        raise CheckpointError(
            f"{where} is not Meld8 policy metadata (format {short_repr(meta.get('format'), 40)}, expected {fmt!r})"
        )
    if type(meta.get("version")) is not int or meta["version"] != VERSION:  # not True, not 1.0
        raise CheckpointError(
            f"{where}: metadata version {short_repr(meta.get('version'), 40)}; this meld8 reads {VERSION}"
        )
    for key, kind in FIELDS.items():
        if key not in meta:
            raise CheckpointError(f"{where} lacks the field {key!r}")
        v = meta[key]
        if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
            raise CheckpointError(f"{where}: field {key!r} must be {kind.__name__}, got {short_repr(v)}")
    if not 1 <= meta["rounds"] <= MAX_ROUNDS:  # no rule set has more (red team, session 47: 99 was taken)
        raise CheckpointError(f"{where}: field 'rounds' must be 1..{MAX_ROUNDS} (a rule set's rounds), got "
                              f"{short_repr(meta['rounds'], 40)}")  # fmt: skip
    arch = meta["net_arch"]
    if not arch or not all(is_int(h) and 1 <= h <= MAX_HIDDEN for h in arch):
        raise CheckpointError(
            f"{where}: net_arch must be a non-empty list of layer sizes 1..{MAX_HIDDEN:,}, got {short_repr(arch)}"
        )
    if fmt == FORMAT and meta["network"] not in NETWORKS:  # (RLlib folders name their own networks)
        raise CheckpointError(
            f"{where}: field 'network' must be one of {', '.join(NETWORKS)}, got {short_repr(meta['network'], 40)}"
        )
    critic = meta.get("critic", "plain")
    if critic not in CRITICS:
        raise CheckpointError(
            f"{where}: field 'critic' must be one of {', '.join(CRITICS)}, got {short_repr(critic, 40)}"
        )
    if critic == "oracle" and meta["network"] != "card_heads":
        raise CheckpointError(
            f"{where}: critic 'oracle' comes only with network 'card_heads', got {short_repr(meta['network'], 40)}"
        )
    return meta


def check_weights_fit(
    meta: dict[str, Any], shapes: dict[str, tuple[int, ...]], where: str, stored: int | None = None
) -> None:
    """Before anything is built: every hidden layer that ``meta`` names is a layer of the stored weights
    (a 2-D weight with that many output units), so metadata cannot make the loader build a network its
    weights do not describe (and allocate what it claims). ``shapes``: stored tensor name -> shape; ``stored``:
    the values really stored, each storage once (``agents.networks.stored_values``; None: the shapes' count)."""
    rows = {s[0] for s in shapes.values() if len(s) == 2}
    arch = meta["net_arch"]
    need = sum(a * b for a, b in zip(arch, arch[1:], strict=False))  # hidden-to-hidden weights, in any network
    have = sum(math.prod(s) for s in shapes.values())
    if stored is not None:  # one stored tensor under many names must not stand for many layers
        have = min(have, stored)
    if need > have:  # red team, session 32: one (4096, 1) tensor let net_arch [4096] * 3 build 2 x 16.8M weights
        raise CheckpointError(
            f"{where}: its metadata names hidden layers {short_repr(arch)}, which take at least {need:,} weights; "
            f"the stored tensors hold {have:,}: metadata and weights do not belong together"
        )
    missing = [h for h in arch if h not in rows]
    if missing:
        have = sorted(rows)
        raise CheckpointError(
            f"{where}: its metadata names hidden layers {short_repr(arch)}, but the stored weights hold no layer of "
            f"{missing[0]} units (layers of {have[:8]}): metadata and weights do not belong together"
        )


def check_compatible(meta: dict[str, Any], rules: RuleConfig, where: str) -> None:
    """Raise CheckpointError unless a policy with ``meta`` can play under ``rules``."""
    if meta.get("obs_layout_version") != OBS_LAYOUT_VERSION:
        raise CheckpointError(
            f"{where}: trained on observation layout v{short_repr(meta.get('obs_layout_version'), 20)}, this meld8 "
            f"writes v{OBS_LAYOUT_VERSION}"
        )
    if meta.get("features") and meta.get("features_layout_version") != FEATURES_LAYOUT_VERSION:
        raise CheckpointError(
            f"{where}: trained on look-ahead features v{short_repr(meta.get('features_layout_version'), 20)}, this "
            f"meld8 computes v{FEATURES_LAYOUT_VERSION}"
        )
    context = meta.get("context")
    if context is not None and (context not in CONTEXTS or meta.get("network") != "card_heads"):
        raise CheckpointError(
            f"{where}: names the input context {short_repr(context, 20)} for network "
            f"{short_repr(meta.get('network'), 20)}; this meld8 knows {', '.join(CONTEXTS)}, for card_heads only"
        )
    if meta.get("num_players") != rules.num_players:  # the network's heads are sized by it before any weight loads
        raise CheckpointError(
            f"{where}: trained for {str(meta.get('num_players'))[:20]} players; these rules seat {rules.num_players}"
        )
    want = augmented_size(rules) if meta.get("features") else obs_size(rules)
    if meta.get("obs_size") != want:
        raise CheckpointError(
            f"{where}: expects observations of size {short_repr(meta.get('obs_size'), 20)} "
            f"({short_repr(meta.get('num_players'), 20)} players, {short_repr(meta.get('rounds'), 20)} rounds); these "
            f"rules give {want}"
        )
