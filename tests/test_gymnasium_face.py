"""The Gymnasium faces against the real library: make_vec gives a gymnasium.vector.VectorEnv over the C
engine, make gives an Env that passes check_env, RecordEpisodeStatistics counts the learner's real
returns, and the SB3 adapter plays exactly the same games."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import meld8_env  # noqa: F401 - registers Meld8-v0
from meld8_env.rules import RuleConfig


def make_vec(n=8, **kw):
    kw.setdefault("opponents", "greedy")
    return gymnasium.make_vec("meld8_env:Meld8-v0", num_envs=n, vectorization_mode="vector_entry_point", **kw)


def _legal(masks: np.ndarray, rng) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def test_make_vec_is_a_real_vector_env_over_the_batched_engine():
    env = make_vec(6, rules="two_player", features=True, seed=3)
    assert isinstance(env, VectorEnv) and env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=3)
    assert obs.shape == (6, *env.single_observation_space.shape) and env.observation_space.contains(obs)
    assert info["action_mask"].shape == (6, 64) and info["action_mask"].dtype == bool
    assert env.single_action_space == gymnasium.spaces.Discrete(64) and env.action_space.shape == (6,)
    assert env.unwrapped.rules == RuleConfig.two_player()
    rng = np.random.default_rng(0)
    for _ in range(50):
        obs, r, term, trunc, info = env.step(_legal(info["action_mask"], rng))
        assert obs.shape[0] == 6 and r.dtype == np.float32 and term.dtype == bool and not trunc.any()
    assert isinstance(env.np_random, np.random.Generator)
    env.close()


def test_same_seed_same_batch_and_opponent_objects_accepted():
    from agents.registry import load_agent

    rules = RuleConfig()
    a = make_vec(4, seed=1)
    b = make_vec(4, opponents=[load_agent("greedy", rules, 1), load_agent("greedy", rules, 2)], seed=1)
    oa, ia = a.reset(seed=9)
    ob, ib = b.reset(seed=9)
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(100):
        assert np.array_equal(oa, ob)
        oa, ra, *_, ia = a.step(_legal(ia["action_mask"], rng_a))
        ob, rb, *_, ib = b.step(_legal(ib["action_mask"], rng_b))
        assert np.array_equal(ra, rb)


def test_record_episode_statistics_counts_the_learners_final_score():
    env = RecordEpisodeStatistics(make_vec(8, seed=2))
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(1)
    episodes = []
    while len(episodes) < 40:
        obs, r, term, trunc, info = env.step(_legal(info["action_mask"], rng))
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                final = info["final_info"]
                episodes.append((info["episode"]["r"][i], final["final_score"][i], info["final_obs"][i]))
    for ret, score, final_obs in episodes:
        assert ret == pytest.approx((score - 30_000) / 10_000, abs=1e-4)
        assert final_obs is not None and final_obs.shape == env.single_observation_space.shape


def test_single_env_passes_check_env_and_plays_whole_games():
    env = gymnasium.make("meld8_env:Meld8-v0", opponents="random")
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    total, done, steps = 0.0, False, 0
    while not done:
        obs, r, done, trunc, info = env.step(env.action_space.sample())
        total += r
        steps += 1
    assert total == pytest.approx((info["final_score"] - 30_000) / 10_000, abs=1e-4)
    obs2, info2 = env.reset()  # the next game
    assert info2["action_mask"].any()


def test_sb3_adapter_plays_the_same_games_as_the_gymnasium_face():
    pytest.importorskip("stable_baselines3")
    from agents.registry import load_agent
    from training.single_seat import SingleSeatVecEnv

    rules = RuleConfig()
    sb3 = SingleSeatVecEnv(4, [load_agent("greedy", rules, 1), load_agent("greedy", rules, 2)], rules, seed=7)
    gym_env = make_vec(4, seed=7)
    o1 = sb3.reset()
    o2, info = gym_env.reset(seed=7)
    rng = np.random.default_rng(3)
    for _ in range(200):
        assert np.array_equal(o1, o2)
        acts = _legal(info["action_mask"], rng)
        assert np.array_equal(sb3.action_masks(), info["action_mask"])
        sb3.step_async(acts)
        o1, r1, d1, infos = sb3.step_wait()
        o2, r2, t2, _, info = gym_env.step(acts)
        assert np.array_equal(r1, r2) and np.array_equal(d1, t2)
        for i in np.flatnonzero(d1):
            assert infos[i]["final_score"] == info["final_info"]["final_score"][i]


def test_single_env_illegal_action_ends_the_episode_or_raises():
    from meld8_env.actions import IllegalActionError

    env = gymnasium.make("meld8_env:Meld8-v0", opponents="random").unwrapped
    _, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    obs, r, term, trunc, info2 = env.step(illegal)
    assert (
        term
        and r == -1.0
        and info2["illegal_action"]
        and info2["legal_actions"] == np.flatnonzero(info["action_mask"]).tolist()
    )
    _, info3 = env.reset()
    assert info3["action_mask"].any()
    strict = gymnasium.make("meld8_env:Meld8-v0", opponents="random", illegal_action="raise").unwrapped
    _, info = strict.reset(seed=1)
    with pytest.raises(IllegalActionError, match="legal:"):
        strict.step(int(np.flatnonzero(~info["action_mask"])[0]))


def test_an_env_never_closed_exits_quietly():
    # docs review, session 32: collected at interpreter exit, close() met a half torn-down numpy and printed
    # "Exception ignored ... ModuleNotFoundError" (exit code 0 all the same)
    import subprocess
    import sys

    code = (
        "import gymnasium, meld8_env\n"
        "envs = gymnasium.make_vec('meld8_env:Meld8-v0', num_envs=4, vectorization_mode='vector_entry_point',"
        " opponents=['greedy', 'random'], features=True)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stderr == "", p.stderr


@pytest.mark.parametrize("shape", [(4, 1), (2, 2), (3,), ()])
def test_vector_step_takes_exactly_one_action_per_game(shape):
    # red team, session 32: (4, 1) and (2, 2) were reshaped silently; (3,) failed inside numpy
    envs = gymnasium.make_vec(
        "meld8_env:Meld8-v0", num_envs=4, vectorization_mode="vector_entry_point", opponents=["greedy", "random"]
    )
    try:
        envs.reset(seed=1)
        with pytest.raises(ValueError, match=r"actions must have shape \(4,\), one per game"):
            envs.step(np.zeros(shape, np.int64))
    finally:
        envs.close()


@pytest.mark.parametrize("n", [2.5, True, 0])
def test_a_batch_size_that_is_not_a_count_is_refused(n):
    from meld8_env.vector import Meld8Vector

    with pytest.raises(ValueError, match=r"num_envs must be 1\.\.1048576 \(an integer\)"):
        Meld8Vector(n)


def test_a_constructor_seed_makes_every_later_reset_reproducible():
    """Seeds audit, session 35: with only the constructor seeded, a second reset() drew its games (and the single
    env its action-space samples) from a generator Gymnasium had seeded from the OS: two runs differed."""

    def run_vec() -> list[list[int]]:
        env = make_vec(2, seed=7)
        seeds = []
        for _ in range(2):
            env.reset()
            seeds.append(env.unwrapped.vec.seeds.tolist())
        env.close()
        return seeds

    def run_single() -> tuple[list[int], list[int]]:
        env = gymnasium.make("meld8_env:Meld8-v0", seed=7)
        env.reset()
        samples = [int(env.action_space.sample()) for _ in range(8)]
        env.reset()
        seeds = env.unwrapped._vec.vec.seeds.tolist()
        env.close()
        return samples, seeds

    first = run_vec()
    assert first[0] == [7, 8] and run_vec() == first
    assert run_single() == run_single()


def _play(env, seed: int, steps: int = 150) -> list:
    """The learner's observations and rewards over ``steps`` steps of fixed legal play after ``reset(seed=seed)``."""
    obs, info = env.reset(seed=seed)
    rng, out = np.random.default_rng(11), [obs.copy()]
    for _ in range(steps):
        obs, r, *_, info = env.step(_legal(info["action_mask"], rng))
        out += [obs.copy(), r.copy()]
    return out


