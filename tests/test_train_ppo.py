"""Training path: tiny-budget smoke run, resume, checkpoint -> agent, determinism, clear errors."""

import numpy as np
import pytest

from agents.registry import AgentLoadError, load_agent
from meld8_app.cli import main
from training.train_ppo import TrainConfig, train

TINY = dict(total_timesteps=256, n_envs=8, n_steps=16, batch_size=64, n_epochs=1, eval_every=128, eval_boards=1,
            checkpoint_every=128, net_arch=[32], progress=False)  # fmt: skip


def test_smoke_run_writes_checkpoints_and_evaluations(tmp_path):
    final = train(TrainConfig(out=str(tmp_path), **TINY))
    assert final.is_file() and (tmp_path / "best.zip").is_file() and list(tmp_path.glob("ckpt_*.zip"))
    assert (tmp_path / "eval.jsonl").read_text().strip() and (tmp_path / "tb").is_dir()
    assert (tmp_path / "learning_curve.png").stat().st_size > 0
    assert not list(tmp_path.glob("_eval*")), "the evaluation's scratch checkpoint was left behind"


def test_resume_continues_from_the_newest_checkpoint(tmp_path, capsys):
    """A resume that changes options says which, and keeps the run's first config.yaml (a resume without the first
    session's --set options took the file's values unannounced and rewrote the record of them)."""
    import yaml

    train(TrainConfig(out=str(tmp_path), **TINY))
    first = (tmp_path / "config.yaml").read_text()
    capsys.readouterr()
    train(TrainConfig(out=str(tmp_path), resume=True, **{**TINY, "total_timesteps": 512}))
    steps = sorted(int(p.stem.split("_")[1]) for p in tmp_path.glob("ckpt_*.zip"))
    assert steps[-1] >= 384
    before = yaml.safe_load(first)["total_timesteps"]
    err = capsys.readouterr().err
    # only the option that changed: resume (False, then True) and progress say how a session runs (review, s45)
    assert f"resume: options differ from the run's config.yaml: total_timesteps {before} -> 512 (" in err
    assert (tmp_path / "config.prev.yaml").read_text() == first
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["total_timesteps"] == 512
    # and again: the last config is kept
    train(TrainConfig(out=str(tmp_path), resume=True, **{**TINY, "total_timesteps": 640}))
    assert "total_timesteps 512 -> 640 (" in capsys.readouterr().err
    # a plain resume says nothing, and run/ is run
    kept = (tmp_path / "config.prev.yaml").read_text()
    train(TrainConfig(out=f"{tmp_path}/", resume=True, **{**TINY, "total_timesteps": 640, "progress": True}))
    assert "resume: options differ" not in capsys.readouterr().err
    assert (tmp_path / "config.prev.yaml").read_text() == kept


def test_a_resume_refuses_unreadable_logs_before_rewriting_the_config(tmp_path):
    # red team, session 32: such rows were deleted, or failed after config.yaml had been rewritten
    import json

    train(TrainConfig(out=str(tmp_path), **TINY))
    config, log = (tmp_path / "config.yaml").read_text(), tmp_path / "eval.jsonl"
    rows = log.read_text()
    for bad, says in [
        (json.dumps({"mean_placement": "bad", "timesteps": 100}), "'mean_placement' is bad, not a number"),
        (json.dumps({"mean_placement": 2.0, "timesteps": 64.0}), "'timesteps' is 64.0, not an integer"),
        ('{"mean_placement": 2.0, "timesteps": 64},', "line 1 is not a JSON object"),
    ]:
        log.write_text(bad + "\n" + rows)
        with pytest.raises(ValueError, match=says):
            train(TrainConfig(out=str(tmp_path), resume=True, **{**TINY, "total_timesteps": 512, "seed": 9}))
        assert log.read_text() == bad + "\n" + rows and (tmp_path / "config.yaml").read_text() == config


def test_checkpoint_is_an_agent_in_tournaments(tmp_path):
    final = train(TrainConfig(out=str(tmp_path), **TINY))
    agent = load_agent(f"ppo:{final}")
    assert agent.name == "ppo"
    out = tmp_path / "t"
    assert main(["tournament", "--agents", f"ppo:{final},greedy,random", "--boards", "1", "--out", str(out)]) == 0


def test_same_seed_same_training(tmp_path):
    from sb3_contrib import MaskablePPO

    a = train(TrainConfig(out=str(tmp_path / "a"), **TINY))
    b = train(TrainConfig(out=str(tmp_path / "b"), **TINY))
    pa = MaskablePPO.load(a).policy.state_dict()
    pb = MaskablePPO.load(b).policy.state_dict()
    assert all(np.array_equal(pa[k].numpy(), pb[k].numpy()) for k in pa)


