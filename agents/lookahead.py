"""Look-ahead features for learning agents: what the bots compute, appended to the observation.

A policy network sees the hand as 53 one-hot bytes; learning from them which discard leaves the hand
closest to winning is a hard combinatorial problem. These features hand it the exact answers the
greedy and defensive bots use (``agents.greedy``, ``agents.defensive``), so learning can spend its
budget on what the bots do not know (when to fold, when to call, which tied discard is better).

``augment(obs, masks, rules)`` -> ``uint8[N, obs_size + extra_size(rules)]``: the observation (any
seat, any phase) followed by, for the observing seat (P players):

| field | size | content |
|---|---|---|
| discard_distance | 53 | legal discard c: 1 + distance to win after discarding c (0 = not legal now) |
| discard_accept | 53 | acceptance count after c where c ties for the smallest distance (else 0) |
| danger | (P-1)*53 | held card c: live, non-furiten wait shapes on c of each opponent (defensive) |
| call_distance | 9 | legal Pon/Chii action: 1 + distance after it and its best discard (0 = not legal) |
| call_yaku | 9 | legal Pon/Chii action: 1 if a yaku stays possible after it (greedy's heuristic) |
| distance_now | 1 | 1 + distance of the concealed hand before acting (0 when not to act) |

Distances are exact over the cards the seat has not seen (``meld8_env.hands.distance_batch``),
clipped to 15 for an unreachable hand. A checkpoint trained with features records it in its metadata
(``agents.checkpoint``), with ``FEATURES_LAYOUT_VERSION``.
"""

from __future__ import annotations

import numpy as np

from agents.defensive import danger
from agents.greedy import call_table, discard_table
from meld8_env.actions import N_CALL_ACTIONS, PON_BASE
from meld8_env.cardmask import REAL, bits_of, discard_masks
from meld8_env.observation import decode, obs_size
from meld8_env.rules import RuleConfig

N_CALLS = N_CALL_ACTIONS
FEATURES_LAYOUT_VERSION = 1
"""Bumped whenever the features below change; checkpoints record the version they were trained on."""
_CLIP = 15


def feature_layout(base: int, players: int) -> dict[str, tuple[int, int]]:
    """Field -> (offset, size) of the appended features, after a plain observation of ``base`` bytes."""
    sizes = [
        ("discard_distance", 53),
        ("discard_accept", 53),
        ("danger", 53 * (players - 1)),
        ("call_distance", N_CALLS),
        ("call_yaku", N_CALLS),
        ("distance_now", 1),
    ]
    out, off = {}, base
    for name, size in sizes:
        out[name] = (off, size)
        off += size
    return out


def extra_size(rules: RuleConfig) -> int:
    return sum(size for _, size in feature_layout(0, rules.num_players).values())


def augmented_size(rules: RuleConfig) -> int:
    return obs_size(rules) + extra_size(rules)


def _code(dist: np.ndarray) -> np.ndarray:
    return (1 + np.minimum(dist, _CLIP - 1)).astype(np.uint8)


def augment(obs: np.ndarray, masks: np.ndarray, rules: RuleConfig) -> np.ndarray:
    """``obs`` (N, obs_size) uint8 and ``masks`` (N, 64) bool -> (N, augmented_size) uint8."""
    obs = np.asarray(obs, dtype=np.uint8)
    masks = np.asarray(masks).astype(bool)
    n, base, P = len(obs), obs_size(rules), rules.num_players
    if obs.ndim != 2 or obs.shape[1] != base:
        raise ValueError(f"augment expects observations of shape (N, {base}), got {obs.shape}")
    out = np.zeros((n, base + extra_size(rules)), np.uint8)
    out[:, :base] = obs
    if n == 0:
        return out
    o = {name: off for name, (off, _) in feature_layout(base, P).items()}
    o_dist, o_acc, o_danger = o["discard_distance"], o["discard_accept"], o["danger"]
    o_call, o_yaku, o_now = o["call_distance"], o["call_yaku"], o["distance_now"]
    d = decode(obs, rules)

    disc = np.flatnonzero(masks[:, :52].any(axis=1))
    if disc.size:
        hands, melds, unseen = d["hand"][disc], d["melds"][disc, 0], d["unseen"][disc]
        rows, cards, dist, accept, best = discard_table(hands, melds, unseen, discard_masks(masks[disc]))
        g = disc[rows]
        out[g, o_dist + cards] = _code(dist)
        out[g, o_acc + cards] = np.minimum(accept, 255).astype(np.uint8)
        out[disc, o_now] = _code(best)

    held_rows, held_cards = bits_of(d["hand"] & REAL)
    for k in range(1, P):
        dk = danger(held_cards, d["unseen"][held_rows], d["discarded"][held_rows, k])
        out[held_rows, o_danger + 53 * (k - 1) + held_cards] = np.minimum(dk, 255).astype(np.uint8)

    claim = np.flatnonzero(masks[:, PON_BASE : PON_BASE + N_CALLS].any(axis=1))
    if claim.size:
        rows, acts, now, dist, yaku = call_table(d, masks, claim, rules.kuikae == "other_end")
        g = claim[rows]
        out[g, o_call + acts - PON_BASE] = _code(dist)
        out[g, o_yaku + acts - PON_BASE] = yaku.astype(np.uint8)
        out[g, o_now] = _code(now)
    return out