def test_a_seeded_reset_plays_the_same_games_whatever_the_constructor_seed():
    """Seeds audit, session 35: ``random`` (and ``search``) opponents kept the seed the constructor gave them, so
    ``reset(seed=S)`` played other games under another constructor seed; now opponents loaded from names are
    seeded from S. An opponent object put in their place (a self-play pool) is kept as it is."""
    a, b = make_vec(3, opponents="random", seed=1), make_vec(3, opponents="random", seed=99)
    ref = _play(a, 5)
    assert all(np.array_equal(x, y) for x, y in zip(ref, _play(b, 5), strict=True))
    # a seed the opponents already have leaves them in place; another one gives other games
    assert not all(np.array_equal(x, y) for x, y in zip(ref, _play(b, 6), strict=True))
    assert all(np.array_equal(x, y) for x, y in zip(ref, _play(b, 5), strict=True))
    from agents.registry import load_agent

    mine = load_agent("random", RuleConfig(), 3)
    b.unwrapped.opponents[0] = mine
    b.reset(seed=40)
    assert b.unwrapped.opponents[0] is mine and b.unwrapped.opponents[1] is not mine
    a.close()
    b.close()
    # built-in agents are re-seeded in place (no checkpoint read, no bot process started again)
    c = make_vec(2, opponents=["ppo", "random"], seed=1)
    kept = list(c.unwrapped.opponents)
    c.reset(seed=8)
    assert c.unwrapped.opponents == kept and [a.seed for a in kept] == [9, 10]
    c.close()


