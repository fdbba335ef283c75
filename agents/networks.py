"""Policy networks for MaskablePPO on Meld8 observations (``TrainConfig.network``).

- ``separate``: SB3's default MLP policy, separate policy and value networks ``net_arch`` each.
- ``shared``: one trunk ``net_arch`` (ReLU) feeds both heads (``Meld8Trunk``): half the compute of
  the forward and backward passes, the largest cost of training once the engine is fast.
- ``card_heads`` (needs the look-ahead features of ``agents.lookahead``): the shared trunk, plus
  action heads that score each discard from its own card's features (in hand, distance after the
  discard, acceptance, danger to each opponent) and each call from its features (distance after it,
  yaku possible, distance now), with weights shared across cards (``Meld8Policy``). A discard's logit
  = trunk logit + card head(card features), so "discard the card that leaves the hand closest to
  winning" is a linear rule instead of 52 separate input-to-output mappings for the trunk to learn.

Observations are ``uint8`` flags and counts (card ids up to 53, scores around 128); SB3 passes them on
as floats unscaled, so the trunks read ``log1p(obs)`` (flags stay distinct, big counts stop dominating)
and the card-head inputs are scaled to about [0, 1].
"""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from agents.checkpoint import NETWORKS  # one list of network kinds
from agents.lookahead import N_CALLS, feature_layout
from meld8_env.actions import PASS, PON_BASE

N_CARDS = 52  # discard actions 0..51


def _mlp(width: int, hidden: tuple[int, ...]) -> tuple[nn.Sequential, int]:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    return nn.Sequential(*layers), width


class Meld8Trunk(BaseFeaturesExtractor):
    """Observation (D,) -> shared hidden layers ``hidden`` with ReLU, used by both heads."""

    def __init__(self, observation_space: spaces.Box, hidden: tuple[int, ...] = (256, 256)) -> None:
        net, width = _mlp(int(observation_space.shape[0]), tuple(int(h) for h in hidden))
        super().__init__(observation_space, features_dim=width)
        self.net = net

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(torch.log1p(obs))


class CardFeatureExtractor(BaseFeaturesExtractor):
    """Observation with look-ahead features -> [trunk (H), card features (52*Kc), call features (9*Kk)].

    ``base`` is the plain observation size and ``players`` the number of seats (they fix the layout
    of ``agents.lookahead``).
    """

    def __init__(
        self, observation_space: spaces.Box, hidden: tuple[int, ...] = (256, 256), base: int = 786, players: int = 3
    ) -> None:
        net, width = _mlp(int(observation_space.shape[0]), tuple(int(h) for h in hidden))
        self.card_k = 3 + (players - 1)  # in hand, distance, acceptance, danger per opponent
        self.call_k = 4  # legal, distance after, yaku possible, distance now
        super().__init__(observation_space, features_dim=width + N_CARDS * self.card_k + N_CALLS * self.call_k)
        self.net, self.hidden_dim = net, width
        self.players = int(players)
        self.offsets = {name: off for name, (off, _) in feature_layout(int(base), self.players).items()}

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        o = self.offsets

        def cards_of(off: int) -> torch.Tensor:
            return obs[:, off : off + N_CARDS]

        hand = cards_of(0)  # the observation's hand plane comes first
        dist = cards_of(o["discard_distance"]) / 15.0
        acc = cards_of(o["discard_accept"]) / 16.0
        danger = [cards_of(o["danger"] + 53 * k) / 4.0 for k in range(self.players - 1)]
        cards = torch.stack([hand, dist, acc, *danger], dim=2)  # (N, 52, Kc)
        call_dist = obs[:, o["call_distance"] : o["call_distance"] + N_CALLS]
        yaku = obs[:, o["call_yaku"] : o["call_yaku"] + N_CALLS]
        now = obs[:, o["distance_now"] : o["distance_now"] + 1].expand(-1, N_CALLS)
        calls = torch.stack([(call_dist > 0).float(), call_dist / 15.0, yaku, now / 15.0], dim=2)  # (N, 9, Kk)
        return torch.cat([self.net(torch.log1p(obs)), cards.flatten(1), calls.flatten(1)], dim=1)


class CardHeads(nn.Module):
    """Logits (N, 64) = linear(trunk) + per-card MLP on discard slots + per-call MLP on call slots."""

    def __init__(self, hidden_dim: int, card_k: int, call_k: int, n_actions: int = 64, width: int = 32) -> None:
        super().__init__()
        self.hidden_dim, self.card_k, self.call_k = hidden_dim, card_k, call_k
        self.trunk = nn.Linear(hidden_dim, n_actions)
        self.card = nn.Sequential(nn.Linear(card_k, width), nn.ReLU(), nn.Linear(width, 1))
        self.call = nn.Sequential(nn.Linear(call_k, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        h = latent[:, : self.hidden_dim]
        c0 = self.hidden_dim
        c1 = c0 + N_CARDS * self.card_k
        cards = latent[:, c0:c1].reshape(-1, N_CARDS, self.card_k)
        calls = latent[:, c1 : c1 + N_CALLS * self.call_k].reshape(-1, N_CALLS, self.call_k)
        logits = self.trunk(h)
        extra = torch.zeros_like(logits)
        extra[:, :N_CARDS] = self.card(cards).squeeze(-1)
        extra[:, PON_BASE:PASS] = self.call(calls).squeeze(-1)
        return logits + extra


class Meld8Policy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose action net is ``CardHeads`` over ``CardFeatureExtractor``."""

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        ex = self.pi_features_extractor
        self.action_net = CardHeads(ex.hidden_dim, ex.card_k, ex.call_k, int(self.action_space.n))
        nn.init.orthogonal_(self.action_net.trunk.weight, gain=0.01)
        nn.init.zeros_(self.action_net.trunk.bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)


def policy_for(network: str, net_arch: list[int], base: int, players: int) -> tuple[Any, dict[str, Any]]:
    """(policy class or name, policy_kwargs) for MaskablePPO."""
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
            "features_extractor_kwargs": {"hidden": tuple(net_arch), "base": base, "players": players},
            "share_features_extractor": True,
            "net_arch": {"pi": [], "vf": []},
        }
    raise ValueError(f"unknown network {network!r}; choose one of {', '.join(NETWORKS)}")
