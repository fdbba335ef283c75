"""Look-ahead features (meld8_env.features): they equal what the bots compute, field by field."""

import numpy as np
import pytest

from agents.greedy import GreedyAgent
from meld8_env.actions import PASS, PON_BASE
from meld8_env.cardmask import BITS
from meld8_env.features import N_CALLS, augment, augmented_size, call_table, danger, extra_size
from meld8_env.hands import distance_batch
from meld8_env.observation import decode, obs_size
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector


def _states(rules: RuleConfig, steps: int = 120, n: int = 32):
    """Observations and masks of every seat to act in greedy self-play (all phases)."""
    v = Meld8Vector(n, rules=rules, seed=3)
    v.reset()
    g = GreedyAgent(rules, 0)
    obs, masks = [], []
    for _ in range(steps):
        obs.append(v.observation.copy())
        masks.append(v.action_mask.copy())
        v.step(g.act_batch(v.observation, v.action_mask))
    return np.concatenate(obs), np.concatenate(masks)


@pytest.mark.parametrize("players", [3, 2])
def test_fields_equal_the_bots_computations(players):
    rules = RuleConfig(num_players=players) if players == 3 else RuleConfig.load("configs/rules/two_player.yaml")
    obs, masks = _states(rules)
    f = augment(obs, masks, rules)
    base, P = obs_size(rules), rules.num_players
    assert f.shape == (len(obs), augmented_size(rules)) and augmented_size(rules) == base + extra_size(rules)
    assert np.array_equal(f[:, :base], obs)
    d = decode(obs, rules)
    dist_f, acc_f = f[:, base : base + 53], f[:, base + 53 : base + 106]
    o_call = base + 106 + 53 * (P - 1)
    # discard distances: exactly distance_batch after each legal discard, 0 elsewhere
    rows, cards = np.nonzero(masks[:, :52])
    want = distance_batch(d["hand"][rows] & ~BITS[cards], d["melds"][rows, 0], d["unseen"][rows])
    assert np.array_equal(dist_f[rows, cards], 1 + np.minimum(want, 14))
    illegal = np.ones_like(dist_f, bool)
    illegal[rows, cards] = False
    assert not dist_f[illegal].any() and not acc_f[illegal].any()
    # greedy's discard = the smallest distance feature, then the largest acceptance, then lowest id
    g = GreedyAgent(rules, 0).act_batch(obs, masks)
    disc = np.flatnonzero(masks[:, :52].any(axis=1) & ~masks[:, 52])
    key = np.where(dist_f[disc] > 0, dist_f[disc].astype(int) * 1000 - acc_f[disc], 10**6)
    assert len(disc) > 200 and np.array_equal(key.argmin(axis=1), g[disc])
    # danger of held cards to each opponent = defensive.danger
    for k in range(1, P):
        hr, hc = np.nonzero((d["hand"][:, None] >> np.arange(52, dtype=np.uint64)) & np.uint64(1))
        got = f[hr, base + 106 + 53 * (k - 1) + hc]
        assert np.array_equal(got, danger(hc, d["unseen"][hr], d["discarded"][hr, k]))
    # calls: distance after the call and its best discard, yaku flag, distance now
    claim = np.flatnonzero(masks[:, PON_BASE:PASS].any(axis=1))
    assert claim.size > 5
    r, acts, now, dist, yaku = call_table(d, masks, claim, rules.kuikae == "other_end")
    assert np.array_equal(f[claim[r], o_call + acts - PON_BASE], 1 + np.minimum(dist, 14))
    assert np.array_equal(f[claim[r], o_call + N_CALLS + acts - PON_BASE], yaku.astype(np.uint8))
    assert np.array_equal(f[claim[r], o_call + 2 * N_CALLS], 1 + np.minimum(now, 14))


def test_bad_shape_is_a_clear_error():
    rules = RuleConfig()
    with pytest.raises(ValueError, match=r"shape \(N, 786\)"):
        augment(np.zeros((2, 10), np.uint8), np.zeros((2, 64), bool), rules)
