"""Card-head networks in plain torch: the layers both training backends (SB3, RLlib) build on.

Input: observations with the look-ahead features of ``meld8_env.features`` appended, as **raw values**
(N, D) float (the engine's uint8 counts and flags, not ``log1p``). :class:`CardInputs` cuts out, per
discard action, that card's features (in hand, distance to win after discarding it, acceptance, danger
to each opponent) -> (N, 52, 3 + P - 1), and per call action its features (legal, distance after it,
yaku possible, distance now) -> (N, 9, 4), scaled to about [0, 1]. :class:`CardHeads` scores each
discard / call with one small MLP shared by all cards / calls and adds it to a linear head on the trunk:
"discard the card that leaves the hand closest to winning" is then a rule over a handful of weights
instead of 52 separate input-to-output mappings for the trunk to learn.
"""

from __future__ import annotations

import torch
from torch import nn

from meld8_env.actions import PASS, PON_BASE
from meld8_env.features import N_CALLS, feature_layout

N_CARDS = 52  # discard actions 0..51
CALL_K = 4  # legal, distance after, yaku possible, distance now


def mlp(width: int, hidden: tuple[int, ...]) -> tuple[nn.Sequential, int]:
    """Linear + ReLU layers of ``hidden`` units from ``width`` inputs; returns (net, output width)."""
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    return nn.Sequential(*layers), width


class CardInputs:
    """Raw augmented observations (N, D) -> (cards (N, 52, card_k), calls (N, 9, call_k)).

    ``base`` is the engine's observation size and ``players`` the number of seats (they fix the layout
    of ``meld8_env.features``)."""

    def __init__(self, base: int, players: int) -> None:
        self.players = int(players)
        self.card_k = 3 + (self.players - 1)  # in hand, distance, acceptance, danger per opponent
        self.call_k = CALL_K
        self.offsets = {name: off for name, (off, _) in feature_layout(int(base), self.players).items()}

    @property
    def size(self) -> int:
        """Width of the flattened card and call inputs."""
        return N_CARDS * self.card_k + N_CALLS * self.call_k

    def __call__(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        o = self.offsets

        def cards_of(off: int) -> torch.Tensor:
            return obs[:, off : off + N_CARDS]

        hand = cards_of(0)  # the observation's hand plane comes first
        dist = cards_of(o["discard_distance"]) / 15.0
        acc = cards_of(o["discard_accept"]) / 16.0
        danger = [cards_of(o["danger"] + 53 * k) / 4.0 for k in range(self.players - 1)]
        cards = torch.stack([hand, dist, acc, *danger], dim=2)
        call_dist = obs[:, o["call_distance"] : o["call_distance"] + N_CALLS]
        yaku = obs[:, o["call_yaku"] : o["call_yaku"] + N_CALLS]
        now = obs[:, o["distance_now"] : o["distance_now"] + 1].expand(-1, N_CALLS)
        calls = torch.stack([(call_dist > 0).float(), call_dist / 15.0, yaku, now / 15.0], dim=2)
        return cards, calls

    def flat(self, obs: torch.Tensor) -> torch.Tensor:
        """(N, size): the card and call inputs flattened, to follow a trunk's output in a latent."""
        cards, calls = self(obs)
        return torch.cat([cards.flatten(1), calls.flatten(1)], dim=1)


class CardHeads(nn.Module):
    """Latent [trunk (H), card inputs, call inputs] -> logits (N, 64) = linear(trunk) + per-card MLP on
    discard slots + per-call MLP on call slots."""

    def __init__(self, hidden_dim: int, card_k: int, call_k: int, n_actions: int = 64, width: int = 32) -> None:
        super().__init__()
        self.hidden_dim, self.card_k, self.call_k = hidden_dim, card_k, call_k
        self.trunk = nn.Linear(hidden_dim, n_actions)
        self.card = nn.Sequential(nn.Linear(card_k, width), nn.ReLU(), nn.Linear(width, 1))
        self.call = nn.Sequential(nn.Linear(call_k, width), nn.ReLU(), nn.Linear(width, 1))
        nn.init.orthogonal_(self.trunk.weight, gain=0.01)  # start near uniform over the legal actions
        nn.init.zeros_(self.trunk.bias)

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


class ScoreContext:
    """Raw observations (N, D) -> (N, ``size``) floats: the score situation, read linearly.

    The trunks read ``log1p(obs)``, where a score byte (score // 1000 + 128, about 158 at the start) moves by
    about 0.006 per 1,000 points: the network can hardly tell a lead from a deficit, while the search it learns
    from values every outcome by the final placement it leads to (R40). These inputs give it the situation in
    plain units: each seat's score against the start (10,000s), the observer's lead over each opponent, whether
    it is ahead of or behind that opponent, and that lead times the game's progress (the round index over the
    last round's: a lead counts for more late, ``meld8_env.placement``). Seats are relative to the observer, as
    in the observation. ``scores_at`` / ``round_at``: the fields' offsets in the observation
    (``meld8_env.observation.layout``); ``start``: the starting score's byte.
    """

    def __init__(self, players: int, rounds: int, scores_at: int, round_at: int, start: int) -> None:
        self.players, self.rounds = int(players), int(rounds)
        self.scores_at, self.round_at, self.start = int(scores_at), int(round_at), float(start)

    @property
    def size(self) -> int:
        return self.players + 4 * (self.players - 1)

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        s = obs[:, self.scores_at : self.scores_at + self.players]
        rel = (s - self.start) / 10.0
        lead = (s[:, :1] - s[:, 1:]) / 10.0
        rnd = obs[:, self.round_at : self.round_at + self.rounds]
        index = torch.arange(self.rounds, dtype=obs.dtype, device=obs.device)
        # a one-round game's only round is its last
        progress = (rnd * index).sum(dim=1, keepdim=True) / (self.rounds - 1) if self.rounds > 1 else rnd[:, :1]
        ahead, behind = (lead > 0).to(obs.dtype), (lead < 0).to(obs.dtype)
        return torch.cat([rel, lead, ahead, behind, lead * progress], dim=1)
