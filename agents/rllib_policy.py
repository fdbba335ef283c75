"""RLlib policies as agents: ``rllib:PATH`` plays wherever an agent spec is taken (batched forward passes).

``PATH`` is a policy folder written by ``meld8 train --backend rllib`` (``best/``, ``policy_it<N>/``, or
a run's output folder, meaning its ``best/``): ``meld8.json`` (what network, which rules, which
observation layout) and ``weights.npz`` (the module's weights as plain arrays). Loading reads float
arrays only (``.npy`` headers and raw data, never a pickle): nothing in the folder can run code - unlike
RLlib's own checkpoints, which are pickles (those stay in ``checkpoint/`` for resuming training only).

The metadata has the schema of SB3 checkpoints (``agents.checkpoint``: ``features``, ``network``,
``net_arch``, layouts, ``obs_size``, rules) with ``format: meld8-rllib-policy``, and is checked the
same way, against the stored arrays' shapes before any module is built. The modules themselves (the
learner's network, the bots) are in ``agents.rllib_modules``. Folders written before the shared
schema (``hidden``, ``players``; before that no ``network``: RLlib's MLP module) still load.

Everything in the folder is checked when the agent is made, each failure one line (CheckpointError) naming
the file: the metadata is read within bounds (``meld8_env.protocol.loads_bounded``: size, nesting, digits);
``weights.npz`` unpacks to at most ``agents.checkpoint.MAX_MEMBER`` bytes (the bound of the ``ppo:``
loader's tensors), each array's size is checked against its zip header before it is read, and every
weight is a finite float; then the module is built and every tensor it takes must be stored with its
shape. So a tournament refuses a bad policy before it writes anything (the module was built at the
first decision, red team, session 35: after games.jsonl was started).
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from agents.checkpoint import (
    MAX_MEMBER,
    VERSION,
    check_compatible,
    check_metadata,
    check_weights_fit,
    make_metadata,
)
from meld8_env.agent import Agent, CheckpointError, reseed_seed_only
from meld8_env.config_io import short_repr
from meld8_env.observation import obs_size
from meld8_env.paths import nonempty_path
from meld8_env.protocol import ProtocolError, loads_bounded
from meld8_env.rules import RuleConfig
from meld8_env.safe_text import one_line, printable

FORMAT = "meld8-rllib-policy"
META, WEIGHTS = "meld8.json", "weights.npz"
MAX_META = 1 << 20
"""The largest ``meld8.json`` read (it holds a few hundred bytes; the ``ppo:`` loader's bound on its own)."""


def export_policy(
    module,
    folder: str | Path,
    network: str,
    net_arch: list[int],
    rules: RuleConfig,
    features: bool,
    extra: dict | None = None,
) -> Path:
    """Write ``module``'s weights (plain arrays) and metadata into ``folder`` (a policy agents can load):
    the metadata schema of SB3 checkpoints (``agents.checkpoint``) with this format, plus ``extra``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: np.asarray(v) for k, v in module.get_state(inference_only=True).items()}
    np.savez(folder / WEIGHTS, **state)
    meta = {**make_metadata(rules, features, network, net_arch, FORMAT), **(extra or {})}
    (folder / META).write_text(json.dumps(meta, indent=1))
    return folder


def read_policy_metadata(folder: Path, rules: RuleConfig) -> dict:
    """The metadata of a policy folder, checked like an SB3 checkpoint's (``agents.checkpoint``); folders
    written before the shared schema (``hidden``, ``players``, no ``version``) are read as they were."""
    path = folder / META
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_META + 1)  # no more: the file may be anything, of any size
    except OSError as exc:
        raise CheckpointError(f"{path}: unreadable ({exc})") from None
    if len(raw) > MAX_META:
        raise CheckpointError(f"{path}: holds more than {MAX_META:,} bytes; not meld8 metadata")
    try:
        # bounded: a 100,000-deep array made json.loads raise RecursionError and a 5,000-digit integer a
        # ValueError that named no file (red team, session 35)
        meta = loads_bounded(raw, MAX_META)
    except ProtocolError as exc:
        raise CheckpointError(f"{path}: not readable as policy metadata ({exc})") from None
    if isinstance(meta, dict) and meta.get("format") == FORMAT and "version" not in meta:
        meta = _old_metadata(meta, rules)
    return check_metadata(meta, str(folder / META), FORMAT)


def _old_metadata(meta: dict, rules: RuleConfig) -> dict:
    """A folder of the first RLlib exports in today's schema (its obs_size counted no features; the
    layouts were the ones of that time, which are today's: both were introduced before it)."""
    from meld8_env.features import FEATURES_LAYOUT_VERSION, augmented_size
    from meld8_env.observation import OBS_LAYOUT_VERSION

    new = {k: v for k, v in meta.items() if k not in ("hidden", "players")}
    features = bool(meta.get("features"))
    if "hidden" in meta:
        new["net_arch"] = meta["hidden"]
    if "players" in meta:
        new["num_players"] = meta["players"]
    new.setdefault("network", "mlp")
    new.setdefault("rounds", rules.rounds)
    new["features"] = features
    if meta.get("obs_size") == obs_size(rules):
        new["obs_size"] = augmented_size(rules) if features else obs_size(rules)
    return {"version": VERSION, "obs_layout_version": OBS_LAYOUT_VERSION,
            "features_layout_version": FEATURES_LAYOUT_VERSION, **new}  # fmt: skip


def _npy_header(f: Any) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) from the header of the ``.npy`` stream ``f``, which is left at the data."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(f)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(f)
    raise ValueError(f".npy format version {version} (float arrays are written as 1.0 or 2.0)")


