"""Any MaskablePPO checkpoint written by ``meld8 train`` as an agent: ``act_batch`` is one forward pass
for all games.

Loading is weights-only (``agents.networks.load_policy``): the network is rebuilt from the
checkpoint's metadata and only tensors are read, so a shared checkpoint cannot run code. The metadata
also says whether observations carry the look-ahead features (``meld8_env.features``); the agent
computes them before the forward pass. ``trust=True`` loads a foreign SB3 zip through SB3 itself,
which unpickles code stored in the file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.checkpoint import CheckpointError, check_compatible, checkpoint_file, read_metadata
from agents.networks import load_policy
from meld8_env.agent import Agent, reseed_seed_only
from meld8_env.features import augment
from meld8_env.observation import obs_size
from meld8_env.rules import RuleConfig


class PolicyAgent(Agent):
    name = "ppo"

    reseed = reseed_seed_only  # the network's most probable action, or torch's own sampler

    def __init__(
        self,
        path: str | Path,
        rules: RuleConfig | None = None,
        seed: int = 0,
        deterministic: bool = True,
        trust: bool = False,
    ):
        super().__init__(rules, seed)
        self.path = str(path)
        self.deterministic = deterministic
        if trust:
            self._load_trusted()
        else:
            self.policy, self.meta = load_policy(path, self.rules)
        self.features = bool(self.meta["features"])

    def _load_trusted(self) -> None:
        """SB3's own loader: it unpickles the zip's ``data`` (code may run). Only on explicit trust."""
        from sb3_contrib import MaskablePPO

        if not Path(self.path).exists() and Path(self.path + ".zip").is_file():
            self.path += ".zip"  # SB3's own convention, which trusted paths always followed
        checkpoint_file(self.path)  # trusted or not, a file: /dev/zero was read until memory ran out (red team, s33)
        try:
            self.meta = read_metadata(self.path)
        except CheckpointError:
            self.meta = None
        if self.meta is not None and self.meta.get("context"):  # SB3's own data names no context: its net misfits
            raise CheckpointError(
                f"{self.path}: reads the input context {str(self.meta['context'])[:40]!r}, which SB3's loader cannot "
                "build; load it without --trust-checkpoint (in Python: without trust=True; weights only)"
            )
        try:  # a zip that is no SB3 save failed in SB3's own assert, a traceback (helper walkthrough, session 46)
            model = MaskablePPO.load(self.path, device="cpu")
            size = int(model.observation_space.shape[0])
        except Exception as exc:  # unpickling a trusted file can raise anything: named in one line
            raise CheckpointError(
                f"{self.path}: SB3 cannot load it as a MaskablePPO checkpoint ({type(exc).__name__}: "
                f"{str(exc)[:200]}); give a checkpoint saved by meld8 train or by MaskablePPO.save"
            ) from None
        self.policy = model.policy
        if self.meta is None:  # a foreign zip: what its observation space says is all there is
            self.meta = {"features": size != obs_size(self.rules), "obs_size": size}

    def setup(self, rules: RuleConfig) -> None:
        if "obs_layout_version" in self.meta:
            check_compatible(self.meta, rules, self.path)
        self.rules = rules

    def probabilities(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(B, 64) float: the policy's probability of each action (illegal ones 0) - the review's numbers."""
        import torch

        obs, masks = np.asarray(obs), np.asarray(masks).astype(bool)
        if self.features:
            obs = augment(obs, masks, self.rules)
        obs_t, _ = self.policy.obs_to_tensor(obs)
        with torch.no_grad():
            dist = self.policy.get_distribution(obs_t, action_masks=masks)
        return dist.distribution.probs.cpu().numpy().reshape(len(masks), -1)

    def decide(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B,) actions and (B, 64) probabilities from one forward pass: ``probabilities``' numbers and the most
        probable legal action of each row, the action a deterministic ``act_batch`` plays (SB3's masked
        categorical's mode is the first argmax of these same probabilities). A search that both ranks
        candidates by the network and keeps its move pays for one pass, not two."""
        if not self.deterministic:
            raise ValueError("decide() gives the most probable action: load the policy with deterministic=True")
        probs = self.probabilities(obs, masks)
        return probs.argmax(axis=1).astype(np.int64), probs

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs, masks = np.asarray(obs), np.asarray(masks)
        if self.features:
            obs = augment(obs, masks, self.rules)
        actions, _ = self.policy.predict(obs, action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(-1)
