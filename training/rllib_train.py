"""Train with Ray RLlib (PPO, new API stack) in a self-play league: ``meld8 train CONFIG --backend rllib``.

The env is ``meld8_env.rllib.Meld8MultiAgentEnv``; the modules are

- ``learner`` - the policy being trained: ``network: card_heads`` (``agents.rllib_modules.CardHeadsRLModule``,
  the architecture of the SB3 baseline: a trunk MLP of ``hidden`` plus heads shared over cards, on the
  look-ahead features) or ``network: mlp`` (RLlib's action-masking PPO module over an MLP of ``hidden``);
- ``snap_0`` .. ``snap_{K-1}`` - frozen copies of the learner, refreshed round robin every
  ``snapshot_every`` iterations (an empty slot is never drawn);
- one module per bot in ``league_bots`` (``greedy``, ``defensive``: ``agents.rllib_modules.BotRLModule``).

League mix (:func:`league_module`): in each episode one seat, drawn at random, is the learner; every
other seat is the learner with probability ``mix_self``, a filled snapshot with ``mix_snapshots``, else
a bot (uniform over ``league_bots``). The draw is a function of the episode id, so all seats of an
episode agree. ``opponents.jsonl`` logs, per iteration, the filled snapshots and the env steps each
module played.

Per iteration ``metrics.jsonl`` (and TensorBoard under ``tb/``) logs the learner's episode return and
PPO's losses, entropy and KL. Before the first iteration (the untrained learner: where the curve
starts) and every ``eval_every`` iterations the learner is exported as a
weights-only policy (``policy_it<N>/``) and evaluated by the same duplicate mini-tournament as the
SB3 backend (``training.train_ppo.evaluate``) into ``eval.jsonl`` (with ``wall_s``, the run's wall
time so far, counted across resumes); the best becomes ``best/``;
``learning_curve.png`` is redrawn. RLlib's own checkpoint (``checkpoint/``, for ``resume: true``) is
written with it, together with the league's state (``checkpoint/league.json``), and swapped in by a
rename, so a run killed at any moment resumes from a complete checkpoint; on resume the logs lose the
rows of iterations after it (they run again), so no iteration is logged twice. Ctrl-C saves first.
An out folder that holds a checkpoint is only continued (``resume: true``), never started over. Ray:
a local instance, or the cluster named by ``address`` / ``RAY_ADDRESS``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import time
import zlib
from pathlib import Path
from typing import Any

from meld8_env.rules import RuleConfig
from training.train_ppo import check_rates, read_options


@dataclasses.dataclass
class RllibConfig:
    iterations: int = 50
    """PPO training iterations"""
    num_env_runners: int = 1
    """sampling workers (Ray actors); 0 samples in the driver"""
    num_cpus_per_env_runner: int = 1
    """CPUs reserved per sampling worker"""
    num_envs_per_env_runner: int = 1
    """games each sampling worker steps in turn (RLlib's multi-agent vector env: a Python loop over games)"""
    train_batch_size: int = 4000
    """env steps per training iteration (all seats together)"""
    minibatch_size: int = 512
    """SGD minibatch"""
    num_epochs: int = 4
    """SGD passes over each batch"""
    lr: float = 0.0003
    """learning rate"""
    gamma: float = 0.995
    """discount"""
    gae_lambda: float = 0.95
    """GAE lambda (RLlib's default is 1.0: whole-game returns, high variance over games of ~200 steps)"""
    entropy_coeff: float = 0.01
    """entropy bonus"""
    network: str = "card_heads"
    """the learner's network: card_heads (needs features) or mlp"""
    hidden: list[int] = dataclasses.field(default_factory=lambda: [256, 256])
    """hidden units of the learner's trunk MLP"""
    features: bool = True
    """append the look-ahead features (meld8_env.features) to the observation, as the SB3 baseline does"""
    shaping: float = 0.0
    """potential-based reward shaping: reward per step of distance to win gained (meld8_env.vector; 0 = off)"""
    snapshot_slots: int = 3
    """frozen copies of the learner kept in the league"""
    snapshot_every: int = 5
    """iterations between snapshots"""
    league_bots: list[str] = dataclasses.field(default_factory=lambda: ["greedy", "defensive"])
    """built-in bots in the league"""
    mix_self: float = 0.4
    """probability that a non-learner seat is the learner itself"""
    mix_snapshots: float = 0.3
    """probability that a non-learner seat is a snapshot (the rest: bots)"""
    eval_every: int = 5
    """iterations between evaluations"""
    eval_boards: int = 50
    """boards of each evaluation (every seating: 6 games a board)"""
    eval_opponents: list[str] = dataclasses.field(default_factory=lambda: ["greedy", "defensive"])
    """the two fixed agents of each evaluation"""
    seed: int = 0
    """seed of the games and the league draws"""
    out: str = "results/rllib"
    """output folder"""
    rules: str | None = None
    """rule config YAML or name (default rules when empty)"""
    address: str | None = None
    """Ray cluster address (default: RAY_ADDRESS, else a local instance)"""
    resume: bool = False
    """continue from out/checkpoint"""
    progress: bool = True
    """show a progress bar"""

    @classmethod
    def load(cls, path: str | None, overrides: list[str] | None = None) -> RllibConfig:
        cfg = cls(**read_options(cls, path, overrides))
        for name in ("iterations", "train_batch_size", "minibatch_size", "num_epochs", "snapshot_every",
                     "eval_every", "eval_boards", "num_cpus_per_env_runner", "num_envs_per_env_runner"):  # fmt: skip
            if getattr(cfg, name) < 1:
                raise ValueError(f"train option {name!r} must be >= 1, got {getattr(cfg, name)!r}")
        check_rates(cfg)
        if cfg.num_env_runners < 0 or cfg.snapshot_slots < 0:
            raise ValueError("train options num_env_runners and snapshot_slots must be >= 0")
        if not (0 <= cfg.mix_self and 0 <= cfg.mix_snapshots and cfg.mix_self + cfg.mix_snapshots <= 1):
            raise ValueError("mix_self and mix_snapshots must be probabilities adding up to at most 1")
        from agents.registry import BUILTIN
        from agents.rllib_modules import NETWORKS

        if cfg.network not in NETWORKS:
            raise ValueError(f"train option 'network' must be one of {', '.join(NETWORKS)}, got {cfg.network!r}")
        if cfg.network == "card_heads" and not cfg.features:
            raise ValueError("network card_heads reads the look-ahead features: set features: true (or network: mlp)")

        bad = [b for b in cfg.league_bots if b not in BUILTIN]
        if bad:
            raise ValueError(f"league_bots must be built-in bots ({', '.join(BUILTIN)}), got {bad[0]!r}")
        if cfg.mix_self + cfg.mix_snapshots < 1 and not cfg.league_bots:
            raise ValueError("league_bots is empty but the mix leaves seats to bots")
        return cfg


# -- the league ---------------------------------------------------------------------------------------
_LEAGUE: dict[str, Any] = {"filled": 0}  # set in every env runner process by _set_filled


def _set_filled(n: int) -> None:
    _LEAGUE["filled"] = n


def league_module(agent_id: str, episode_id: str, players: int, cfg: dict[str, Any], filled: int) -> str:
    """The module that plays ``agent_id`` in the episode ``episode_id`` (see the module docstring)."""
    seat = int(agent_id.rsplit("_", 1)[1])
    rng = random.Random(zlib.crc32(f"{cfg['seed']}/{episode_id}".encode()))
    learner_seat = rng.randrange(players)
    draws = [(rng.random(), rng.random()) for _ in range(players)]  # one pair per seat, drawn in seat order
    if seat == learner_seat:
        return "learner"
    u, v = draws[seat]
    if u < cfg["mix_self"]:
        return "learner"
    if u < cfg["mix_self"] + cfg["mix_snapshots"] and filled:
        return f"snap_{int(v * filled)}"
    bots = cfg["league_bots"]
    return bots[int(v * len(bots))] if bots else "learner"


class LeagueMapping:
    """RLlib's policy-mapping function. A module-level class, so that the copy shipped to each env
    runner reads that process's ``_LEAGUE`` (a closure would carry a frozen copy of it)."""

    def __init__(self, league_cfg: dict[str, Any], players: int) -> None:
        self.cfg, self.players = league_cfg, players

    def __call__(self, agent_id: str, episode: Any, **kwargs: Any) -> str:
        return league_module(agent_id, str(episode.id_), self.players, self.cfg, _LEAGUE["filled"])


# -- training -----------------------------------------------------------------------------------------
def env_config(cfg: RllibConfig, rules: RuleConfig) -> dict[str, Any]:
    """The ``env_config`` of ``meld8_env.rllib.Meld8MultiAgentEnv`` for this run."""
    return {"rules": rules.to_dict(), "seed": cfg.seed, "features": cfg.features, "shaping": cfg.shaping}


def build_config(cfg: RllibConfig, rules: RuleConfig):
    """The RLlib ``PPOConfig`` of this run (env checking on, action masking, the league)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from agents.rllib_modules import bot_module_spec, learner_module_spec
    from meld8_env.rllib import register

    env_name = register()
    learner = learner_module_spec(cfg.network, cfg.hidden, rules)
    modules = {"learner": learner}
    modules |= {f"snap_{k}": learner_module_spec(cfg.network, cfg.hidden, rules) for k in range(cfg.snapshot_slots)}
    modules |= {b: bot_module_spec(b, rules) for b in cfg.league_bots}
    league_cfg = {k: getattr(cfg, k) for k in ("seed", "mix_self", "mix_snapshots", "league_bots")}
    return (
        PPOConfig()
        .environment(
            env_name,
            env_config=env_config(cfg, rules),
        )  # fmt: skip
        .env_runners(
            num_env_runners=cfg.num_env_runners,
            num_cpus_per_env_runner=cfg.num_cpus_per_env_runner,
            num_envs_per_env_runner=cfg.num_envs_per_env_runner,
        )  # fmt: skip
        .multi_agent(
            policies=set(modules),
            policy_mapping_fn=LeagueMapping(league_cfg, rules.num_players),
            policies_to_train=["learner"],
        )  # fmt: skip
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(
            lr=cfg.lr,
            gamma=cfg.gamma,
            lambda_=cfg.gae_lambda,
            entropy_coeff=cfg.entropy_coeff,
            num_epochs=cfg.num_epochs,
            train_batch_size_per_learner=cfg.train_batch_size,
            minibatch_size=cfg.minibatch_size,
        )  # fmt: skip
        .debugging(seed=cfg.seed)
    )


def _init_ray(cfg: RllibConfig) -> bool:
    import ray

    if ray.is_initialized():
        return False
    address = cfg.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    else:
        ray.init(num_cpus=max(2, cfg.num_env_runners * cfg.num_cpus_per_env_runner + 1), include_dashboard=False,
                 log_to_driver=False, configure_logging=False)  # fmt: skip
    return True


def _broadcast_filled(algo, n: int) -> None:
    _set_filled(n)
    algo.env_runner_group.foreach_env_runner(lambda er: _set_filled(n))


def _copy_learner(algo, slot: int) -> None:
    weights = algo.learner_group.get_weights(module_ids=["learner"])["learner"]
    algo.learner_group.set_weights({f"snap_{slot}": weights})
    algo.env_runner_group.foreach_env_runner(lambda er: er.module[f"snap_{slot}"].set_state(weights))


def train(cfg: RllibConfig) -> Path:
    """Run (or resume) the league; returns the best policy's folder. The out folder is locked for the
    run (``OUT/.lock``, as tournaments do): a second run into it is refused with one line."""
    from training.tournament import OutputLock

    rules = RuleConfig.load(cfg.rules) if cfg.rules else RuleConfig()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    with OutputLock(out):
        return _train(cfg, rules, out)


def _train(cfg: RllibConfig, rules: RuleConfig, out: Path) -> Path:
    import yaml

    from agents.rllib_policy import RllibPolicyAgent, export_policy
    from training.train_ppo import evaluate, plot_learning_curve

    saved = _latest_checkpoint(out)
    if cfg.resume and saved is None:
        raise ValueError(f"resume: no checkpoint in {out} (a run writes one at each evaluation)")
    if saved is not None and not cfg.resume:
        raise ValueError(f"{out} already holds a run (checkpoint/): continue it with --set resume=true, or choose "
                         "another out")  # fmt: skip
    league = {"iteration": 0, "filled": 0, "next_slot": 0, "best": None, "timesteps": 0}
    if saved is not None:
        try:
            league = {**league, **json.loads((saved / LEAGUE_STATE).read_text())}
            int(league["iteration"]), int(league["filled"]), int(league["timesteps"])
        except (json.JSONDecodeError, TypeError, ValueError):
            raise ValueError(f"{saved / LEAGUE_STATE} is not a league state meld8 wrote; restore the folder or "
                             "train into another out") from None  # fmt: skip
    # rows past the checkpoint are from iterations that will run again (a fresh start: all of them)
    _trim_logs(out, league["iteration"] if saved is not None else -1)
    (out / "config.yaml").write_text(yaml.safe_dump(dataclasses.asdict(cfg), sort_keys=False))
    from meld8_env.rllib import Meld8MultiAgentEnv

    Meld8MultiAgentEnv(env_config(cfg, rules))  # a bad option fails here in one line, not inside a Ray worker
    started = _init_ray(cfg)
    algo = build_config(cfg, rules).build_algo()
    if saved is not None:
        algo.restore(str(saved.resolve()))  # our own checkpoint, written by this run
    _broadcast_filled(algo, league["filled"])
    bar = _progress(cfg.iterations, league["iteration"], cfg.progress)
    writer = _tensorboard(out / "tb", purge_after=league["timesteps"])
    saved_at = league["iteration"]
    clock = time.monotonic() - float(league.get("wall_s", 0.0))  # wall time counts on across resumes

    def evaluate_learner() -> None:
        """Export the learner as policy_it<N>/, evaluate it into eval.jsonl, keep the best, redraw the curve."""
        league["wall_s"] = round(time.monotonic() - clock, 1)
        meta = {"iteration": league["iteration"], "timesteps": league["timesteps"], "features": cfg.features}
        policy = export_policy(algo.get_module("learner"), out / f"policy_it{league['iteration']}", cfg.network,
                               cfg.hidden, rules, meta)  # fmt: skip
        res = evaluate(RllibPolicyAgent(policy, rules), cfg.eval_opponents, cfg.eval_boards, rules, cfg.seed)
        row = {"iteration": league["iteration"], "timesteps": league["timesteps"], "wall_s": league["wall_s"], **res}
        with open(out / "eval.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        if league["best"] is None or res["mean_placement"] < league["best"]:
            league["best"] = res["mean_placement"]
            shutil.rmtree(out / "best", ignore_errors=True)
            shutil.copytree(policy, out / "best")
        try:
            plot_learning_curve(out, "env steps (all seats)")
        except ImportError:
            pass
        bar.set_postfix(placement=f"{res['mean_placement']:.3f}")

    try:
        if league["iteration"] == 0:
            evaluate_learner()  # the untrained learner: where the curve starts
        for it in range(league["iteration"], cfg.iterations):
            result = algo.train()
            league["iteration"] = it + 1
            league["timesteps"] = int(result.get("num_env_steps_sampled_lifetime", 0) or 0)
            runners = result.get("env_runners", {})
            if cfg.snapshot_slots and (it + 1) % cfg.snapshot_every == 0:
                _copy_learner(algo, league["next_slot"])
                league["next_slot"] = (league["next_slot"] + 1) % cfg.snapshot_slots
                league["filled"] = min(cfg.snapshot_slots, league["filled"] + 1)
                _broadcast_filled(algo, league["filled"])
            _log_metrics(out, it + 1, league["timesteps"], result, writer)
            with open(out / "opponents.jsonl", "a") as f:
                steps = runners.get("num_module_steps_sampled", {})
                row = {
                    "iteration": it + 1,
                    "timesteps": league["timesteps"],
                    "snapshots": league["filled"],
                    "module_steps": {k: int(v) for k, v in steps.items() if v == v},
                }  # NaN: a module that did not play
                f.write(json.dumps(row) + "\n")
            if (it + 1) % cfg.eval_every == 0 or it + 1 == cfg.iterations:
                evaluate_learner()
                _save(algo, out, league)
                saved_at = league["iteration"]
            bar.update(1)
    except KeyboardInterrupt:
        bar.close()
        if league["iteration"] > saved_at:
            try:
                _save(algo, out, league)
                saved_at = league["iteration"]
            except Exception:  # Ray's workers may have taken the Ctrl-C too; the last checkpoint stands
                pass
        from training.train_ppo import TrainingInterrupted

        raise TrainingInterrupted(
            f"stopped after iteration {league['iteration']}; checkpoint of iteration {saved_at} in "
            f"{out / CHECKPOINT}; continue with --set resume=true"
        ) from None
    finally:
        bar.close()
        if writer is not None:
            writer.close()
        algo.stop()
        if started:
            import ray

            ray.shutdown()
    return out / "best"


METRICS = {  # metrics.jsonl / TensorBoard name -> where RLlib's result holds it
    "learner_return": ("env_runners", "module_episode_returns_mean", "learner"),
    "episode_len": ("env_runners", "episode_len_mean"),
    "policy_loss": ("learners", "learner", "policy_loss"),
    "vf_loss": ("learners", "learner", "vf_loss"),
    "entropy": ("learners", "learner", "entropy"),
    "kl": ("learners", "learner", "mean_kl_loss"),
    "vf_explained_var": ("learners", "learner", "vf_explained_var"),
}


def _log_metrics(out: Path, iteration: int, timesteps: int, result: dict, writer) -> None:
    """One line of ``metrics.jsonl`` per iteration (and TensorBoard scalars under ``tb/``)."""
    row: dict[str, Any] = {"iteration": iteration, "timesteps": timesteps}
    for name, path in METRICS.items():
        v: Any = result
        for key in path:
            v = v.get(key) if isinstance(v, dict) else None
        if isinstance(v, int | float) and v == v:
            row[name] = float(v)
            if writer is not None:
                writer.add_scalar(f"rllib/{name}", float(v), timesteps)
    with open(out / "metrics.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")


def _tensorboard(folder: Path, purge_after: int = 0):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is in the train extra; metrics.jsonl is written regardless
        return None
    # events logged after the checkpoint by a run that was killed are hidden (they will be logged again)
    return SummaryWriter(str(folder), purge_step=purge_after + 1)


# -- checkpoints and logs that survive a kill ---------------------------------------------------------
CHECKPOINT, LEAGUE_STATE = "checkpoint", "league.json"
LOGS = ("metrics.jsonl", "opponents.jsonl", "eval.jsonl")


def _save(algo, out: Path, league: dict[str, Any]) -> None:
    """RLlib's checkpoint and the league state (iteration, snapshots, best) as one folder, swapped in by
    renames: a kill at any moment leaves a complete pair, the old one or the new one."""
    tmp, old, final = out / f"{CHECKPOINT}.tmp", out / f"{CHECKPOINT}.old", out / CHECKPOINT
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save(str(tmp.resolve()))
    (tmp / LEAGUE_STATE).write_text(json.dumps(league))
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


def _latest_checkpoint(out: Path) -> Path | None:
    """The complete checkpoint of ``out`` (``checkpoint/``, or ``checkpoint.old/`` when a kill came
    between the two renames of :func:`_save`); None when there is none."""
    for name in (CHECKPOINT, f"{CHECKPOINT}.old"):
        if (out / name / LEAGUE_STATE).is_file():
            return out / name
    return None


def _trim_logs(out: Path, iteration: int) -> None:
    """Keep only the log rows of iterations up to ``iteration`` (and drop a line cut by a kill), so a
    resumed run logs every iteration exactly once."""
    for name in LOGS:
        path = out / name
        if not path.exists():
            continue
        keep = []
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and int(row.get("iteration", 0)) <= iteration:
                keep.append(line + "\n")
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(keep))
        os.replace(tmp, path)


def _progress(total: int, done: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="iter", disable=not enabled, dynamic_ncols=True)