_UNREADABLE = (
    OSError,
    ValueError,
    EOFError,
    KeyError,
    RuntimeError,
    NotImplementedError,
    zlib.error,
    zipfile.BadZipFile,
)
"""What reading a zip of arrays raises for a file cut short, not a zip, encrypted, of an unknown compression, ..."""


def _read_weights(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a ``weights.npz`` as native float32, each bound checked before anything is read:
    the file and the unpacked total (its zip headers) at most MAX_MEMBER bytes, every member a ``.npy``
    of floats whose header asks for no more bytes than the member holds (numpy allocates what the header
    says before reading), every value finite. One CheckpointError line naming the file and the array."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CheckpointError(f"{path}: unreadable weights ({exc})") from None
    if size > MAX_MEMBER + (1 << 20):  # before zipfile reads the directory: a huge one lists millions of members
        raise CheckpointError(f"{path}: {size:,} bytes, more than a policy's weights may hold ({MAX_MEMBER:,})")
    state: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            total = sum(i.file_size for i in infos)
            if total > MAX_MEMBER:  # the sizes the headers claim; zipfile inflates no more than that
                raise CheckpointError(
                    f"{path}: its arrays unpack to {total:,} bytes, more than {MAX_MEMBER:,} (the bound on a "
                    "policy's weights)"
                )
            for info in infos:
                name = info.filename.removesuffix(".npy")
                if name == info.filename or name in state:
                    why = "appears twice" if name in state else "is not an array (.npy)"
                    raise CheckpointError(f"{path}: member {short_repr(info.filename)} {why}; not a weights file")
                with z.open(info) as f:
                    shape, fortran, dtype = _npy_header(f)
                    if dtype.kind != "f":
                        raise CheckpointError(
                            f"{path}: array {short_repr(name)} holds {short_repr(str(dtype), 20)}, not floats: "
                            "not weights"
                        )
                    nbytes = math.prod(shape) * dtype.itemsize
                    if min(shape, default=0) < 0 or nbytes > info.file_size:  # (a negative size reads it all)
                        raise CheckpointError(
                            f"{path}: array {short_repr(name)} claims shape {short_repr(shape, 40)} ({nbytes:,} "
                            f"bytes) in a member of {info.file_size:,} bytes"
                        )
                    data = f.read(nbytes)
                if len(data) != nbytes:
                    raise CheckpointError(f"{path}: array {short_repr(name)} is cut short")
                order = "F" if fortran else "C"
                with np.errstate(over="ignore"):  # a value beyond float32 becomes inf: refused just below, unwarned
                    array = np.frombuffer(data, dtype).reshape(shape, order=order).astype(np.float32)  # native copy
                if not np.isfinite(array).all():  # red team, session 35: an all-NaN policy played its first legal move
                    raise CheckpointError(
                        f"{path}: array {short_repr(name)} holds {int((~np.isfinite(array)).sum()):,} values that "
                        "are NaN, infinite or beyond float32: not a trained policy's weights"
                    )
                state[name] = array
    except CheckpointError:
        raise
    except _UNREADABLE as exc:
        raise CheckpointError(f"{path}: unreadable weights ({one_line(str(exc), 160)})") from None
    return state


class RllibPolicyAgent(Agent):
    """A policy exported by the RLlib backend, acting greedily (the most probable legal action). Making
    one checks the whole folder and builds the module (imports Ray: milliseconds once Ray is loaded)."""

    name = "rllib"

    def __init__(self, path: str | Path, rules: RuleConfig | None = None, seed: int = 0) -> None:
        super().__init__(rules, seed)
        folder = Path(nonempty_path(path, "the RLlib policy", "a policy folder (rllib:OUT/best)", CheckpointError))
        if folder.is_dir() and not (folder / META).exists() and (folder / "best" / META).exists():
            folder = folder / "best"  # a run's output folder: its best policy
        if not (folder / META).is_file() or not (folder / WEIGHTS).is_file():
            raise CheckpointError(
                f"{path}: not an RLlib policy of meld8 (expected a folder with {META} and {WEIGHTS}, written by "
                "meld8 train --backend rllib: OUT/best or OUT/policy_it<N>)"
            )
        self.path = str(folder)
        self.meta = read_policy_metadata(folder, self.rules)
        state = _read_weights(folder / WEIGHTS)
        # metadata vs weights before anything is built (a claim of huge layers is refused here)
        check_weights_fit(self.meta, {k: tuple(v.shape) for k, v in state.items()}, str(folder))
        self.setup(self.rules)
        # built now, not at the first decision: a tournament checks its agents by loading them before it
        # writes anything (red team, session 35: weights that did not fit failed after games.jsonl was begun)
        self._module = self._build(state)

    reseed = reseed_seed_only  # the most probable legal action

    def setup(self, rules: RuleConfig) -> None:
        check_compatible(self.meta, rules, self.path)  # the layouts and input size, as for ppo: checkpoints
        if rules.rules_hash != self.meta["rules_hash"]:
            theirs = printable(self.meta["rules_hash"])[:40]  # file text: escapes would reach the terminal raw
            raise CheckpointError(
                f"{self.path}: trained with rules {theirs}, these are {rules.rules_hash}: "
                "its observations would mean something else"
            )
        self.rules = rules

    def _build(self, state: dict[str, np.ndarray]) -> Any:
        """The inference module the metadata names, holding ``state``; CheckpointError unless every tensor of
        that module is stored with its shape (stored arrays it does not take are ignored, as RLlib does)."""
        from agents.rllib_modules import NETWORKS, learner_module_spec  # first: a missing Ray is the extra's hint
        from meld8_env.rllib import Meld8MultiAgentEnv

        network, where = self.meta["network"], f"{self.path}/{META}"
        if network not in NETWORKS:
            raise CheckpointError(
                f"{where}: field 'network' must be one of {', '.join(NETWORKS)}, got {short_repr(network, 40)}"
            )
        if network == "card_heads" and not self.meta["features"]:  # its heads read the look-ahead features
            raise CheckpointError(f"{where}: network 'card_heads' needs features: true, got false")
        env = Meld8MultiAgentEnv({"rules": self.rules.to_dict(), "features": bool(self.meta["features"])})
        spec = learner_module_spec(network, self.meta["net_arch"], self.rules)
        spec.observation_space = env.observation_spaces["seat_0"]
        spec.action_space = env.action_spaces["seat_0"]
        spec.inference_only = True
        module = spec.build()
        for name, tensor in module.state_dict().items():
            want = tuple(tensor.shape)
            have = state[name].shape if name in state else None
            if have != want:
                stored = "no such array" if have is None else f"an array of shape {have}"
                raise CheckpointError(
                    f"{self.path}/{WEIGHTS}: the {network} network {META} names takes {short_repr(name)} of shape "
                    f"{want}; the file holds {stored}: metadata and weights do not belong together"
                )
        try:
            module.set_state(state)
        except (RuntimeError, KeyError, ValueError) as exc:  # the shapes fit: only a check of RLlib's own is left
            why = one_line(str(exc), 300)
            raise CheckpointError(
                f"{self.path}: its weights do not fit the network its metadata names ({why})"
            ) from None
        module.eval()
        return module

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch
        from ray.rllib.core.columns import Columns

        from meld8_env.rllib import float_obs

        encoded = float_obs(np.asarray(obs), np.asarray(masks), self.rules, bool(self.meta.get("features")))
        batch = {k: torch.as_tensor(v) for k, v in encoded.items()}
        with torch.no_grad():
            out = self._module.forward_inference({Columns.OBS: batch})
        logits = out[Columns.ACTION_DIST_INPUTS].cpu().numpy()
        logits = np.where(np.asarray(masks).astype(bool), logits, -np.inf)
        return logits.argmax(axis=1).astype(np.int64)
