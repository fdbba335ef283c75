"""The PettingZoo face: api_test, seed_test, masks, privacy of observations, rendering."""

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import meld8_env
from meld8_env.observation import layout
from meld8_env.rules import RuleConfig
from meld8_env.testing import scenario

SMALL = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=0)
# PettingZoo exempts its own dict-with-action-mask classics (chess, connect four, leduc, ...) from
# these two advisories by name; meld8 uses the same {"observation", "action_mask"} format.
DICT_OBS_ADVISORIES = ("Observation space for each agent probably should be", "Observation is not a NumPy array")


@pytest.fixture
def strict_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for msg in DICT_OBS_ADVISORIES:
            warnings.filterwarnings("ignore", message=msg)
        yield


def test_api_test(strict_warnings):
    api_test(meld8_env.env(rules=SMALL), num_cycles=3000, verbose_progress=False)


def test_api_test_two_players(strict_warnings):
    api_test(meld8_env.env(rules=RuleConfig.two_player(rounds=1, min_yaku_han=(1,))), num_cycles=1000)


def test_seed_test(strict_warnings):
    seed_test(lambda: meld8_env.env(rules=SMALL), num_cycles=500)


def test_mask_only_for_acting_agent():
    e = meld8_env.env()
    e.reset(seed=1)
    for _ in range(300):
        acting = e.agent_selection
        for a in e.agents:
            mask = e.observe(a)["action_mask"]
            assert (mask.sum() > 0) == (a == acting)
        e.step(int(np.flatnonzero(e.observe(acting)["action_mask"])[0]))


def test_observation_hides_other_hands_and_wall():
    hands = {0: "2c 5d 8d Kc Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "6s 5s 2d 3d Kd Ts Ad"}
    a = scenario(hands, "8h Js")
    other = dict(hands)
    other[1] = "2s 3s 4s 6h 7h 9d Jh"  # seat 1 holds a different hidden card, the wall differs too
    b = scenario(other, "8h 9c")
    from meld8_env.observation import encode

    assert np.array_equal(encode(a, 0), encode(b, 0))
    assert np.array_equal(encode(a, 2), encode(b, 2))
    assert not np.array_equal(encode(a, 0, oracle=True), encode(b, 0, oracle=True))


def test_observation_layout_sizes():
    lay = layout(RuleConfig())
    assert lay["hand"] == (0, 53)
    e = meld8_env.env()
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)["observation"]
    assert obs.dtype == np.uint8 and obs.shape == e.observation_space(e.agent_selection)["observation"].shape


def test_render_rows_of_six():
    e = meld8_env.env(render_mode="ansi")
    e.reset(seed=2)
    for _ in range(60):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    text = e.render()
    rows = [line for line in text.splitlines() if "discards" in line]
    assert rows and all(len(r.split()) - 1 <= 6 for r in rows)


def test_illegal_action_is_a_clear_error():
    e = meld8_env.env()
    e.reset(seed=0)
    with pytest.raises(ValueError, match="legal:"):
        e.step(63)
