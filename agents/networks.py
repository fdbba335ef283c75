"""Policy networks for MaskablePPO on Meld8 observations (``TrainConfig.network``).

- ``separate``: SB3's default MLP policy, separate policy and value networks ``net_arch`` each.
- ``shared``: one trunk ``net_arch`` (ReLU) feeds both heads (``Meld8Trunk``): half the compute of
  the forward and backward passes, the largest cost of training once the engine is fast.
- ``card_heads`` (needs the look-ahead features of ``meld8_env.features``): the shared trunk, plus
  action heads that score each discard from its own card's features (in hand, distance after the
  discard, acceptance, danger to each opponent) and each call from its features (distance after it,
  yaku possible, distance now), with weights shared across cards (``Meld8Policy``). A discard's logit
  = trunk logit + card head(card features), so "discard the card that leaves the hand closest to
  winning" is a linear rule instead of 52 separate input-to-output mappings for the trunk to learn.

Observations are ``uint8`` flags and counts (card ids up to 53, scores around 128); SB3 passes them on
as floats unscaled, so the trunks read ``log1p(obs)`` (flags stay distinct, big counts stop dominating)
and the card-head inputs are scaled to about [0, 1].

Oracle critic (``TrainConfig.critic = "oracle"``, PerfectDou / Suphx's oracle guiding): during training the
observation is ``[honest (H) | oracle (O)]``, H the card-head input above and O the learner seat's
full-information part (``meld8_env.observation``: every seat's concealed cards, then the wall order;
``O = P*53 + 53``). :class:`OracleCriticPolicy` computes the action logits from the first H columns only
(:class:`HonestCardFeatureExtractor` slices them off before anything else) and the value as the card-head
network's own value head plus a correction ``oracle_critic`` over all H + O columns (an MLP whose output
starts at zero). Its state is a plain ``card_heads`` network's (same names and shapes) plus
``oracle_critic.*``: :func:`actor_state` drops those, so the checkpoint plays as an ordinary ``ppo:PATH``
agent from the honest observation alone (its value head alone is then the honest part of a sum, not a
calibrated value).

:func:`load_policy` rebuilds a checkpoint's network from its metadata (``agents.checkpoint``) and reads
only its tensors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from agents.card_net import CardHeads, CardInputs, ScoreContext, mlp
from agents.checkpoint import (
    NETWORKS,
    CheckpointError,
    check_compatible,
    check_weights_fit,
    load_tensors,
    read_metadata,
)
from meld8_env.actions import NUM_ACTIONS
from meld8_env.observation import layout, obs_size
from meld8_env.rules import RuleConfig


class Meld8Trunk(BaseFeaturesExtractor):
    """Observation (D,) -> shared hidden layers ``hidden`` with ReLU, used by both heads."""

    def __init__(self, observation_space: spaces.Box, hidden: tuple[int, ...] = (256, 256)) -> None:
        net, width = mlp(int(observation_space.shape[0]), tuple(int(h) for h in hidden))
        super().__init__(observation_space, features_dim=width)
        self.net = net

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(torch.log1p(obs))


class CardFeatureExtractor(BaseFeaturesExtractor):
    """Observation with look-ahead features -> [trunk (H), card features (52*Kc), call features (9*Kk)].

    ``base`` is the plain observation size and ``players`` the number of seats (``agents.card_net``).
    """

    def __init__(
        self,
        observation_space: spaces.Box,
        hidden: tuple[int, ...] = (256, 256),
        base: int = 786,
        players: int = 3,
        context: dict[str, int] | None = None,
    ) -> None:
        # context (ScoreContext's arguments, None: none): the score situation joins the trunk's input
        self.context = ScoreContext(**context) if context else None
        extra = self.context.size if self.context else 0
        net, width = mlp(int(observation_space.shape[0]) + extra, tuple(int(h) for h in hidden))
        inputs = CardInputs(base, players)
        super().__init__(observation_space, features_dim=width + inputs.size)
        self.net, self.hidden_dim, self.inputs = net, width, inputs
        self.card_k, self.call_k = inputs.card_k, inputs.call_k

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = torch.log1p(obs)
        if self.context is not None:
            x = torch.cat([x, self.context(obs)], dim=1)
        return torch.cat([self.net(x), self.inputs.flat(obs)], dim=1)


class Meld8Policy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose action net is ``CardHeads`` over ``CardFeatureExtractor``."""

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        ex = self.pi_features_extractor
        self.action_net = CardHeads(ex.hidden_dim, ex.card_k, ex.call_k, int(self.action_space.n))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)