def test_bad_config_and_missing_checkpoint(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown train option 'learning_rat'"):
        TrainConfig.load(None, ["learning_rat=0.1"])
    assert main(["train", "ppo_vs_bots", "--set", "n_envs=0"]) == 2
    assert "'n_envs' must be an integer >= 1" in capsys.readouterr().err
    # a few zeros too many asked for hundreds of GiB after the run folder was made, and the folder blocked a rerun
    for bad, says in [("n_envs=1000000000", "'n_envs' must be at most 65,536 games, got 1,000,000,000"),
                      ("n_steps=1000000000", "n_envs * n_steps (the rollout buffer's steps) must be at most 1,048,576"),
                      ("n_envs=65536", "got 65,536 * 64")]:  # fmt: skip
        assert main(["train", "ppo_vs_bots", "--set", bad, "--set", f"out={tmp_path}/big"]) == 2
        assert says in capsys.readouterr().err and not (tmp_path / "big").exists()
    with pytest.raises(ValueError, match="'network' must be one of separate, shared, card_heads"):
        TrainConfig.load(None, ["network=cnn"])
    with pytest.raises(ValueError, match="network=card_heads needs features=true"):
        TrainConfig.load(None, ["features=false"])
    assert main(["train", "ppo_vs_bots", "--set", "shaping=-0.5"]) == 2
    assert "train option shaping must be a number in [0, 1)" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"'gamma' must be in \[0, 1\]"):
        TrainConfig.load(None, ["gamma=2.0"])
    assert main(["train", "ppo_vs_bots", "--set", f"out={tmp_path}/run", "--set", "eval_opponents=[greedy, grdy]"]) == 2
    assert "unknown agent 'grdy'" in capsys.readouterr().err and not (tmp_path / "run").exists()
    with pytest.raises(AgentLoadError, match="checkpoint not found"):
        load_agent(f"ppo:{tmp_path}/nope.zip")


def _states_with_a_win_on_offer(n: int = 300):
    """Real (observation, mask) pairs from greedy self-play where Tsumo or Ron is legal."""
    from meld8_env.vector import Meld8Vector

    agent = load_agent("greedy")
    v = Meld8Vector(64, seed=5)
    v.reset()
    obs, masks = [], []
    while len(obs) < n:
        offer = v.action_mask[:, 52] | v.action_mask[:, 53]
        for i in np.flatnonzero(offer):
            obs.append(v.observation[i].copy())
            masks.append(v.action_mask[i].copy())
        v.step(agent.act_batch(v.observation, v.action_mask))
    return np.array(obs[:n]), np.array(masks[:n])


def test_policy_learns_to_take_the_win_when_offered():
    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv

    obs, masks = _states_with_a_win_on_offer()

    class WinOnOffer(gym.Env):
        """One decision per episode in a real state with a win legal; reward 1 for declaring it."""

        observation_space = gym.spaces.Box(0, 255, (obs.shape[1],), np.uint8)
        action_space = gym.spaces.Discrete(64)

        def __init__(self, seed: int) -> None:
            self.rng = np.random.default_rng(seed)
            self.i = 0

        def reset(self, seed=None, options=None):
            self.i = int(self.rng.integers(len(obs)))
            return obs[self.i], {}

        def step(self, action):
            reward = 1.0 if int(action) in (52, 53) else 0.0
            return obs[self.i], reward, True, False, {}

        def action_masks(self):
            return masks[self.i]

    env = DummyVecEnv([lambda s=s: WinOnOffer(s) for s in range(8)])
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=4, learning_rate=1e-3, seed=0, verbose=0)

    def win_rate(deterministic: bool) -> float:
        acts, _ = model.predict(obs, action_masks=masks, deterministic=deterministic)
        return float(np.isin(acts, (52, 53)).mean())

    before = win_rate(deterministic=False)
    model.set_logger(Logger(folder=None, output_formats=[]))  # SB3 would make a log folder in /tmp per run
    model.learn(total_timesteps=6000)
    after = win_rate(deterministic=True)
    assert after >= 0.95 > before


def test_shipped_baseline_loads_and_plays_legal_moves():
    from meld8_env.vector import Meld8Vector

    agent = load_agent("ppo")
    v = Meld8Vector(16, seed=2)
    v.reset()
    for _ in range(50):
        acts = agent.act_batch(v.observation, v.action_mask)
        assert v.action_mask[np.arange(16), acts].all()
        v.step(acts)


