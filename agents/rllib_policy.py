"""RLlib policies as agents: ``rllib:PATH`` plays wherever an agent spec is taken (batched forward passes).

``PATH`` is a policy folder written by ``meld8 train --backend rllib`` (``best/``, ``policy_it<N>/``, or
a run's output folder, meaning its ``best/``): ``meld8.json`` (what network, which rules, which
observation layout) and ``weights.npz`` (the module's weights as plain arrays). Loading reads arrays
only (``numpy.load(allow_pickle=False)``): nothing in the folder can run code - unlike RLlib's own
checkpoints, which are pickles (those stay in ``checkpoint/`` for resuming training only).

The metadata has the schema of SB3 checkpoints (``agents.checkpoint``: ``features``, ``network``,
``net_arch``, layouts, ``obs_size``, rules) with ``format: meld8-rllib-policy``, and is checked the
same way, against the stored arrays' shapes before any module is built. The modules themselves (the
learner's network, the bots) are in ``agents.rllib_modules``. Folders written before the shared
schema (``hidden``, ``players``; before that no ``network``: RLlib's MLP module) still load.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from agents.checkpoint import VERSION, check_compatible, check_metadata, check_weights_fit, make_metadata
from meld8_env.agent import Agent, CheckpointError
from meld8_env.observation import obs_size
from meld8_env.paths import nonempty_path
from meld8_env.rules import RuleConfig

FORMAT = "meld8-rllib-policy"
META, WEIGHTS = "meld8.json", "weights.npz"


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
    try:
        meta = json.loads((folder / META).read_text())
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"{folder / META}: not JSON ({exc.msg})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{folder / META}: unreadable ({exc})") from None
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


class RllibPolicyAgent(Agent):
    """A policy exported by the RLlib backend, acting greedily (the most probable legal action)."""

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
        try:
            with np.load(folder / WEIGHTS, allow_pickle=False) as z:
                self._state = {k: z[k] for k in z.files}
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:  # cut short, not an npz, ...
            why = " ".join(str(exc).split())[:160]
            raise CheckpointError(f"{folder / WEIGHTS}: unreadable weights ({why})") from None
        if not all(v.dtype.kind == "f" for v in self._state.values()):
            raise CheckpointError(f"{folder / WEIGHTS}: holds arrays that are not weights (non-float)")
        # metadata vs weights before anything is built (a claim of huge layers is refused here)
        check_weights_fit(self.meta, {k: tuple(v.shape) for k, v in self._state.items()}, str(folder))
        self._module = None
        self.setup(self.rules)

    def setup(self, rules: RuleConfig) -> None:
        check_compatible(self.meta, rules, self.path)  # the layouts and input size, as for ppo: checkpoints
        if rules.rules_hash != self.meta["rules_hash"]:
            raise CheckpointError(
                f"{self.path}: trained with rules {self.meta['rules_hash']}, these are {rules.rules_hash}: "
                "its observations would mean something else"
            )
        self.rules = rules

    def _build(self):
        from agents.rllib_modules import learner_module_spec
        from meld8_env.rllib import Meld8MultiAgentEnv

        env = Meld8MultiAgentEnv({"rules": self.rules.to_dict(), "features": bool(self.meta.get("features"))})
        try:
            spec = learner_module_spec(self.meta["network"], self.meta["net_arch"], self.rules)
        except (ValueError, KeyError) as exc:
            raise CheckpointError(f"{self.path}: {META} names no network meld8 can build ({exc})") from None
        spec.observation_space = env.observation_spaces["seat_0"]
        spec.action_space = env.action_spaces["seat_0"]
        spec.inference_only = True
        module = spec.build()
        try:
            module.set_state(self._state)
        except (RuntimeError, KeyError, ValueError) as exc:
            why = " ".join(str(exc).split())[:300]
            raise CheckpointError(
                f"{self.path}: the weights do not fit the network its metadata names ({why})"
            ) from None
        module.eval()
        return module

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        import torch
        from ray.rllib.core.columns import Columns

        from meld8_env.rllib import float_obs

        if self._module is None:
            self._module = self._build()
        encoded = float_obs(np.asarray(obs), np.asarray(masks), self.rules, bool(self.meta.get("features")))
        batch = {k: torch.as_tensor(v) for k, v in encoded.items()}
        with torch.no_grad():
            out = self._module.forward_inference({Columns.OBS: batch})
        logits = out[Columns.ACTION_DIST_INPUTS].cpu().numpy()
        logits = np.where(np.asarray(masks).astype(bool), logits, -np.inf)
        return logits.argmax(axis=1).astype(np.int64)
