"""PettingZoo's own test suite against the real library (>= 1.27): the registry, api/seed/render/state
tests, the parallel conversion, the wrappers, max_cycles."""

from __future__ import annotations

import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, performance_benchmark, render_test, seed_test, state_test
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import meld8_env
from meld8_env.rules import RuleConfig

ID = "meld8/meld8_v0"


def make(**kw):
    return pettingzoo.make("aec", ID, **kw)


def test_import_registers_the_env_with_every_constructor_option():
    e = make(rules="two_player", reward="rank", oracle=True, render_mode="ansi", max_cycles=50)
    raw = e.unwrapped
    assert isinstance(e, wrappers.OrderEnforcingWrapper) and raw.rules == RuleConfig.two_player()
    assert (raw.reward_mode, raw.oracle, raw.render_mode, raw.max_cycles) == ("rank", True, "ansi", 50)
    assert type(meld8_env.env().unwrapped) is type(raw)  # the short form is the same env


def test_api_test_passes_with_only_the_dict_observation_advisories(recwarn):
    warnings.simplefilter("always")
    api_test(make(), num_cycles=300)
    messages = {str(w.message) for w in recwarn}
    # api_test advises flat Box observations; ours is a dict {observation, action_mask} by PettingZoo's own
    # action-masking convention (the classic card games do the same), so these two advisories are expected
    allowed = {
        "Observation is not a NumPy array",
        "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
    }
    assert messages <= allowed, messages - allowed


def test_seed_test():
    seed_test(make, num_cycles=300)


def test_render_test_and_modes(capsys):
    render_test(lambda render_mode=None: make(render_mode=render_mode))
    e = make(render_mode="human")
    e.reset(seed=1)
    assert e.render() is None and "your hand" in capsys.readouterr().out
    e = make(render_mode="ansi")
    e.reset(seed=1)
    assert "your hand" in e.render()


def test_state_test_and_parallel_state():
    state_test(make(), turn_based_aec_to_parallel(make()))
    e = make()
    e.reset(seed=4)
    s = e.state()
    assert e.unwrapped.state_space.contains(s) and s.shape == e.unwrapped.state_space.shape
    par = turn_based_aec_to_parallel(make())
    par.reset(seed=4)
    assert np.array_equal(par.state(), s)
    # the state is the full-information view: every seat's concealed hand is in it
    off, size = meld8_env.observation.layout(RuleConfig(), oracle=True)["oracle_hands"]
    hands = s[off : off + size].reshape(3, 53)
    assert (hands.sum(axis=1) >= 7).all()


def test_parallel_api_test():
    parallel_api_test(turn_based_aec_to_parallel(make()), num_cycles=200)


def test_performance_benchmark_smoke(capsys):
    performance_benchmark(make())  # a smoke test: it runs and reports; its numbers are not checked here
    assert capsys.readouterr().out.strip()


def _play(e, policy) -> int:
    steps = 0
    while e.agents:
        a = e.agent_selection
        if e.terminations[a] or e.truncations[a]:
            e.step(None)
            continue
        e.step(policy(e, a))
        steps += 1
    return steps


def _first_legal(e, a) -> int:
    return int(np.flatnonzero(e.observe(a)["action_mask"])[0])


@pytest.mark.parametrize("n", [1, 10, 37])
def test_max_cycles_truncates_every_agent_after_n_agent_steps(n):
    e = make(max_cycles=n)
    e.reset(seed=2)
    truncated_seen = []

    def policy(env, a):
        return _first_legal(env, a)

    steps = 0
    while e.agents:
        a = e.agent_selection
        if e.terminations[a] or e.truncations[a]:
            truncated_seen.append(e.truncations[a])
            e.step(None)
            continue
        e.step(policy(e, a))
        steps += 1
    assert steps == n and truncated_seen == [True] * 3


def test_max_cycles_none_plays_to_the_end():
    e = make()
    e.reset(seed=2)
    assert _play(e, _first_legal) > 50
    with pytest.raises(ValueError, match="max_cycles"):
        make(max_cycles=0)


def test_order_enforcing_and_terminate_illegal_wrappers():
    e = make()
    with pytest.raises(Exception, match="reset"):
        e.step(0)  # OrderEnforcing: step before reset
    t = wrappers.TerminateIllegalWrapper(meld8_env.raw_env(), illegal_reward=-1)
    t.reset(seed=3)
    a = t.agent_selection
    illegal = int(np.flatnonzero(t.observe(a)["action_mask"] == 0)[0])
    t.step(illegal)  # terminated with the illegal reward instead of raising
    assert all(t.terminations.values()) and t.rewards[a] == -1
