"""Misuse of the faces, each refused in one line that says what to do (a newcomer's walkthrough, session 47): use
before reset or after the end, a wrong-type action, an opponent agent that breaks the rules, reset options, render
modes, unknown agents; and the documented game lengths behind ``max_cycles``."""

from __future__ import annotations

import base64
import zipfile

import gymnasium
import numpy as np
import pytest

import meld8_env
from meld8_env.actions import IllegalActionError
from meld8_env.aec import raw_env
from meld8_env.agent import Agent
from meld8_env.agent_spec import AgentLoadError, load_agent
from meld8_env.gym_env import Meld8SingleEnv, Meld8VectorEnv
from meld8_env.rules import RuleConfig
from meld8_env.table import AgentError
from meld8_env.vector import Meld8Vector
from training.arena import play


def first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


# -- 1: before the first reset ------------------------------------------------------------------------------------
def test_the_vector_refuses_every_use_before_the_first_reset():
    v = Meld8Vector(2, seed=0)
    # the mask held uninitialised memory: "legal" actions a step then refused as "the game is over"
    assert not v.action_mask.any() and (v.current_seat == -1).all() and not v.observation.any()
    for call in (lambda: v.step(np.zeros(2, np.int64)), v.sample_actions, lambda: v.start_games([0], [1])):
        with pytest.raises(RuntimeError, match=r"^call reset\(\) first: .* none has started$"):
            call()
    v.reset()
    assert v.action_mask.any(axis=1).all()
    v.step(v.sample_actions())


def test_the_rllib_env_refuses_a_step_before_reset():
    pytest.importorskip("ray.rllib", reason="the rllib extra")
    from meld8_env.rllib import Meld8MultiAgentEnv

    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        Meld8MultiAgentEnv().step({"seat_0": 0})


# -- 2: one opponent name for SB3 ---------------------------------------------------------------------------------
def test_single_seat_env_takes_one_opponent_name_as_the_gymnasium_face_does():
    pytest.importorskip("stable_baselines3", reason="the train extra")
    from training.single_seat import SingleSeatVecEnv

    env = SingleSeatVecEnv(2, "greedy", seed=0)  # was read as six opponents, one per letter
    try:
        assert [a.name for a in env.opponents] == ["greedy", "greedy"]
        env.reset()
        env.step_async(env.action_masks().argmax(1))
        env.step_wait()
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"^give 2 opponents \(the other seats\), got 3$"):
        SingleSeatVecEnv(2, ["greedy", "random", "random"])


# -- 3: an opponent agent's illegal action ------------------------------------------------------------------------
class Cheater(Agent):
    """Always the first action its mask forbids."""

    name = "cheater"

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return (~masks.astype(bool)).argmax(1).astype(np.int64)


ILLEGAL_BY_AGENT = r"^agent 'cheater' chose an illegal action \d+ \(.*\) for seat \d of game \d+ in phase .*; legal: "


def test_an_opponents_illegal_action_names_the_agent_in_the_gymnasium_face():
    env = gymnasium.make("meld8_env:Meld8-v0", opponents=[Cheater(), "greedy"])
    try:
        # the learner plays seat 0 of game 0, the cheater seat 1: it acts within reset() or the first steps
        with pytest.raises(AgentError, match=ILLEGAL_BY_AGENT + r".*fix its act_batch") as err:
            _, info = env.reset(seed=0)
            for _ in range(20):
                _, _, terminated, _, info = env.step(first_legal(info["action_mask"]))
                assert not terminated
        assert "\n" not in str(err.value) and "for seat 1 of game 0" in str(err.value)
    finally:
        env.close()


def test_an_illegal_action_in_the_arena_names_the_agent():
    agents = [Cheater(), load_agent("greedy"), load_agent("random")]
    with pytest.raises(AgentError, match=ILLEGAL_BY_AGENT + r".*fix its act_batch"):
        play(agents, np.array([[1, 0, 2]]), [1])