@pytest.mark.parametrize("spec", ["random", "search:worlds=8+extend=0", "wary", "defensive", "ppo"])
def test_an_agent_reseeded_in_place_plays_as_one_loaded_with_that_seed(spec):
    """Twins: each built-in's ``reseed`` (a seeded reset of an env made with seed 1) plays the same games as the agent
    loaded with that seed (an env made with the reset's seed, whose opponents are never re-seeded)."""
    a, b = make_vec(3, opponents=spec, seed=1), make_vec(3, opponents=spec, seed=5)
    _play(a, 1, 30)  # played first under its own seed: whatever it made from that seed is made
    assert all(np.array_equal(x, y) for x, y in zip(_play(a, 5, 60), _play(b, 5, 60), strict=True))
    a.close()
    b.close()


NOISY_PLUGIN = """
import numpy as np
from agents.greedy import GreedyAgent


class Noisy(GreedyAgent):
    # a plug-in on a built-in bot that does draw from its seed: it inherits reseed, not what reseed would redo
    def __init__(self, rules=None, seed=0):
        super().__init__(rules, seed)
        self.rng = np.random.default_rng(seed)

    def act_batch(self, obs, masks):
        return np.array([self.rng.choice(np.flatnonzero(m)) for m in np.asarray(masks, bool)])
"""


def test_a_subclass_that_inherits_reseed_is_loaded_again(tmp_path, monkeypatch):
    """Review, session 36: a subclass of a built-in inherits its ``reseed`` but may hold more seed-made state, so a
    face loads it again from its name unless its own class declares ``reseed``."""
    (tmp_path / "noisy_plugin_s36.py").write_text(NOISY_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    runs = []
    for ctor in (1, 99):
        env = make_vec(3, opponents=["noisy_plugin_s36:Noisy", "greedy"], seed=ctor)
        runs.append(_play(env, 5))
        env.close()
    assert all(np.array_equal(x, y) for x, y in zip(*runs, strict=True))


def test_a_refused_seed_changes_nothing():
    """Review, session 36: reset(seed=2**63 + 1) was refused after it had re-seeded the opponents, and every later
    reset() refused it again."""
    env = make_vec(2, opponents="random", seed=1)
    env.reset()
    before = [a.seed for a in env.unwrapped.opponents]
    with pytest.raises(ValueError, match=r"seed must be an integer 0\.\.2\*\*63"):
        env.reset(seed=2**63 + 1)
    assert [a.seed for a in env.unwrapped.opponents] == before
    env.reset()  # the next unseeded reset plays on
    env.close()