class HonestCardFeatureExtractor(CardFeatureExtractor):
    """``CardFeatureExtractor`` over the first ``honest`` columns of a ``[honest | oracle]`` observation: the
    oracle columns never reach the policy (this slice is the whole guarantee; ``tests/test_oracle_critic.py``)."""

    def __init__(
        self,
        observation_space: spaces.Box,
        hidden: tuple[int, ...] = (256, 256),
        base: int = 786,
        players: int = 3,
        honest: int = 1017,
    ) -> None:
        if not 0 < honest < int(observation_space.shape[0]):
            raise ValueError(f"honest width {honest} must be below the observation's {observation_space.shape[0]}")
        super().__init__(spaces.Box(0, 255, (honest,), np.uint8), hidden, base, players)
        self.honest = int(honest)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return super().forward(obs[:, : self.honest])


class OracleCriticPolicy(Meld8Policy):
    """``Meld8Policy`` (card heads) whose value is the network's own value head plus an oracle correction:
    ``value_net(latent) + oracle_critic(log1p(obs))`` over the whole ``[honest | oracle]`` observation. The
    correction's output layer starts at zero, so a policy fine-tuned from a checkpoint starts with that
    checkpoint's value estimate and the critic only has to learn what the hidden cards add (the ablation
    ``critic: plain`` is the same network without the correction). The action distribution reads the
    honest columns only. ``critic_arch``: the correction's hidden layers (ReLU)."""

    def __init__(self, *args: Any, critic_arch: tuple[int, ...] = (256, 256), **kwargs: Any) -> None:
        self.critic_arch = tuple(int(h) for h in critic_arch)
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        net, width = mlp(int(self.observation_space.shape[0]), self.critic_arch)
        self.oracle_critic = torch.nn.Sequential(*net, torch.nn.Linear(width, 1))
        self.oracle_critic.apply(lambda m: self.init_weights(m, gain=np.sqrt(2)))  # SB3's hidden-layer gain
        torch.nn.init.zeros_(self.oracle_critic[-1].weight)  # no correction until the critic has learned one
        torch.nn.init.zeros_(self.oracle_critic[-1].bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "critic_arch": self.critic_arch}

    def oracle_correction(self, obs: torch.Tensor) -> torch.Tensor:
        """(N, 1): what the critic adds to the honest value head, from raw ``[honest | oracle]`` observations."""
        return self.oracle_critic(torch.log1p(obs.float()))

    # the three places SB3 asks for values; the distribution is the parent's (honest columns only)
    def forward(self, obs, deterministic: bool = False, action_masks=None):
        actions, values, log_prob = super().forward(obs, deterministic, action_masks)
        return actions, values + self.oracle_correction(obs), log_prob

    def evaluate_actions(self, obs, actions, action_masks=None):
        values, log_prob, entropy = super().evaluate_actions(obs, actions, action_masks)
        return values + self.oracle_correction(obs), log_prob, entropy

    def predict_values(self, obs):
        return super().predict_values(obs) + self.oracle_correction(obs)


ORACLE_CRITIC_PREFIX = "oracle_critic."
"""State-dict names of the oracle critic (training only; :func:`actor_state` drops them)."""


def actor_state(state: dict[str, Any]) -> dict[str, Any]:
    """An ``OracleCriticPolicy`` state without the oracle critic: a plain ``card_heads`` network's state."""
    return {k: v for k, v in state.items() if not k.startswith(ORACLE_CRITIC_PREFIX)}


def oracle_critic_policy_for(
    net_arch: list[int], base: int, players: int, honest: int, critic_arch: list[int]
) -> tuple[Any, dict[str, Any]]:
    """(policy class, policy_kwargs) for MaskablePPO on ``[honest | oracle]`` observations: card heads over
    the first ``honest`` columns (``base``: the engine's plain observation size), an oracle critic over all."""
    return OracleCriticPolicy, {
        "features_extractor_class": HonestCardFeatureExtractor,
        "features_extractor_kwargs": {"hidden": tuple(net_arch), "base": base, "players": players, "honest": honest},
        "share_features_extractor": True,
        "net_arch": {"pi": [], "vf": []},
        "critic_arch": tuple(critic_arch),
    }