def test_penalty_rules_still_play_an_agents_illegal_action():
    rules = RuleConfig(penalty_mode=True, rounds=1, min_yaku_han=(1,), max_replays=0)
    (rec,) = play([Cheater(rules), load_agent("greedy", rules), load_agent("random", rules)], [[0, 1, 2]], [3], rules)
    assert sum(rec.final_scores) == 3 * rules.starting_score  # the game was played, with its penalties


# -- 4: game lengths behind max_cycles ----------------------------------------------------------------------------
def _lengths(names: list[str], seeds: list[int]) -> list[int]:
    agents = [load_agent(n, seed=k) for k, n in enumerate(names)]
    records = play(agents, np.tile([0, 1, 2], (len(seeds), 1)), seeds)
    return [len(base64.b64decode(r.actions)) for r in records]


def test_documented_game_lengths_bots_hundreds_random_play_thousands():
    # the docs said 100-400 agent steps "so the default None never truncates": random play takes thousands
    assert all(50 <= n <= 300 for n in _lengths(["greedy", "defensive", "greedy"], [0, 1, 2, 3]))
    assert all(n >= 1_000 for n in _lengths(["random"] * 3, [0, 1, 2, 3]))
    doc = " ".join(meld8_env.aec.__doc__.split())
    assert "about 100-200 agent steps" in doc and "random legal play takes thousands" in doc
    assert "100-400" not in doc


# -- 5: the trust switch, from Python too -------------------------------------------------------------------------
def test_a_foreign_zip_is_refused_naming_both_trust_switches(tmp_path):
    path = tmp_path / "sb3.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", "{}")  # a plain SB3 save holds no meld8.json
    for call in (lambda: load_agent(f"ppo:{path}"), lambda: Meld8VectorEnv(1, opponents=[f"ppo:{path}", "greedy"])):
        with pytest.raises(AgentLoadError) as err:
            call()
        text = str(err.value)
        assert "--trust-checkpoint on the command line" in text and "trust=True to load_agent" in text
        assert "\n" not in text


# -- 6: RLlib after truncation, unknown agents ---------------------------------------------------------------------
def test_the_rllib_env_refuses_a_step_after_truncation_and_names_its_agents():
    pytest.importorskip("ray.rllib", reason="the rllib extra")
    from meld8_env.rllib import Meld8MultiAgentEnv

    env = Meld8MultiAgentEnv({"max_steps": 5})
    obs, _ = env.reset(seed=1)
    for k in range(5):
        ((me, o),) = obs.items()
        obs, _, terminated, truncated, _ = env.step({me: first_legal(o["action_mask"])})
        assert truncated["__all__"] == (k == 4) and not terminated["__all__"]
    me = next(a for a, o in obs.items() if o["action_mask"].any())
    with pytest.raises(RuntimeError, match=r"^the episode ended \(truncated at max_steps=5\); call reset\(\)"):
        env.step({me: first_legal(obs[me]["action_mask"])})  # it played a 6th step
    env.reset(seed=1)  # and a reset starts the next episode
    for get in (env.get_observation_space, env.get_action_space):
        with pytest.raises(ValueError, match=r"^unknown agent 'bob'; the agents are seat_0, seat_1, seat_2$"):
            get("bob")
    assert env.get_action_space("seat_1") is env.action_spaces["seat_1"]


# -- 7: a wrong-type action is a bug, not an illegal move ------------------------------------------------------------
@pytest.mark.parametrize("mode", ["terminate", "raise"])
def test_the_single_env_refuses_a_wrong_type_action_in_every_mode(mode):
    env = gymnasium.make("meld8_env:Meld8-v0", opponents="random", illegal_action=mode)
    try:
        _, info = env.reset(seed=0)
        legal = first_legal(info["action_mask"])
        for bad in ("pass", float(legal), [legal], np.array([legal]), np.float64(legal), True):
            with pytest.raises(IllegalActionError, match=r"not an action id: a \w+, expected an integer 0\.\.63"):
                env.step(bad)
        # nothing ended: a numpy integer and a 0-d integer array (what SB3 passes) are actions
        _, _, terminated, _, out = env.step(np.int64(legal))
        assert "illegal_action" not in out
        if not terminated:
            env.step(np.array(first_legal(out["action_mask"])))
    finally:
        env.close()


