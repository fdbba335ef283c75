"""RLlib policies as agents: ``rllib:PATH`` plays wherever an agent spec is taken (batched forward passes).

``PATH`` is a policy folder written by ``meld8 train --backend rllib`` (``best/``, ``policy_it<N>/``, or
a run's output folder, meaning its ``best/``): ``meld8.json`` (what network, which rules, which
observation layout) and ``weights.npz`` (the module's weights as plain arrays). Loading reads arrays
only (``numpy.load(allow_pickle=False)``): nothing in the folder can run code - unlike RLlib's own
checkpoints, which are pickles (those stay in ``checkpoint/`` for resuming training only).

The modules themselves (the learner's network, the bots) are in ``agents.rllib_modules``. Folders
written before the ``network`` key existed hold RLlib's MLP module (``network: mlp``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from meld8_env.agent import Agent, CheckpointError
from meld8_env.observation import obs_size
from meld8_env.rules import RuleConfig

FORMAT = "meld8-rllib-policy"
META, WEIGHTS = "meld8.json", "weights.npz"


def export_policy(
    module, folder: str | Path, network: str, hidden: list[int], rules: RuleConfig, extra: dict | None = None
) -> Path:
    """Write ``module``'s weights (plain arrays) and metadata into ``folder`` (a policy agents can load)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: np.asarray(v) for k, v in module.get_state(inference_only=True).items()}
    np.savez(folder / WEIGHTS, **state)
    meta = {"format": FORMAT, "network": network, "hidden": list(hidden), "rules_hash": rules.rules_hash,
            "players": rules.num_players, "obs_size": obs_size(rules), **(extra or {})}  # fmt: skip
    (folder / META).write_text(json.dumps(meta, indent=1))
    return folder


class RllibPolicyAgent(Agent):
    """A policy exported by the RLlib backend, acting greedily (the most probable legal action)."""

    name = "rllib"

    def __init__(self, path: str | Path, rules: RuleConfig | None = None, seed: int = 0) -> None:
        super().__init__(rules, seed)
        folder = Path(path)
        if folder.is_dir() and not (folder / META).exists() and (folder / "best" / META).exists():
            folder = folder / "best"  # a run's output folder: its best policy
        if not (folder / META).is_file() or not (folder / WEIGHTS).is_file():
            raise CheckpointError(
                f"{path}: not an RLlib policy of meld8 (expected a folder with {META} and {WEIGHTS}, written by "
                "meld8 train --backend rllib: OUT/best or OUT/policy_it<N>)"
            )
        try:
            self.meta = json.loads((folder / META).read_text())
        except json.JSONDecodeError as exc:
            raise CheckpointError(f"{folder / META}: not JSON ({exc.msg})") from None
        if self.meta.get("format") != FORMAT:
            raise CheckpointError(f"{folder / META}: not meld8 RLlib policy metadata")
        self.path = str(folder)
        try:
            with np.load(folder / WEIGHTS, allow_pickle=False) as z:
                self._state = {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{folder / WEIGHTS}: unreadable weights ({exc})") from None
        self._module = None
        self.setup(self.rules)

    def setup(self, rules: RuleConfig) -> None:
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
            spec = learner_module_spec(self.meta.get("network", "mlp"), self.meta["hidden"], self.rules)
        except (ValueError, KeyError) as exc:
            raise CheckpointError(f"{self.path}: {META} names no network meld8 can build ({exc})") from None
        spec.observation_space = env.observation_spaces["seat_0"]
        spec.action_space = env.action_spaces["seat_0"]
        spec.inference_only = True
        module = spec.build()
        try:
            module.set_state(self._state)
        except RuntimeError as exc:
            raise CheckpointError(
                f"{self.path}: the weights do not fit the network its metadata names ({exc})"
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