def test_behaviour_cloning_learns_the_teachers_choices():
    """pretrain() on greedy's decisions: the policy then agrees with greedy far more than before."""
    from sb3_contrib import MaskablePPO

    from agents.networks import policy_for
    from meld8_env.rules import RuleConfig
    from training.imitation import collect, pretrain
    from training.single_seat import SingleSeatVecEnv

    rules = RuleConfig()
    data = collect(load_agent("greedy", rules), 6000, rules, seed=1, n_games=64)
    obs, masks, acts = data
    assert obs.shape == (6000, 1017) and (masks.sum(axis=1) > 1).all()
    assert masks[np.arange(len(acts)), acts].all()  # the teacher's actions were legal
    env = SingleSeatVecEnv(4, [load_agent("random", rules), load_agent("random", rules)], rules, features=True)
    policy, kwargs = policy_for("card_heads", [128], 786, 3)
    model = MaskablePPO(policy, env, n_steps=8, seed=0, device="cpu", policy_kwargs=kwargs)
    before = pretrain(model, data, epochs=0)
    after = pretrain(model, data, epochs=10, batch_size=256)
    # (greedy breaks exact ties by card id, so full agreement is not expected from 6k examples)
    assert before < 0.3 and after > 0.6, (before, after)


def test_value_warmup_keeps_the_policy_frozen(tmp_path, capsys):
    """During vf_warmup only the value side learns: policy-side weights stay as they were; a warmup that covers the
    whole run is said at its start (a user's short run of the shipped config never trained its policy)."""
    from sb3_contrib import MaskablePPO

    from training.train_ppo import policy_side_parameters

    cfg = {**TINY, "network": "separate", "vf_warmup": 10**9, "checkpoint_every": 64, "total_timesteps": 384}
    train(TrainConfig(out=str(tmp_path), **cfg))
    err = capsys.readouterr().err
    assert (
        "note: vf_warmup (1,000,000,000) is past the run's last step (384: total_timesteps 384 in rollouts of 128)"
        in err
    )
    assert "the policy stays frozen for the whole run" in err
    # at the last step itself the policy is unfrozen before the last update, and learns there: no note (review, s45)
    train(TrainConfig(out=str(tmp_path / "edge"), **{**cfg, "vf_warmup": 384}))
    assert "vf_warmup" not in capsys.readouterr().err
    first, last = (MaskablePPO.load(tmp_path / f"ckpt_{t}.zip").policy for t in (128, 384))
    same = [np.array_equal(a.detach().numpy(), b.detach().numpy())
            for a, b in zip(policy_side_parameters(first), policy_side_parameters(last), strict=True)]  # fmt: skip
    assert same and all(same)
    assert not np.array_equal(first.value_net.weight.detach().numpy(), last.value_net.weight.detach().numpy())


def test_selfplay_draws_opponents_from_own_checkpoints_and_bots(tmp_path):
    import json

    cfg = {**TINY, "total_timesteps": 768, "checkpoint_every": 64}
    train(TrainConfig(out=str(tmp_path), selfplay=True, pool_every=128, pool_bots=["random"], **cfg))
    draws = [json.loads(x) for x in (tmp_path / "opponents.jsonl").read_text().splitlines()]
    picked = [p for d in draws for p in d["opponents"]]
    assert len(draws) >= 4 and all(len(d["opponents"]) == 2 for d in draws)
    assert any(p.endswith(".zip") for p in picked) and "random" in picked
    assert (tmp_path / "final.zip").is_file()


@pytest.mark.parametrize("network", ["card_heads", "shared", "separate"])
def test_save_load_round_trip_gives_the_same_policy(tmp_path, network):
    """A saved and reloaded model gives the same action probabilities and values on real states."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    from agents.networks import policy_for
    from meld8_env.rules import RuleConfig
    from training.single_seat import SingleSeatVecEnv

    rules = RuleConfig()
    env = SingleSeatVecEnv(16, [load_agent("greedy", rules), load_agent("random", rules)], rules, features=True)
    policy, kwargs = policy_for(network, [64], 786, 3)
    model = MaskablePPO(policy, env, n_steps=16, batch_size=64, seed=3, device="cpu", policy_kwargs=kwargs)
    model.set_logger(Logger(folder=None, output_formats=[]))
    model.learn(32)
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    obs = torch.as_tensor(env.reset(), dtype=torch.float32)
    masks = env.action_masks()
    a, b = model.policy, loaded.policy
    with torch.no_grad():
        pa = a.get_distribution(obs, action_masks=masks).distribution.probs
        pb = b.get_distribution(obs, action_masks=masks).distribution.probs
        assert torch.equal(pa, pb) and torch.equal(a.predict_values(obs), b.predict_values(obs))
    assert type(loaded.policy) is type(model.policy)