def test_an_illegal_integer_still_ends_the_episode_in_terminate_mode():
    env = Meld8SingleEnv(opponents="random")
    try:
        _, info = env.reset(seed=0)
        illegal = int(np.flatnonzero(~info["action_mask"])[0])
        for action in (illegal, 64):
            _, reward, terminated, _, out = env.step(action)
            assert terminated and reward == -1.0 and out["illegal_action"]
            env.reset(seed=0)
    finally:
        env.close()


# -- 8: the smaller ones -------------------------------------------------------------------------------------------
def _finish(env) -> None:
    """Play until every agent has been stepped out (dead agents stepped with None, as PettingZoo requires)."""
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else first_legal(obs["action_mask"]))


def test_the_aec_env_after_the_game_says_to_reset():
    raw = raw_env(max_cycles=3)  # truncated after 3 agent steps: a short game
    raw.reset(seed=1)
    _finish(raw)
    assert raw.agents == []
    for action in (None, 0):
        with pytest.raises(RuntimeError, match=r"^the game is over .*: call reset\(\) to play again$"):
            raw.step(action)  # KeyError: 'player_1'
    wrapped = meld8_env.env(max_cycles=3)
    wrapped.reset(seed=1)
    _finish(wrapped)
    with pytest.raises(RuntimeError, match=r"^player_\d has left: the game is over .*call reset\(\)"):
        wrapped.last()
    with pytest.raises(ValueError, match=r"^unknown agent 'bob'; the agents are player_0, player_1, player_2$"):
        wrapped.unwrapped.rewards["bob"]
    wrapped.reset(seed=2)  # a reset plays again
    assert wrapped.last()[2] is False


def test_save_replay_before_reset_says_to_reset(tmp_path):
    with pytest.raises(RuntimeError, match=r"^call reset\(\) first"):
        raw_env().save_replay(str(tmp_path / "game.json"))
    assert not (tmp_path / "game.json").exists()


def test_the_gymnasium_faces_name_the_env_the_caller_made_when_refusing_render():
    with pytest.raises(ValueError, match=r"^Meld8SingleEnv \(gymnasium\.make of Meld8-v0\) renders nothing") as err:
        with pytest.warns(UserWarning, match="render_mode"):  # Gymnasium's own advisory, before ours
            gymnasium.make("meld8_env:Meld8-v0", render_mode="human")
    assert "Meld8VectorEnv" not in str(err.value)
    env = Meld8SingleEnv(opponents="random")
    try:
        env.reset(seed=0)
        with pytest.raises(NotImplementedError, match=r"renders nothing; watch games through the PettingZoo env"):
            env.render()  # an empty NotImplementedError
    finally:
        env.close()
    with pytest.raises(TypeError, match=r"^Meld8SingleEnv .* unknown option 'opponent'; its options: .*opponents"):
        Meld8SingleEnv(opponent="greedy")


def test_the_gymnasium_faces_refuse_reset_options_and_the_aec_env_takes_them():
    single = Meld8SingleEnv(opponents="random")
    vector = Meld8VectorEnv(2, opponents="random")
    try:
        for env in (single, vector):
            with pytest.raises(ValueError, match=r"^unknown reset option 'foo': .* knows no option keys"):
                env.reset(seed=1, options={"foo": 1})
            with pytest.raises(ValueError, match="reset options must be a dict or None, got int"):
                env.reset(seed=1, options=3)
            env.reset(seed=1, options=None)
            env.reset(seed=1, options={})
    finally:
        single.close()
        vector.close()
    aec = meld8_env.env()
    aec.reset(seed=1, options={"options": 1})  # PettingZoo's api_test resets so, and requires it to work
    assert aec.agents == aec.possible_agents