def context_args(rules: RuleConfig) -> dict[str, int]:
    """``ScoreContext``'s arguments for observations under ``rules``."""
    lay = layout(rules)
    return {
        "players": rules.num_players,
        "rounds": rules.rounds,
        "scores_at": lay["scores"][0],
        "round_at": lay["round"][0],
        "start": min(255, max(0, rules.starting_score // 1000 + 128)),  # the byte the observation would hold
    }


def policy_for(
    network: str, net_arch: list[int], base: int, players: int, context: dict[str, int] | None = None
) -> tuple[Any, dict[str, Any]]:
    """(policy class or name, policy_kwargs) for MaskablePPO; ``context`` (:func:`context_args`, card heads
    only): the score situation joins the trunk's input."""
    if context and network != "card_heads":
        raise ValueError(f"a score context needs the card_heads network, not {network!r}")
    if network == "separate":
        return "MlpPolicy", {"net_arch": list(net_arch)}
    if network == "shared":
        return "MlpPolicy", {
            "features_extractor_class": Meld8Trunk,
            "features_extractor_kwargs": {"hidden": tuple(net_arch)},
            "share_features_extractor": True,
            "net_arch": {"pi": [], "vf": []},
        }
    if network == "card_heads":
        return Meld8Policy, {
            "features_extractor_class": CardFeatureExtractor,
            "features_extractor_kwargs": {
                "hidden": tuple(net_arch),
                "base": base,
                "players": players,
                "context": context,
            },
            "share_features_extractor": True,
            "net_arch": {"pi": [], "vf": []},
        }
    raise ValueError(f"unknown network {network!r}; choose one of {', '.join(NETWORKS)}")


def build_policy(meta: dict[str, Any], rules: RuleConfig):
    """The policy network that ``meta`` describes, with fresh weights (inference: learning rate 0)."""
    context = context_args(rules) if meta.get("context") else None
    cls, kwargs = policy_for(meta["network"], list(meta["net_arch"]), obs_size(rules), int(meta["num_players"]),
                             context)  # fmt: skip
    if cls == "MlpPolicy":
        cls = MaskableActorCriticPolicy
    obs_space = spaces.Box(0, 255, (int(meta["obs_size"]),), np.uint8)
    return cls(obs_space, spaces.Discrete(NUM_ACTIONS), lambda _: 0.0, **kwargs)


def stored_values(state: dict, where: str) -> int:
    """The values ``state``'s tensors really store (each storage once: a shared trunk names its layers twice),
    after checking that every dense tensor stores all of its values: as many places on its storage as values (no
    stride 0 or overlap that makes few stored values many), all of them inside the storage's bytes.
    Red team, session 43: 2.3 KB of tensors of shape (16384, 16384) expanded from one stored float passed the shape
    checks, and building the network they named (and reading them) took gigabytes before anything refused it."""
    import torch

    stored: dict[int, int] = {}
    for k, v in state.items():
        if v.layout != torch.strided:  # refused by load_policy's next check, in its words
            continue
        store = v.untyped_storage()
        # the values the tensor reaches on its storage (a slice reaches fewer than its span, never more)
        reach = 1 + sum((n - 1) * abs(st) for n, st in zip(v.shape, v.stride(), strict=True)) if v.numel() else 0
        if v.numel() > reach or (v.storage_offset() + reach) * v.element_size() > store.nbytes():
            raise CheckpointError(
                f"{where}: tensor {k[:80]!r} of policy.pth claims shape {tuple(v.shape)} but stores fewer values: "
                "a checkpoint holds every weight it names"
            )
        stored[store.data_ptr()] = store.nbytes() // v.element_size()
    return sum(stored.values())


def load_policy(path: str | Path, rules: RuleConfig):
    """(policy, metadata) of a Meld8 checkpoint without unpickling anything; the metadata is checked
    against the stored tensors' shapes before any network is built."""
    meta = read_metadata(path)
    check_compatible(meta, rules, str(path))
    import torch

    state = load_tensors(path, "policy.pth")
    if not isinstance(state, dict) or not all(isinstance(k, str) and torch.is_tensor(v) for k, v in state.items()):
        raise CheckpointError(f"{path}: policy.pth is not a table of named tensors")
    values = stored_values(state, str(path))
    for k, v in state.items():  # red team, session 32: NaN weights failed at the first move, bool weights played
        if v.layout != torch.strided or not v.is_floating_point() or not bool(torch.isfinite(v).all()):
            raise CheckpointError(
                f"{path}: tensor {k[:80]!r} of policy.pth is not dense finite floats ({v.dtype}, {v.layout})"
            )
    if meta.get("critic") == "oracle":  # trained with an oracle critic: it plays without it
        state = actor_state(state)
    check_weights_fit(meta, {k: tuple(v.shape) for k, v in state.items()}, str(path), values)
    policy = build_policy(meta, rules)
    try:
        policy.load_state_dict(state)
    except (RuntimeError, TypeError) as exc:
        why = " ".join(str(exc).split())[:300]  # torch lists every mismatch on its own line
        raise CheckpointError(f"{path}: its weights do not fit the network its metadata names ({why})") from None
    policy.set_training_mode(False)
    return policy, meta
