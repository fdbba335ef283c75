"""RLlib face and backend (issue 13), against the real RLlib: its own env check passes with checking on,
rewards reach every seat across interleaved turns and claims, the league mixes snapshots and bots, and a
tiny run on a local Ray instance trains, writes a weights-only policy that plays a tournament."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the rllib extra (pip install 'meld8[rllib]')")

from meld8_env.rllib import Meld8MultiAgentEnv  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402


@pytest.mark.parametrize("features", [False, True], ids=["plain", "features"])
def test_rllibs_own_env_check_passes(features):
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = Meld8MultiAgentEnv({"seed": 3, "features": features})
    check_multiagent_environments(env)  # steps action_space.sample(): legal by construction
    obs, _ = env.reset(seed=3)
    ((aid, o),) = obs.items()
    assert env.observation_spaces[aid].contains(o)


@pytest.mark.parametrize("rules", [RuleConfig(max_replays=1), None], ids=["3p", "2p"])
def test_turn_based_contract_and_rewards_add_up_to_the_final_scores(rules):
    rules = rules or RuleConfig.from_dict({**RuleConfig.two_player().to_dict(), "max_replays": 1})
    env = Meld8MultiAgentEnv({"rules": rules.to_dict(), "seed": 1})
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, _ = env.reset(seed=episode)
        returns = dict.fromkeys(env.possible_agents, 0.0)
        while True:
            assert len(obs) == 1  # only the acting seat is observed
            ((aid, o),) = obs.items()
            assert o["observations"].dtype == np.float32 and o["action_mask"].dtype == np.float32
            assert env.observation_spaces[aid].contains(o)
            action = int(rng.choice(np.flatnonzero(o["action_mask"])))
            obs, rew, term, trunc, _ = env.step({aid: action})
            for k, r in rew.items():
                returns[k] += r
            if term["__all__"]:
                assert set(obs) == set(env.possible_agents) and all(term[a] for a in env.possible_agents)
                break
            assert not trunc["__all__"]
        finals = [int(x) for x in env.vec.final_scores[0]]
        for s, aid in enumerate(env.possible_agents):
            assert returns[aid] == pytest.approx((finals[s] - rules.starting_score) / 10_000, abs=1e-4)


def test_illegal_actions_are_refused_with_the_legal_ones():
    from meld8_env.actions import IllegalActionError

    env = Meld8MultiAgentEnv({"seed": 2})
    obs, _ = env.reset(seed=2)
    ((aid, o),) = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="legal:"):
        env.step({aid: bad})
    with pytest.raises(ValueError, match="to act"):
        env.step({"seat_9": 0})
    with pytest.raises(ValueError, match="unknown env_config key"):
        Meld8MultiAgentEnv({"wall": 3})


def test_league_mixes_the_learner_snapshots_and_bots():
    from training.rllib_train import league_module

    cfg = {"seed": 0, "mix_self": 0.4, "mix_snapshots": 0.3, "league_bots": ["greedy", "defensive"]}
    seen: dict[str, int] = {}
    for ep in range(600):
        mods = [league_module(f"seat_{s}", f"ep{ep}", 3, cfg, filled=2) for s in range(3)]
        assert "learner" in mods  # every episode trains the learner
        assert mods == [league_module(f"seat_{s}", f"ep{ep}", 3, cfg, filled=2) for s in range(3)]  # stable
        for m in mods:
            seen[m] = seen.get(m, 0) + 1
    assert {"learner", "snap_0", "snap_1", "greedy", "defensive"} <= set(seen) and "snap_2" not in seen
    # the documented mix: of non-learner-seat draws, ~40% self, ~30% snapshots, ~30% bots
    others = 600 * 2
    snaps = seen["snap_0"] + seen["snap_1"]
    assert abs(snaps / others - 0.3) < 0.06 and abs((seen["greedy"] + seen["defensive"]) / others - 0.3) < 0.06
    # before any snapshot exists, snapshot draws fall to the bots
    early = {league_module("seat_1", f"e{ep}", 3, cfg, filled=0) for ep in range(200)}
    assert not any(m.startswith("snap") for m in early)


def test_a_tiny_league_run_trains_and_its_policy_plays_a_tournament(tmp_path):
    """One local Ray instance, two iterations (a snapshot after the first), an evaluation, a
    weights-only policy that plays a 3-board tournament as rllib:PATH."""
    from training.rllib_train import RllibConfig, train
    from training.tournament import TournamentConfig, run

    cfg = RllibConfig.load(None, [
        "total_timesteps=800", "num_env_runners=1", "train_batch_size=400", "batch_size=128", "n_epochs=1",
        "net_arch=[32]", "snapshot_slots=1", "snapshot_every=1", "eval_every=2", "eval_boards=2", "progress=false",
        f"out={tmp_path / 'run'}",
    ])  # fmt: skip
    best = train(cfg)
    out = tmp_path / "run"
    assert (best / "weights.npz").exists() and (out / "checkpoint").is_dir()
    rows = [json.loads(x) for x in (out / "eval.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [0, 2] and rows[-1]["games"] == 12
    log = [json.loads(x) for x in (out / "opponents.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in log] == [1, 2] and log[-1]["snapshots"] == 1
    assert log[-1]["module_steps"].get("learner", 0) > 0
    res = run(TournamentConfig(agents=[f"rllib:{best}", "greedy", "random"], boards=3, out=str(tmp_path / "t"),
                               progress=False, chart=False))  # fmt: skip
    assert res["games"] == 18 and f"rllib:{best}" in res["agents"]


def test_bad_rllib_paths_are_one_line(tmp_path):
    from agents.registry import AgentLoadError, load_agent

    with pytest.raises(AgentLoadError, match="not an RLlib policy of meld8"):
        load_agent(f"rllib:{tmp_path}")
    (tmp_path / "meld8.json").write_text("{}")
    (tmp_path / "weights.npz").write_bytes(b"not a zip")
    with pytest.raises(AgentLoadError, match="not Meld8 policy metadata"):
        load_agent(f"rllib:{tmp_path}")


def test_bad_league_options_are_one_line():
    from training.rllib_train import RllibConfig

    for bad, says in (("mix_self=2", "probabilities"), ("league_bots=[wizard]", "built-in"), ("wizard=1", "unknown"),
                      ("total_timesteps=0", ">= 1"), ("net_arch=64", "like its default"), ("shaping=2", "shaping"),
                      ("gae_lambda=1.5", r"in \[0, 1\]")):  # fmt: skip
        with pytest.raises(ValueError, match=says):
            RllibConfig.load(None, [bad])
    assert RllibConfig.load("rllib_selfplay").league_bots == ["greedy", "defensive"]  # the shipped config loads


def test_a_missing_rllib_extra_is_a_one_line_hint():
    import subprocess
    import sys

    code = ("import sys; sys.modules['ray.rllib'] = None; from meld8_app.cli import main; "
            "sys.exit(main(['train', 'rllib_selfplay', '--backend', 'rllib']))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "pip install" in out.stderr and "meld8[rllib]" in out.stderr
    assert "Traceback" not in out.stderr


def test_the_card_heads_module_masks_illegal_actions_and_scores_cards_with_shared_weights():
    """CardHeadsRLModule: illegal actions get probability 0; values come from the same latent; the card
    head is one set of weights for all 52 discards (moving a hand's features to another card moves the
    logit with it); its weights survive export -> rllib:PATH."""
    import torch
    from ray.rllib.core.columns import Columns

    from agents.card_net import N_CARDS
    from agents.rllib_modules import CardHeadsRLModule, learner_module_spec

    rules = RuleConfig()
    env = Meld8MultiAgentEnv({"seed": 5, "features": True})
    spec = learner_module_spec("card_heads", [32], rules)
    spec.observation_space, spec.action_space = env.observation_spaces["seat_0"], env.action_spaces["seat_0"]
    module = spec.build()
    assert isinstance(module, CardHeadsRLModule)
    rows, rng = [], np.random.default_rng(1)
    obs, _ = env.reset(seed=5)
    for _ in range(40):
        ((aid, o),) = obs.items()
        rows.append(o)
        obs, _, term, _, _ = env.step({aid: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        if term["__all__"]:
            obs, _ = env.reset()
    batch = {k: torch.as_tensor(np.stack([r[k] for r in rows])) for k in ("observations", "action_mask")}
    out = module.forward_train({Columns.OBS: batch})
    probs = torch.softmax(out[Columns.ACTION_DIST_INPUTS], dim=1)
    assert torch.all(probs[batch["action_mask"] < 0.5] == 0)
    assert torch.allclose(probs.sum(1), torch.ones(len(rows)))
    values = module.compute_values({Columns.OBS: batch}, out[Columns.EMBEDDINGS])
    assert values.shape == (len(rows),)
    assert torch.allclose(values, module.compute_values({Columns.OBS: batch}))
    # shared card weights: the card head's score of card i depends only on card i's features
    cards, _ = module.inputs(torch.expm1(batch["observations"]))
    scores = module.heads.card(cards).squeeze(-1)
    swapped = module.heads.card(cards.flip(1)).squeeze(-1)
    assert scores.shape == (len(rows), N_CARDS) and torch.allclose(swapped, scores.flip(1))


def test_unknown_networks_are_one_line():
    from agents.rllib_modules import learner_module_spec
    from training.rllib_train import RllibConfig

    with pytest.raises(ValueError, match="choose one of card_heads, mlp"):
        learner_module_spec("transformer", [8], RuleConfig())
    with pytest.raises(ValueError, match="must be one of card_heads, mlp"):
        RllibConfig.load(None, ["network=transformer"])
    with pytest.raises(ValueError, match="reads the look-ahead features"):
        RllibConfig.load(None, ["features=false"])
    assert RllibConfig.load(None, ["features=false", "network=mlp"]).network == "mlp"


def _league_cmd(out, *extra: str) -> list[str]:
    import sys

    sets = ["total_timesteps=1800", "eval_every=2", "num_env_runners=1", "train_batch_size=300", "batch_size=100",
            "n_epochs=1", "net_arch=[16]", "snapshot_slots=1", "snapshot_every=1", "eval_boards=1",
            "progress=false", f"out={out}", *extra]  # fmt: skip
    return [sys.executable, "-m", "meld8_app", "train", "rllib_selfplay", "--backend", "rllib",
            *[x for s in sets for x in ("--set", s)]]  # fmt: skip


def test_a_league_run_killed_with_sigkill_resumes_and_logs_every_iteration_once(tmp_path):
    """kill -9 of meld8 (and its local Ray) mid-run, after a checkpoint: resume continues from it, and
    metrics / opponents / eval logs hold each iteration exactly once; starting over in that folder is
    refused with one line instead of mixing two runs."""
    import os
    import signal
    import subprocess
    import time

    out = tmp_path / "run"
    proc = subprocess.Popen(_league_cmd(out), start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    metrics = out / "metrics.jsonl"
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            rows = metrics.read_text().splitlines() if metrics.exists() else []
            if len(rows) >= 3:  # iteration 3 logged: past the checkpoint of iteration 2, before the one of 4
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    state = json.loads((out / "checkpoint" / "league.json").read_text())
    assert state["iteration"] in (2, 4)  # the checkpoint the kill left
    done = subprocess.run(_league_cmd(out, "resume=true"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]

    def iterations(name: str) -> list[int]:
        return [json.loads(x)["iteration"] for x in (out / name).read_text().splitlines()]

    assert iterations("metrics.jsonl") == [1, 2, 3, 4, 5, 6]
    assert iterations("opponents.jsonl") == [1, 2, 3, 4, 5, 6]
    assert iterations("eval.jsonl") == [0, 2, 4, 6]  # 0: the untrained learner
    assert json.loads((out / "checkpoint" / "league.json").read_text())["iteration"] == 6
    assert not (out / "checkpoint.tmp").exists() and not (out / "checkpoint.old").exists()
    again = subprocess.run(_league_cmd(out, "seed=5"), capture_output=True, text=True, timeout=300)
    assert again.returncode == 2 and "already holds a run" in again.stderr and "Traceback" not in again.stderr
    assert "seed: 0" in (out / "config.yaml").read_text()  # the refused start wrote nothing


def test_logs_are_trimmed_to_the_checkpoint_and_a_line_cut_by_a_kill_is_dropped(tmp_path):
    from training.rllib_train import LOGS, _row_iteration
    from training.run_folder import RunFolder

    folder = RunFolder(tmp_path, "rllib")
    for name in LOGS:
        rows = "".join(json.dumps({"iteration": i, "x": name}) + "\n" for i in range(4))
        (tmp_path / name).write_text(rows + '{"iteration": 4, "x"')  # the last line cut mid-write
    for name in LOGS:  # what a resume from the checkpoint of iteration 2 keeps
        folder.keep_rows(name, lambda r: _row_iteration(r) <= 2)
    for name in LOGS:
        assert [json.loads(x)["iteration"] for x in (tmp_path / name).read_text().splitlines()] == [0, 1, 2]


def test_a_second_run_into_the_same_folder_and_a_corrupted_league_state_are_one_line(tmp_path):
    """Both are refused before Ray starts: two runs at once would interleave their logs; a league state
    that is not JSON (hand-edited, disk damage) would resume from nonsense."""
    from training.rllib_train import RllibConfig, train
    from training.tournament import OutputLock

    cfg = RllibConfig.load(None, [f"out={tmp_path}", "progress=false"])
    with OutputLock(tmp_path), pytest.raises(ValueError, match=r"in use by pid \d+"):
        train(cfg)
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / "league.json").write_text('{"iteration": 4, "fil')
    with pytest.raises(ValueError, match="not a league state"):
        train(RllibConfig.load(None, [f"out={tmp_path}", "progress=false", "resume=true"]))


@pytest.mark.parametrize(
    "name, make, says",
    [
        ("checkpoint.tmp", "link", "is not a folder but a symbolic link"),  # RLlib's files went where it pointed
        ("policy_it3", "link", "is not a folder but a symbolic link"),  # a resume's export of iteration 3 wrote there
        ("best.tmp", "file", "is not a folder but a file"),  # failed after the iteration had trained
        ("metrics.jsonl", "folder", "is not a regular file but a folder"),
        ("checkpoint.old", "link", "is not a folder but a symbolic link"),
        ("best", "file", "is not a folder but a file"),
    ],
)
def test_a_fixed_name_of_the_wrong_kind_is_refused_before_anything_is_written(tmp_path, name, make, says):
    """Session 48: the SB3 trainer checked the kind of each name it writes (session 47), the RLlib one did not."""
    from training.rllib_train import RllibConfig, train

    out, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    if make == "link":
        (out / name).symlink_to(elsewhere)
    elif make == "file":
        (out / name).write_text("x\n")
    else:
        (out / name).mkdir()
    (out / "checkpoint").mkdir()  # a run to resume: most of these names alone mark a run that never saved
    (out / "checkpoint" / "league.json").write_text('{"iteration": 2}')
    (out / "run.json").write_text('{"backend": "rllib"}')
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(ValueError, match=f"^{out / name} {says}: meld8 keeps .* move it out of"):
        train(RllibConfig.load(None, [f"out={out}", "progress=false", "resume=true"]))
    assert sorted(p.name for p in out.iterdir()) == before and not any(elsewhere.iterdir())


def test_reset_with_a_seed_plays_the_game_of_that_seed_as_every_other_face():
    """Seeds audit, session 35: reset(seed=42) played the game seeded by a draw from default_rng(42), not game 42
    as Meld8Vector, the PettingZoo env and the Gymnasium faces do."""
    from meld8_env.rllib import Meld8MultiAgentEnv
    from meld8_env.vector import Meld8Vector

    env = Meld8MultiAgentEnv({})
    env.reset(seed=42)
    ref = Meld8Vector(1, seed=42)
    ref.reset(seed=42)
    assert env.vec.seeds.tolist() == [42] and np.array_equal(env.vec.observation, ref.observation)
    again = Meld8MultiAgentEnv({})
    again.reset(seed=42)
    env.reset()
    again.reset()
    assert env.vec.seeds.tolist() == again.vec.seeds.tolist()  # unseeded resets follow the seed


def test_step_takes_exactly_one_action_id_for_the_seat_to_act():
    # red team, session 37: int() played 6.9 as 6, "6" as 6, True as 1 and -1 as "hold still"; other keys were dropped
    from meld8_env.actions import IllegalActionError

    env = Meld8MultiAgentEnv({})
    obs, _ = env.reset(seed=1)
    me = next(iter(obs))
    legal = int(np.flatnonzero(obs[me]["action_mask"])[0])
    for bad in (legal + 0.9, str(legal), True, -1, None, 2**70, np.array([legal])):
        with pytest.raises(IllegalActionError, match=f"for {me}"):
            env.step({me: bad})
    other = next(a for a in env.possible_agents if a != me)
    for bad in ({me: legal, "seat_9": 5}, {other: legal}, [legal]):
        with pytest.raises(ValueError, match=f"one action, for {me}"):
            env.step(bad)
    assert env._steps == 0  # nothing was played
    env.step({me: np.array(legal)})  # a 0-d array, as a module's output may be
    while True:
        seat = int(env.vec.current_seat[0])
        mask = env.vec.action_mask[0]
        _, _, done, _, _ = env.step({f"seat_{seat}": int(np.flatnonzero(mask)[0])})
        if done["__all__"]:
            break
    with pytest.raises(RuntimeError, match="the game is over"):
        env.step({me: legal})


def test_seed_and_max_steps_are_checked_before_anything_changes():
    def next_game(refuse: bool) -> int:
        env = Meld8MultiAgentEnv({})
        env.reset(seed=1)
        if refuse:
            with pytest.raises(ValueError, match="seed must be an integer 0..2"):
                env.reset(seed=2**64)
        env.reset()
        return int(env.vec.seeds[0])

    assert next_game(True) == next_game(False)
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="seed must be an integer"):
            Meld8MultiAgentEnv({}).reset(seed=bad)
        with pytest.raises(ValueError, match="env_config seed must be an integer"):
            Meld8MultiAgentEnv({"seed": bad})
    for bad in (-5, 0, "10", 2.5):
        with pytest.raises(ValueError, match="env_config max_steps must be an integer >= 1"):
            Meld8MultiAgentEnv({"max_steps": bad})


def test_a_league_run_ended_by_sigterm_saves_a_checkpoint_and_says_so(tmp_path):
    """Session 46: a SIGTERM (a scheduler ending the job) went to Ray's driver handler (``sys.exit``), skipping the
    save of Ctrl-C's path and printing Ray's traceback. Now it takes that path: one line naming the iteration and
    the checkpoint, exit status 143, and a league state as far as the run got."""
    import os
    import signal
    import subprocess
    import time

    out = tmp_path / "run"
    proc = subprocess.Popen(_league_cmd(out, "total_timesteps=30000"), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    metrics = out / "metrics.jsonl"
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if metrics.exists() and metrics.read_text().splitlines():  # iteration 1 logged: inside the loop
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before the signal"
        proc.send_signal(signal.SIGTERM)  # the driver alone, as a scheduler's first signal
        err = proc.communicate(timeout=240)[1]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    last = err.strip().splitlines()[-1]
    assert proc.returncode == 143, err[-2000:]
    assert last.startswith("meld8 train: interrupted: stopped after iteration ") and "resume=true" in last, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
    done = len(metrics.read_text().splitlines())
    assert json.loads((out / "checkpoint" / "league.json").read_text())["iteration"] == done
