"""The single-seat SB3 face: rewards credited to the learner's seat only, seat rotation, masks, and a
MaskablePPO smoke run (tiny budget)."""

import numpy as np
import pytest

from agents.registry import load_agent
from meld8_env.rules import RuleConfig
from training.single_seat import SingleSeatVecEnv

SHORT = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1)


def make_env(n=6, seed=3, rules=SHORT):
    return SingleSeatVecEnv(n, [load_agent("random", rules, 1), load_agent("greedy", rules)], rules, seed=seed)


def test_learner_return_is_its_own_score_change():
    env = make_env()
    env.reset()
    rng = np.random.default_rng(0)
    ret = np.zeros(env.num_envs)
    finished = 0
    for _ in range(1500):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        env.step_async(acts)
        _, rewards, dones, infos = env.step_wait()
        ret += rewards
        for i in np.flatnonzero(dones):
            assert ret[i] == pytest.approx((infos[i]["final_score"] - 30_000) / 10_000, abs=1e-4)
            assert infos[i]["episode"]["r"] == pytest.approx(ret[i], abs=1e-4)
            ret[i] = 0
            finished += 1
    assert finished > 50


def test_seats_rotate_and_the_learner_always_acts():
    env = make_env(n=6)
    env.reset()
    assert env.learner_seat.tolist() == [0, 1, 2, 0, 1, 2]
    assert (env.vec.current_seat == env.learner_seat).all()
    assert env.action_masks().any(axis=1).all()


def test_wrong_number_of_opponents():
    with pytest.raises(ValueError, match="give 2 opponents"):
        SingleSeatVecEnv(2, [load_agent("random")], RuleConfig())


def test_maskable_ppo_smoke_run():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    env = make_env(n=8, seed=1)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.set_logger(Logger(folder=None, output_formats=[]))  # SB3 would make a log folder in /tmp per run
    model.learn(total_timesteps=256)  # any masked action would raise inside the engine
    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[np.arange(env.num_envs), actions].all()
