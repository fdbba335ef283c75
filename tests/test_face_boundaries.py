"""Boundary checks of the Python faces (red team, session 37): what a caller hands an env, a sampler or a loader is
checked where it enters, with one line naming it, and a refused call changes nothing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from meld8_env.actions import IllegalActionError
from meld8_env.agent_spec import AgentLoadError, load_agent
from meld8_env.belief import ready_prior, sample_worlds
from meld8_env.discard_history import passed_cards
from meld8_env.gym_env import Meld8SingleEnv, Meld8VectorEnv
from meld8_env.infoset import infoset
from meld8_env.observation import decode
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector
from meld8_env.wait_model import wait_probs


def first_legal(info: dict) -> np.ndarray:
    return np.array([int(np.flatnonzero(m)[0]) for m in info["action_mask"]])


def test_single_env_plays_a_0d_array_as_its_action():
    # SB3's predict returns a 0-d array for one Discrete action; Discrete.contains accepts it, and the default
    # terminate mode ended the episode with the illegal-action penalty
    env = Meld8SingleEnv(opponents="random")
    try:
        obs, info = env.reset(seed=1)
        action = np.array(int(np.flatnonzero(info["action_mask"])[0]))
        assert env.action_space.contains(action)
        _, reward, terminated, _, out = env.step(action)
        assert "illegal_action" not in out and not (terminated and reward == env.illegal_reward)
    finally:
        env.close()


def _reward_after(refuse: bool, bad: np.ndarray) -> np.ndarray:
    env = Meld8VectorEnv(num_envs=3, opponents="random", shaping=0.1)
    try:
        _, info = env.reset(seed=0)
        for _ in range(672):  # long enough that an episode ends with reward carried into the next one
            _, _, _, _, info = env.step(first_legal(info))
        if refuse:
            with pytest.raises(ValueError):
                env.step(bad)
        return env.step(first_legal(info))[1]
    finally:
        env.close()


@pytest.mark.parametrize("bad", [np.full(3, 63), np.zeros((3, 1), np.int64), np.full(3, -1)])
def test_a_refused_vector_step_keeps_the_carried_reward(bad):
    # the carry was swapped out before the actions were checked: a refused step lost it
    assert np.array_equal(_reward_after(True, bad), _reward_after(False, bad))


def test_gym_faces_refuse_the_hold_still_action():
    env = Meld8VectorEnv(num_envs=2, opponents="random")
    try:
        env.reset(seed=0)
        with pytest.raises(IllegalActionError, match="not an action id 0..63$"):
            env.step(np.full(2, -1))
    finally:
        env.close()
    single = Meld8SingleEnv(opponents="random", illegal_action="raise")
    try:
        single.reset(seed=0)
        with pytest.raises(IllegalActionError, match="-1 is not an action id"):
            single.step(-1)
    finally:
        single.close()


@pytest.mark.parametrize("mode", ["raise", "terminate"])
def test_single_env_refuses_steps_outside_an_episode(mode):
    env = Meld8SingleEnv(opponents="random", illegal_action=mode)
    try:
        with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
            env.step(-1)
        _, info = env.reset(seed=5)
        terminated = False
        while not terminated:
            _, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        with pytest.raises(RuntimeError, match="the episode has ended"):
            env.step(0)  # it played a move in the next game, which the caller never saw
        _, info = env.reset()
        env.step(int(np.flatnonzero(info["action_mask"])[0]))  # reset's own mask is current
    finally:
        env.close()


def test_gym_faces_take_numpy_integer_seeds_and_refuse_bad_ones_in_one_line():
    env = Meld8VectorEnv(num_envs=2, opponents="random", seed=np.int64(5))
    try:
        a = env.reset()[0]
    finally:
        env.close()
    twin = Meld8VectorEnv(num_envs=2, opponents="random", seed=5)
    try:
        assert np.array_equal(a, twin.reset()[0])
    finally:
        twin.close()
    single = Meld8SingleEnv(opponents="random")
    try:
        single.reset(seed=np.int64(5))
        for bad in (-1, 1.5):
            with pytest.raises(ValueError, match="seed must be an integer 0..2"):
                single.reset(seed=bad)
    finally:
        single.close()


def test_single_seat_vec_env_checks_actions_seeds_and_rules():
    from training.single_seat import SingleSeatVecEnv

    env = SingleSeatVecEnv(2, ["random", "random"], seed=3, rules="default")
    try:
        env.reset()
        legal = np.array([np.flatnonzero(m)[0] for m in env.action_masks()])
        for bad in (legal + 0.9, np.array([str(a) for a in legal]), np.full(2, -1), np.zeros(3, np.int64)):
            with pytest.raises(ValueError):
                env.step_async(bad)
        for bad in (1.5, "7", -1):
            with pytest.raises(ValueError, match="seed must be an integer"):
                env.seed(bad)
        assert env.seed(4) == [4, 5]
    finally:
        env.close()


def _record(steps: int = 30, rules: RuleConfig | None = None):
    v = Meld8Vector(1, rules=rules, seed=0)
    v.reset()
    for _ in range(steps):
        v.step(v.sample_actions())
    return v.engine.record(0).copy(), int(v.current_seat[0])


def test_infoset_refuses_another_player_count_a_bad_seat_and_a_non_record():
    rec, seat = _record()
    with pytest.raises(ValueError, match="not a 2-player game"):
        infoset(rec, seat, RuleConfig.two_player())
    rec2, seat2 = _record(rules=RuleConfig.two_player())
    with pytest.raises(ValueError, match="not a 3-player game"):
        infoset(rec2, seat2, RuleConfig())
    for bad in (1.5, "1", True, None, 3, -1):
        with pytest.raises(ValueError, match="seat must be"):
            infoset(rec, bad, RuleConfig())
    with pytest.raises(ValueError, match="one engine record"):
        infoset(np.stack([rec, rec]), 0, RuleConfig())
    assert infoset(rec, seat, "default") == infoset(rec, seat, RuleConfig())


def test_sample_worlds_checks_its_switches_rules_and_the_infoset():
    rec, seat = _record()
    info = infoset(rec, seat, RuleConfig())
    rng = np.random.default_rng
    with pytest.raises(ValueError, match="last_discard must be True or False"):
        sample_worlds(info, 2, rng(0), last_discard="false")
    with pytest.raises(ValueError, match="no_pass must be True or False"):
        sample_worlds(info, 2, rng(0), no_pass="yes")
    a = sample_worlds(info, 3, rng(0), rules="default")[0]
    assert np.array_equal(a, sample_worlds(info, 3, rng(0), rules=RuleConfig())[0])
    edits = {"seat": 5, "pool": 0, "num_players": 2, "wall_left": 100, "melds": (0,), "hidden": (1.0, 7.0, 7.0)}
    for field, value in edits.items():
        with pytest.raises(ValueError, match=r"InfoSet\."):
            sample_worlds(dataclasses.replace(info, **{field: value}), 2, rng(0))


def test_per_opponent_helpers_take_only_an_opponent():
    rec, seat = _record()
    info = infoset(rec, seat, RuleConfig())
    other = info.opponents[0]
    for fn in (ready_prior, wait_probs, passed_cards):
        fn(info, other)
        fn(info, np.int64(other))
        for bad in (seat, -1, 3, 1.5, None, True):
            with pytest.raises(ValueError, match=f"j must be an opponent of seat {seat}"):
                fn(info, bad)


def test_load_agent_checks_seed_and_rules_at_load():
    for bad in (-1, 1.5, "x", None, True):
        with pytest.raises(AgentLoadError, match="seed must be an integer >= 0"):
            load_agent("random", seed=bad)
    agent = load_agent("greedy", rules="two_player", seed=np.int64(3))
    assert agent.rules.num_players == 2


def test_decode_refuses_what_is_not_an_observation_of_these_rules():
    v = Meld8Vector(2, seed=0)
    v.reset()
    obs = v.observation
    decode(obs, RuleConfig())
    for bad, rules in ((obs + 0.5, RuleConfig()), (obs, RuleConfig.two_player()), (obs[:, :100], RuleConfig())):
        with pytest.raises(ValueError, match="decode expects uint8 observations"):
            decode(bad, rules)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        v.sample_actions(rng=5)


def test_aec_env_boundaries():
    import meld8_env
    from meld8_env.aec import raw_env

    env = meld8_env.env(max_cycles=np.int64(5))
    env.reset(seed=1)
    for call in (env.observe, env.unwrapped.observation_space, env.unwrapped.action_mask):
        with pytest.raises(ValueError, match="unknown agent 'player_9'; the agents are player_0"):
            call("player_9")
    agent = env.agent_selection
    env.step(np.array(int(np.flatnonzero(env.observe(agent)["action_mask"])[0])))  # a 0-d array is an action
    assert env.unwrapped.action_log
    raw = raw_env()
    for call in (lambda: raw.observe("player_0"), lambda: raw.step(0), raw.state):
        with pytest.raises(RuntimeError, match=r"call reset\(\) first"):
            call()
