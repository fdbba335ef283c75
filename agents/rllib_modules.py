"""RLlib modules of the league (``pip install 'meld8[rllib]'``; imports Ray).

- :class:`CardHeadsRLModule` (network ``card_heads``, the default): PPO's actor-critic over the
  observation with look-ahead features - the trunk MLP reads ``observations`` (``log1p`` of the raw
  values), the card and call heads of ``agents.card_net`` read the raw values back (``expm1``), the
  logits of illegal actions are pushed to the float minimum by ``action_mask``, and the value head
  reads the same latent (the trunk output and the card / call inputs), as SB3's ``card_heads`` policy
  does. Shapes: ``observations`` (N, D) float32, ``action_mask`` (N, 64) float32 -> logits (N, 64),
  values (N,).
- network ``mlp``: RLlib's own action-masking PPO module (``ActionMaskingTorchRLModule``) over an MLP.
- :class:`BotRLModule`: a built-in bot (the league's fixed opponents) that computes its actions
  itself and learns nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from torch import nn

from agents.card_net import CardHeads, CardInputs, mlp
from meld8_env.agent_spec import load_agent
from meld8_env.observation import obs_size
from meld8_env.rules import RuleConfig

NETWORKS = ("card_heads", "mlp")


class CardHeadsRLModule(TorchRLModule, ValueFunctionAPI):
    """PPO module with per-card action heads (see the module docstring); model_config: ``hidden``,
    ``obs_size`` (the engine's part of the observation), ``players``."""

    def setup(self) -> None:
        cfg = self.model_config
        size = int(self.observation_space["observations"].shape[0])
        self.trunk, width = mlp(size, tuple(int(h) for h in cfg["hidden"]))
        self.inputs = CardInputs(cfg["obs_size"], cfg["players"])
        self.heads = CardHeads(width, self.inputs.card_k, self.inputs.call_k, int(self.action_space.n))
        self.vf = nn.Linear(width + self.inputs.size, 1)

    def _latent(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        x = obs["observations"]
        return torch.cat([self.trunk(x), self.inputs.flat(torch.expm1(x))], dim=1)

    def _logits(self, obs: dict[str, torch.Tensor], latent: torch.Tensor) -> torch.Tensor:
        return self.heads(latent).masked_fill(obs["action_mask"] < 0.5, torch.finfo(torch.float32).min)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: self._logits(obs, self._latent(obs))}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        latent = self._latent(obs)  # kept for the value head: one trunk pass per minibatch
        return {Columns.ACTION_DIST_INPUTS: self._logits(obs, latent), Columns.EMBEDDINGS: latent}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            embeddings = self._latent(batch[Columns.OBS])
        return self.vf(embeddings).squeeze(-1)


class BotRLModule(TorchRLModule):
    """A built-in bot as an RLlib module; model_config: ``bot``, ``rules`` (dict), ``obs_size``."""

    def setup(self) -> None:
        cfg = self.model_config
        self.bot = load_agent(cfg["bot"], RuleConfig.from_dict(cfg["rules"]), cfg.get("seed", 0))
        self._dummy = nn.Parameter(torch.zeros(1), requires_grad=False)  # a module must hold a tensor

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        base = self.model_config["obs_size"]  # the engine's part (look-ahead features may follow)
        raw = np.rint(np.expm1(obs["observations"].cpu().numpy()[:, :base])).astype(np.uint8)
        masks = obs["action_mask"].cpu().numpy() > 0.5
        return {Columns.ACTIONS: torch.as_tensor(self.bot.act_batch(raw, masks))}


def learner_module_spec(network: str, hidden: list[int], rules: RuleConfig) -> RLModuleSpec:
    """RLModuleSpec of a learning policy (and its frozen snapshots) of ``network`` (see NETWORKS)."""
    if network == "card_heads":
        config = {"hidden": list(hidden), "obs_size": obs_size(rules), "players": rules.num_players}
        return RLModuleSpec(module_class=CardHeadsRLModule, model_config=config)
    if network == "mlp":
        from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

        return RLModuleSpec(
            module_class=ActionMaskingTorchRLModule,
            model_config={"fcnet_hiddens": list(hidden), "head_fcnet_hiddens": [], "vf_share_layers": False},
        )
    raise ValueError(f"unknown RLlib network {network!r}; choose one of {', '.join(NETWORKS)}")


def bot_module_spec(bot: str, rules: RuleConfig) -> RLModuleSpec:
    """RLModuleSpec of a non-learning module that plays the built-in bot ``bot``."""
    config = {"bot": bot, "rules": rules.to_dict(), "obs_size": obs_size(rules)}
    return RLModuleSpec(module_class=BotRLModule, model_config=config)
