"""PPO with an oracle critic (``critic: oracle``, issue 21 section 3): the value network reads the learner
seat's full-information observation, the policy never does, and the checkpoint plays as ``ppo:PATH``."""

import json
import shutil
import zipfile

import numpy as np
import pytest
import torch

from agents.checkpoint import load_tensors, read_metadata, write_metadata
from agents.networks import OracleCriticPolicy, actor_state, oracle_critic_policy_for
from agents.registry import AgentLoadError, load_agent, shipped_baseline
from meld8_app.cli import main
from meld8_env.agent_spec import shipped_model
from meld8_env.cards import format_cards
from meld8_env.features import augmented_size
from meld8_env.observation import obs_size
from meld8_env.rules import RuleConfig
from training.single_seat import SingleSeatVecEnv
from training.train_ppo import TrainConfig, train

RULES = RuleConfig()
TINY = dict(total_timesteps=256, n_envs=8, n_steps=16, batch_size=64, n_epochs=1, eval_every=128, eval_boards=1,
            checkpoint_every=128, progress=False, critic="oracle", critic_arch=[32], init_from="ppo")  # fmt: skip


def _states(n_envs: int = 16, steps: int = 25, seed: int = 4) -> tuple[np.ndarray, np.ndarray, SingleSeatVecEnv]:
    """Real [honest | oracle] observations and masks of the learner seat, from games where it plays at random."""
    env = SingleSeatVecEnv(n_envs, [load_agent("defensive", RULES, 1), load_agent("greedy", RULES, 2)], RULES,
                           seed=seed, features=True, oracle=True)  # fmt: skip
    rng = np.random.default_rng(seed)
    obs, masks = [env.reset()], [env.action_masks()]
    for _ in range(steps - 1):
        legal = masks[-1]
        o, _, _, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in legal]))
        obs.append(o)
        masks.append(env.action_masks())
    env.close()
    return np.concatenate(obs), np.concatenate(masks), env


def _describe(row: np.ndarray, honest: int) -> str:
    """One state in R4 notation: the learner's hand and every seat's concealed cards from the oracle part."""
    hands = [format_cards(np.flatnonzero(row[honest + 53 * k : honest + 53 * (k + 1)]).tolist()) for k in range(3)]
    return f"hand {format_cards(np.flatnonzero(row[:53]).tolist())}; oracle hands {' | '.join(hands)}"


def _policy(honest: int, total: int, critic_arch: tuple[int, ...] = (64, 64)) -> OracleCriticPolicy:
    from gymnasium import spaces

    cls, kwargs = oracle_critic_policy_for([256, 256], obs_size(RULES), RULES.num_players, honest, list(critic_arch))
    return cls(spaces.Box(0, 255, (total,), np.uint8), spaces.Discrete(64), lambda _: 0.0, **kwargs)


@pytest.fixture(scope="module")
def states():
    obs, masks, env = _states()
    return obs, masks, env.honest_size


def test_observation_is_the_honest_view_then_the_oracle_part(states):
    """The env's first H columns are what an ordinary agent sees (augmented), the rest the oracle layout's
    tail: the learner's own hand comes first in it and equals its hand plane."""
    obs, masks, honest = states
    base = obs_size(RULES)
    assert honest == augmented_size(RULES) and obs.shape[1] == obs_size(RULES, oracle=True) - base + honest
    from meld8_env.features import augment

    assert np.array_equal(obs[:, :honest], augment(obs[:, :base], masks, RULES))
    assert np.array_equal(obs[:, honest : honest + 53], obs[:, :53])  # relative seat 0's concealed cards
    others = obs[:, honest + 53 : honest + 3 * 53]
    assert (others.sum(axis=1) > 0).all(), "the oracle part names the other seats' hands"


@pytest.mark.parametrize("trained", [False, True])
def test_policy_ignores_the_oracle_part_and_the_critic_reads_it(states, tiny_run, trained):
    """The leak test: on many real states the action distribution is bit-for-bit the same when only the
    oracle columns change (swapped with other states' or random bytes); the value of a critic that has
    learned (the tiny run's) changes, and that of a fresh one does not (its correction starts at zero)."""
    obs, masks, honest = states
    policy = _policy(honest, obs.shape[1], tuple(TINY["critic_arch"]))
    if trained:
        policy.load_state_dict(load_tensors(tiny_run[1], "policy.pth"))
    policy.set_training_mode(False)
    rng = np.random.default_rng(0)
    swapped, noise = obs.copy(), obs.copy()
    swapped[:, honest:] = obs[rng.permutation(len(obs)), honest:]
    noise[:, honest:] = rng.integers(0, 54, noise[:, honest:].shape, dtype=np.uint8)
    with torch.no_grad():
        t = torch.as_tensor(obs).float()
        probs = policy.get_distribution(t, action_masks=masks).distribution.probs.numpy()
        value = policy.predict_values(t).numpy()[:, 0]
        for other in (swapped, noise):
            o = torch.as_tensor(other).float()
            p = policy.get_distribution(o, action_masks=masks).distribution.probs.numpy()
            bad = np.flatnonzero((p != probs).any(axis=1))
            assert bad.size == 0, f"{bad.size} states leak, e.g. {_describe(obs[bad[0]], honest)}"
            _, logp, _ = policy.evaluate_actions(o, torch.as_tensor(masks.argmax(1)), torch.as_tensor(masks))
            _, logp0, _ = policy.evaluate_actions(t, torch.as_tensor(masks.argmax(1)), torch.as_tensor(masks))
            assert torch.equal(logp, logp0), "the training path's log-probabilities read the oracle part"
            changed = policy.predict_values(o).numpy()[:, 0] != value
            if trained:
                assert changed.mean() > 0.95, f"the critic ignores the oracle part on {(~changed).sum()} states"
            else:
                assert not changed.any(), "a fresh critic's correction is not zero"


