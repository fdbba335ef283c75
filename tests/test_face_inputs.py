"""The Python faces refuse bad constructor arguments in one clear line (red team, session 33): no int() of 2.5,
True or '3', no truthiness of 'no' (oracle='no' switched the CHEATING observation on), no second traceback from
a half-built env, and features.augment checks its arrays instead of casting them. Also RuleConfig.load's own
input and the on/off environment variables."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from meld8_env.features import augment
from meld8_env.gym_env import Meld8SingleEnv, Meld8VectorEnv
from meld8_env.rules import RuleConfig, RuleConfigError
from meld8_env.vector import Meld8Vector

RULES = RuleConfig()


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, timeout=120
    )


# -- Meld8VectorEnv / Meld8SingleEnv ------------------------------------------------------------------


@pytest.mark.parametrize("n", [2.5, True, "3", 0, 10**7])
def test_vector_env_refuses_a_batch_size_that_is_not_a_count(n):
    # 2.5 was int()ed to 2 games, True to 1, '3' to 3 before the batch's own check saw them; 10**7 games failed in
    # numpy's allocation (about 13 GB)
    with pytest.raises(ValueError, match=re.escape(f"num_envs must be 1..1048576 (an integer), got {n!r}")):
        Meld8VectorEnv(num_envs=n)


@pytest.mark.parametrize("value", ["no", "false", 2, None])
def test_vector_env_features_must_be_a_bool(value):
    with pytest.raises(ValueError, match=f"features must be True or False, got {value!r}"):
        Meld8VectorEnv(features=value)


def test_vector_env_opponents_of_the_wrong_kind_are_named():
    with pytest.raises(ValueError, match="opponents must be an agent name or a list of 2 agents, got int"):
        Meld8VectorEnv(opponents=123)


@pytest.mark.parametrize("kwargs", [{"num_envs": 0}, {"reward": "rank "}, {"seed": 1.5}, {"opponents": []}])
def test_a_failed_construction_prints_no_second_traceback(kwargs):
    # the ValueError was followed by "Exception ignored in: VectorEnv.__del__ ... no attribute 'table'"
    code = (
        "from meld8_env.gym_env import Meld8VectorEnv, Meld8SingleEnv\n"
        "import gc\n"
        "for cls in (Meld8VectorEnv, Meld8SingleEnv):\n"
        "    try:\n"
        f"        cls(**{kwargs!r})\n"
        "    except ValueError as e:\n"
        "        print(type(e).__name__)\n"
        "    gc.collect()\n"
    )
    p = _python(code)
    assert p.returncode == 0 and p.stdout.split() == ["ValueError", "ValueError"], p.stdout + p.stderr
    assert p.stderr == "", p.stderr


@pytest.mark.parametrize("value", ["x", float("nan"), float("inf"), True, None, pytest.param(10**400, id="10**400")])
def test_single_env_illegal_reward_must_be_a_finite_number(value):
    # 'x' gave "could not convert string to float: 'x'" without naming it; nan was taken as a reward
    with pytest.raises(ValueError, match="illegal_reward must be a finite number, got"):
        Meld8SingleEnv(illegal_reward=value)


def test_single_env_takes_finite_rewards_of_any_number_type():
    for value in (-2, -0.5, np.float32(-1.5), np.int64(-3)):
        env = Meld8SingleEnv(illegal_reward=value, opponents="random")
        assert isinstance(env.illegal_reward, float) and env.illegal_reward == float(value)
        env.close()


def test_single_env_names_num_envs_instead_of_a_keyword_clash():
    with pytest.raises(ValueError, match="Meld8SingleEnv plays one game; for several use Meld8VectorEnv"):
        Meld8SingleEnv(num_envs=5)


# -- Meld8Vector and the AEC env ----------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["oracle", "autoreset"])
@pytest.mark.parametrize("value", ["no", "", 2, -1, 0.0, None])
def test_vector_switches_must_be_bools(flag, value):
    # oracle='no' was truthy: the full-information (cheating) observation was switched on
    with pytest.raises(ValueError, match=f"{flag} must be True or False, got {value!r}"):
        Meld8Vector(4, **{flag: value})


def test_switches_take_0_and_1_as_false_and_true():
    from meld8_env.config_io import check_flag

    assert [check_flag(v, "x") for v in (0, 1, np.int64(0), np.uint8(1), np.bool_(True))] == [
        False,
        True,
        False,
        True,
        True,
    ]


def test_vector_switches_take_python_and_numpy_bools():
    honest = Meld8Vector(2).obs_size
    assert Meld8Vector(2, oracle=np.False_).obs_size == honest < Meld8Vector(2, oracle=True).obs_size
    assert Meld8Vector(2, autoreset=np.True_).autoreset is True


@pytest.mark.parametrize("threads", [2.5, "2", 0, -3, True])
def test_vector_threads_must_be_a_count(threads):
    with pytest.raises(ValueError, match=f"threads must be an integer >= 1, got {threads!r}"):
        Meld8Vector(4, threads=threads)


def test_vector_threads_and_size_take_numpy_integers():
    v = Meld8Vector(np.int64(4), threads=np.int32(2))
    assert v.num_envs == 4 and type(v.num_envs) is int and len(v._parts) == 2
    v.close()


@pytest.mark.parametrize("value", ["no", "yes", 2, None])
def test_aec_oracle_must_be_a_bool(value):
    import meld8_env

    with pytest.raises(ValueError, match=f"oracle must be True or False, got {value!r}"):
        meld8_env.raw_env(oracle=value)
    honest = meld8_env.raw_env().observation_space("player_0")["observation"].shape
    assert meld8_env.raw_env(oracle=False).observation_space("player_0")["observation"].shape == honest


# -- features.augment ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def batch():
    v = Meld8Vector(4, seed=1)
    v.reset()
    return v.observation.copy(), v.action_mask.copy()


def test_augment_takes_bool_and_integer_0_1_masks_alike(batch):
    obs, masks = batch
    want = augment(obs, masks, RULES)
    assert np.array_equal(augment(obs, masks.view(np.uint8), RULES), want)  # the engine's buffers
    assert np.array_equal(augment(obs, masks.astype(np.int8), RULES), want)  # the AEC env's masks


@pytest.mark.parametrize(
    "make_masks, says",
    [
        (lambda m: m[:2], r"masks of shape \(4, 64\), one per observation, got \(2, 64\)"),
        (lambda m: np.concatenate([m, m]), r"masks of shape \(4, 64\), one per observation, got \(8, 64\)"),
        (lambda m: m[:, :10], r"masks of shape \(4, 64\), one per observation, got \(4, 10\)"),
        (lambda m: m[0], r"masks of shape \(4, 64\), one per observation, got \(64,\)"),
        (lambda m: m * 0.5, "masks of bools \\(or integers 0/1\\), got dtype float64"),
        (lambda m: m.astype(np.int64) * 2, "masks of bools \\(or integers 0/1\\), got the value 2"),
    ],
)
def test_augment_checks_the_masks_against_the_observations(batch, make_masks, says):
    # 2 rows of masks for 4 observations were taken, 8 rows failed with an IndexError inside, 10 columns gave
    # other features and 2 was read as True
    obs, masks = batch
    with pytest.raises(ValueError, match=says):
        augment(obs, make_masks(masks), RULES)


@pytest.mark.parametrize(
    "make_obs, says",
    [
        (lambda o: o + 0.7, r"shape \(N, 786\) and dtype uint8, got shape \(4, 786\) float64"),
        (lambda o: o.astype(np.int64) + 256, r"augment expects observation bytes 0\.\.255, got values 256\.\.\d+"),
        (lambda o: np.full(o.shape, np.nan), r"dtype uint8, got shape \(4, 786\) float64"),
    ],
)
def test_augment_refuses_observations_that_are_not_uint8(batch, make_obs, says):
    # float observations were truncated (obs + 0.7 gave the same features), int64 ones wrapped at 256
    obs, masks = batch
    with pytest.raises(ValueError, match=says):
        augment(make_obs(obs), masks, RULES)


def test_augment_reads_integer_observations_of_any_width_as_their_bytes(batch):
    # int64 observations holding 0..255 worked before the strict check: the same bytes, the same features
    obs, masks = batch
    np.testing.assert_array_equal(augment(obs.astype(np.int64), masks, RULES), augment(obs, masks, RULES))


def test_augment_checks_the_width_against_the_rules(batch):
    obs, masks = batch
    with pytest.raises(ValueError, match=r"shape \(N, 597\) and dtype uint8, got shape \(4, 786\) uint8"):
        augment(obs, masks, RuleConfig.two_player())


# -- RuleConfig.load ----------------------------------------------------------------------------------
def test_rule_config_load_takes_any_path_like(tmp_path):
    import os

    class Where(os.PathLike):  # a path type that is not pathlib's
        def __fspath__(self) -> str:
            return str(tmp_path / "r.yaml")

    (tmp_path / "r.yaml").write_text("starting_score: 25000\n")
    assert RuleConfig.load(Where()).starting_score == 25000


@pytest.mark.parametrize("spec", [5, 2.5, True, ["default"], b"default"])
def test_rule_config_load_names_what_it_takes(spec):
    # 5 failed inside pathlib: "expected str, bytes or os.PathLike object, not int"
    with pytest.raises(TypeError, match="rules must be a RuleConfig, a dict of options, a built-in name or a YAML"):
        RuleConfig.load(spec)


@pytest.mark.parametrize("spec", ["", "  "])
def test_rule_config_load_refuses_an_empty_name(spec):
    # an empty name is not the defaults (those are None): it was looked up as the file "."
    with pytest.raises(RuleConfigError, match="rules is an empty path: give a built-in name"):
        RuleConfig.load(spec)


# -- environment variables ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, module", [("MELD8_REQUIRE_NATIVE", "meld8_env.hands"), ("MELD8_NO_REGISTER", "meld8_env")]
)
@pytest.mark.parametrize("value", ["yes", "true", "2", " 1"])
def test_on_off_environment_variables_refuse_other_values(name, module, value):
    # only "1" counted: MELD8_REQUIRE_NATIVE=yes silently required nothing
    p = _python(f"import {module}", **{name: value})
    assert p.returncode != 0
    assert f"ValueError: {name} must be 1 (on), or 0, empty or unset (off), got {value!r}" in p.stderr


@pytest.mark.parametrize("value", ["", "0", "1"])
def test_on_off_environment_variables_take_their_values(value):
    code = "import meld8_env.hands, gymnasium; print('Meld8-v0' in gymnasium.registry)"
    p = _python(code, MELD8_REQUIRE_NATIVE=value, MELD8_NO_REGISTER=value)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(value != "1")


def test_the_rllib_envs_features_switch_must_be_a_bool():
    """The same truthiness in the RLlib env's ``features``: 'no' switched them on."""
    pytest.importorskip("ray", reason="the rllib extra")
    from meld8_env.rllib import Meld8MultiAgentEnv

    with pytest.raises(ValueError, match="env_config features must be True or False, got 'no'"):
        Meld8MultiAgentEnv({"features": "no"})


def test_the_trainers_oracle_switch_must_be_a_bool():
    """The trainer's single-seat ``oracle`` (the CHEATING critic input): 'no' switched it on."""
    from training.single_seat import SingleSeatVecEnv

    with pytest.raises(ValueError, match="oracle must be True or False, got 'no'"):
        SingleSeatVecEnv(2, ["greedy", "greedy"], oracle="no")
    assert SingleSeatVecEnv(2, ["greedy", "greedy"], oracle=False).oracle is False