def test_the_policy_part_is_the_shipped_network(states):
    """Loaded with the shipped ``ppo`` weights, the oracle-critic policy gives the shipped agent's own
    probabilities on the honest observation (the actor is exactly a ``card_heads`` network), and before
    it has learned anything its value is the shipped value head's."""
    obs, masks, honest = states
    policy = _policy(honest, obs.shape[1])
    shipped = load_tensors(shipped_baseline(), "policy.pth")
    own = policy.state_dict()
    assert set(actor_state(own)) == set(shipped), "the actor's names differ from a card_heads network's"
    policy.load_state_dict({**own, **shipped})
    policy.set_training_mode(False)
    with torch.no_grad():
        mine = policy.get_distribution(torch.as_tensor(obs).float(), action_masks=masks).distribution.probs.numpy()
        value = policy.predict_values(torch.as_tensor(obs).float()).numpy()
    ppo = load_agent("ppo", RULES)
    theirs = ppo.probabilities(obs[:, : obs_size(RULES)], masks)
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-7)
    with torch.no_grad():
        shipped_value = ppo.policy.predict_values(torch.as_tensor(obs[:, :honest]).float()).numpy()
    np.testing.assert_allclose(value, shipped_value, rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A tiny fine-tune of the shipped ppo with the oracle critic, the policy frozen by the value warm-up."""
    out = tmp_path_factory.mktemp("oracle_run")
    final = train(TrainConfig(out=str(out), vf_warmup=10**9, **TINY))
    return out, final


def test_tiny_oracle_run_plays_as_an_ordinary_ppo_agent(tiny_run, states, tmp_path):
    out, final = tiny_run
    meta = read_metadata(final)
    assert meta["critic"] == "oracle" and meta["init_from"] == "ppo" and meta["obs_size"] == augmented_size(RULES)
    agent = load_agent(f"ppo:{final}", RULES)  # the seat protocol's loader: honest observations only
    obs, masks, _ = states
    base = obs[:, : obs_size(RULES)]
    # init_from ppo + a warm-up longer than the run: the policy is the shipped one, the critic trained
    np.testing.assert_allclose(agent.probabilities(base, masks), load_agent("ppo", RULES).probabilities(base, masks),
                               rtol=1e-5, atol=1e-7)  # fmt: skip
    first, last = (load_tensors(p, "policy.pth") for p in (out / "ckpt_128.zip", final))
    critic = [k for k in last if k.startswith("oracle_critic.")]
    assert critic and any(not torch.equal(first[k], last[k]) for k in critic), "the oracle critic never learned"
    assert all(torch.equal(first[k], last[k]) for k in actor_state(last) if k != "value_net.weight"
               and k != "value_net.bias")  # fmt: skip
    assert main(["tournament", "--agents", f"ppo:{final},greedy,random", "--boards", "1", "--out",
                 str(tmp_path / "t")]) == 0  # fmt: skip
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert any(f"ppo:{final}" in json.dumps(g) for g in games)


def test_resume_keeps_the_critic(tiny_run):
    out, _ = tiny_run
    with pytest.raises(ValueError, match="trained with critic=oracle; the config asks for critic=plain"):
        train(TrainConfig(out=str(out), resume=True, **{**TINY, "critic": "plain", "total_timesteps": 512}))


def test_bad_options_are_one_line_errors(tmp_path, capsys):
    for overrides, message in [
        (["critic=value"], "'critic' must be one of plain, oracle, got 'value'"),
        (["critic=oracle", "network=shared"], "critic=oracle needs network=card_heads"),
        (["critic=oracle", "bc_decisions=10"], "set bc_decisions=0"),
        (["critic_arch=[0]"], "'critic_arch' must be a non-empty list of layer sizes"),
        (["init_from=ppo", "bc_decisions=10"], "init_from and bc_decisions > 0 are two starts"),
        (["critic=[oracle]"], "'critic' must be a string, like its default 'plain'"),
    ]:
        with pytest.raises(ValueError, match=message):
            TrainConfig.load(None, overrides)
    run = tmp_path / "run"
    broken = tmp_path / "broken.zip"  # the shipped metadata, weights that are not a tensor file
    with zipfile.ZipFile(shipped_model("ppo")) as z, zipfile.ZipFile(broken, "w") as o:
        for name in z.namelist():
            o.writestr(name, b"garbage" if name == "policy.pth" else z.read(name))
    for overrides, message in [
        (["init_from=nope.zip"], "no checkpoint 'nope.zip' (give a .zip path, or one of ppo, distilled)"),
        ([f"init_from={broken}"], "policy.pth is not a plain tensor file"),
        (["net_arch=[64]"], "holds a card_heads [256, 256] network (features=True); the config asks for card_heads"),
    ]:
        sets = [arg for o in overrides for arg in ("--set", o)]
        assert main(["train", "ppo_oracle_critic", "--set", f"out={run}", *sets]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
        assert not run.exists(), "a refused run wrote its folder"


def test_checkpoint_metadata_with_a_bad_critic_is_refused(tmp_path):
    path = tmp_path / "x.zip"
    shutil.copy(shipped_baseline(), path)
    with zipfile.ZipFile(path) as z:
        meta = json.loads(z.read("meld8.json"))
    write_metadata(path, {**meta, "critic": "sometimes"})
    with pytest.raises(AgentLoadError, match="field 'critic' must be one of plain, oracle, got 'sometimes'"):
        load_agent(f"ppo:{path}", RULES)
    write_metadata(path, {**meta, "network": "shared", "critic": "oracle"})
    with pytest.raises(AgentLoadError, match="critic 'oracle' comes only with network 'card_heads'"):
        load_agent(f"ppo:{path}", RULES)
