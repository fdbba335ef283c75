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
import math
import os
import random
import shutil
import signal
import time
import zlib
from pathlib import Path
from typing import Any

from meld8_env.config_io import is_int, short_repr
from meld8_env.protocol import ProtocolError, loads_bounded
from meld8_env.rules import RuleConfig
from training.evaluation import evaluate
from training.ray_setup import quiet_loggers, quiet_ray
from training.run_folder import (
    FILE,
    FOLDER,
    SCRATCH,
    OutputLock,
    RunFolder,
    RunFolderError,
    TrainingInterrupted,
    check_run_folder,
    plot_learning_curve,
    recover,
    say,
    swap_in,
)
from training.stop_request import Terminated, sigterm_as_interrupt
from training.train_options import (
    check_address,
    check_common,
    check_eval_opponents,
    read_options,
    train_rules,
)


@dataclasses.dataclass
class RllibConfig:
    total_timesteps: int = 200_000
    """env steps to train for (all seats together): ceil(total_timesteps / train_batch_size) iterations
    (the old option ``iterations`` N means N x train_batch_size)"""
    num_env_runners: int = 1
    """sampling workers (Ray actors); 0 samples in the driver"""
    num_cpus_per_env_runner: int = 1
    """CPUs reserved per sampling worker"""
    num_envs_per_env_runner: int = 1
    """games each sampling worker steps in turn (RLlib's multi-agent vector env: a Python loop over games)"""
    train_batch_size: int = 4000
    """env steps per training iteration (all seats together)"""
    batch_size: int = 512
    """SGD minibatch (old name: minibatch_size)"""
    n_epochs: int = 4
    """SGD passes over each batch (old name: num_epochs)"""
    learning_rate: float = 0.0003
    """learning rate (old name: lr)"""
    gamma: float = 0.995
    """discount"""
    gae_lambda: float = 0.95
    """GAE lambda (RLlib's default is 1.0: whole-game returns, high variance over games of ~100-200 steps between
    bots and thousands in random play)"""
    ent_coef: float = 0.01
    """entropy bonus (old name: entropy_coeff)"""
    network: str = "card_heads"
    """the learner's network: card_heads (needs features) or mlp"""
    net_arch: list[int] = dataclasses.field(default_factory=lambda: [256, 256])
    """hidden units of the learner's trunk MLP (old name: hidden)"""
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
    """rule config YAML or name (null: the default rules)"""
    address: str | None = None
    """Ray cluster address (default: RAY_ADDRESS, else a local instance)"""
    resume: bool = False
    """continue from out/checkpoint"""
    progress: bool = True
    """show a progress bar"""

    BACKEND = "rllib"

    @property
    def iterations(self) -> int:
        """Training iterations of the run: ``total_timesteps`` in batches of ``train_batch_size``."""
        return -(-self.total_timesteps // self.train_batch_size)

    @classmethod
    def load(cls, path: str | None, overrides: list[str] | None = None) -> RllibConfig:
        cfg = cls(**read_options(cls, path, overrides))
        for name in ("total_timesteps", "train_batch_size", "batch_size", "n_epochs", "snapshot_every",
                     "eval_every", "eval_boards", "num_cpus_per_env_runner", "num_envs_per_env_runner"):  # fmt: skip
            if getattr(cfg, name) < 1:
                raise ValueError(f"train option {name!r} must be >= 1, got {getattr(cfg, name)!r}")
        check_common(cfg)
        check_address(cfg.address)  # before check_resources, which allows a cluster more runners
        for name in ("mix_self", "mix_snapshots"):
            if not math.isfinite(getattr(cfg, name)):
                raise ValueError(f"train option {name!r} must be a probability, got {getattr(cfg, name)!r}")
        if cfg.num_env_runners < 0 or cfg.snapshot_slots < 0:
            raise ValueError("train options num_env_runners and snapshot_slots must be >= 0")
        check_resources(cfg)
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


#: resource options beyond these are typos (1,000 env runners would start 1,000 worker processes)
MAX_RUNNERS_PER_CORE, MAX_ENVS_PER_RUNNER, MAX_SNAPSHOTS, MAX_TRAIN_BATCH = 4, 1024, 64, 10_000_000


def check_resources(cfg: RllibConfig) -> None:
    """Resource options within reason for this machine (a cluster: ``address`` / ``RAY_ADDRESS``,
    which may hold more cores, is allowed 1,024 runners)."""
    cores = os.cpu_count() or 1
    cluster = (cfg.address or os.environ.get("RAY_ADDRESS") or "local") != "local"  # 'local': this machine
    limit = 1024 if cluster else MAX_RUNNERS_PER_CORE * cores
    where = "a cluster run" if cluster else f"{MAX_RUNNERS_PER_CORE} x the {cores} cores here"
    if cfg.num_env_runners > limit:
        raise ValueError(f"train option 'num_env_runners' must be at most {limit} ({where}), got {cfg.num_env_runners}")
    if not cluster and cfg.num_cpus_per_env_runner > cores:
        raise ValueError(f"train option 'num_cpus_per_env_runner' must be at most the {cores} cores here, got "
                         f"{cfg.num_cpus_per_env_runner}")  # fmt: skip
    for name, hi in (("num_envs_per_env_runner", MAX_ENVS_PER_RUNNER), ("snapshot_slots", MAX_SNAPSHOTS),
                     ("train_batch_size", MAX_TRAIN_BATCH)):  # fmt: skip
        if getattr(cfg, name) > hi:
            raise ValueError(f"train option {name!r} must be at most {hi:,}, got {getattr(cfg, name):,}")
    if cfg.batch_size > cfg.train_batch_size:
        raise ValueError(f"train option 'batch_size' (the SGD minibatch, {cfg.batch_size}) must be at most "
                         f"train_batch_size ({cfg.train_batch_size})")  # fmt: skip


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
    learner = learner_module_spec(cfg.network, cfg.net_arch, rules)
    modules = {"learner": learner}
    modules |= {f"snap_{k}": learner_module_spec(cfg.network, cfg.net_arch, rules) for k in range(cfg.snapshot_slots)}
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
            lr=cfg.learning_rate,
            gamma=cfg.gamma,
            lambda_=cfg.gae_lambda,
            entropy_coeff=cfg.ent_coef,
            num_epochs=cfg.n_epochs,
            train_batch_size_per_learner=cfg.train_batch_size,
            minibatch_size=cfg.batch_size,
        )  # fmt: skip
        .debugging(seed=cfg.seed, log_level="ERROR")  # RLlib's own notices (training.ray_setup)
    )


def _init_ray(cfg: RllibConfig) -> bool:
    import ray

    if ray.is_initialized():
        return False
    quiet_ray("the RLlib league")
    address = cfg.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    else:
        ray.init(num_cpus=max(2, cfg.num_env_runners * cfg.num_cpus_per_env_runner + 1), include_dashboard=False,
                 log_to_driver=False, configure_logging=False)  # fmt: skip
    quiet_loggers()
    return True


def _broadcast_filled(algo, n: int) -> None:
    _set_filled(n)
    algo.env_runner_group.foreach_env_runner(lambda er: _set_filled(n))


def _copy_learner(algo, slot: int) -> None:
    weights = algo.learner_group.get_weights(module_ids=["learner"])["learner"]
    algo.learner_group.set_weights({f"snap_{slot}": weights})
    algo.env_runner_group.foreach_env_runner(lambda er: er.module[f"snap_{slot}"].set_state(weights))


def train(cfg: RllibConfig) -> Path:
    """Run (or resume) the league; returns the best policy's folder. Every option, the league state and
    the checkpoint's network are checked before anything is written; the out folder is locked for the
    run (``training.run_folder``): a second run into it is refused with one line."""
    from agents.registry import load_agent
    from meld8_env.rllib import Meld8MultiAgentEnv

    rules = train_rules(cfg)
    check_address(cfg.address)  # again here: an RllibConfig built in code has not been through load()
    check_eval_opponents(cfg, rules, load_agent)
    Meld8MultiAgentEnv(env_config(cfg, rules))  # a bad option fails here in one line, not inside a Ray worker
    folder = RunFolder(cfg.out, "rllib")
    saved, league = _check_folder(cfg, rules, folder)  # before the folder exists: a refusal leaves nothing
    folder.path.mkdir(parents=True, exist_ok=True)
    with OutputLock(folder.path):
        if _check_folder(cfg, rules, folder, locked=True)[0] != saved:  # pragma: no cover - changed while we waited
            raise RunFolderError(f"{folder.path} changed while this run started; start it again")
        return _train(cfg, rules, folder, saved, league)


def league_shape(cfg: RllibConfig) -> dict[str, Any]:
    """What a checkpoint's modules are made of: a resume must ask for the same (RLlib restores by name)."""
    return {"network": cfg.network, "net_arch": list(cfg.net_arch), "features": cfg.features,
            "snapshot_slots": cfg.snapshot_slots, "league_bots": list(cfg.league_bots)}  # fmt: skip


def _check_folder(
    cfg: RllibConfig, rules: RuleConfig, folder: RunFolder, locked: bool = False
) -> tuple[Path | None, dict[str, Any]]:
    """(the checkpoint to resume from or None, the league state); one-line errors for a folder that
    holds another run, a league state meld8 did not write, or a checkpoint the options do not fit
    (``locked``: the caller holds the folder's lock)."""
    saved = _latest_checkpoint(folder.path)
    check_run_folder(folder, cfg.resume, saved is not None, f"{CHECKPOINT}/", locked, rllib_kinds(folder.path))
    league = {"iteration": 0, "filled": 0, "next_slot": 0, "best": None, "timesteps": 0, "evaluated": -1}
    if saved is None:
        return None, league
    where = saved / LEAGUE_STATE
    try:
        with where.open("rb") as f:
            # bounded: a 100,000-deep array made json.loads raise RecursionError, a traceback (red team, session 35)
            doc, err = loads_bounded(f.read(MAX_LEAGUE_STATE + 1), MAX_LEAGUE_STATE), None
    except OSError as exc:
        doc, err = None, f"unreadable: {exc}"
    except ProtocolError as exc:  # too long, too deep, too many digits, not UTF-8, not JSON
        doc, err = None, str(exc)
    err = err or league_error(doc, cfg, rules.num_players)
    if err:
        raise ValueError(f"{where} is not a league state meld8 wrote for these options ({err}); restore the folder "
                         "or train into another out")  # fmt: skip
    # every eval.jsonl row the run keeps holds the numbers its curve and readers take, as the SB3 trainer checks
    folder.check_eval_log(rules.num_players)
    league = {**league, "evaluated": doc["iteration"], **doc}  # older states: their last evaluation was done
    shape = league.pop("shape", None) or _old_shape(folder)
    want = league_shape(cfg)
    if shape is not None:
        diff = [k for k in want if k in shape and shape[k] != want[k]]
        if diff:
            k = diff[0]
            raise ValueError(f"resume: the checkpoint in {saved} was trained with {k}={short_repr(shape[k])}, the "
                             f"options ask for {want[k]!r}; resume with the run's own options (its "
                             "config.yaml)")  # fmt: skip
    return saved, league


def league_error(doc: object, cfg: RllibConfig, players: int) -> str | None:
    """Why ``doc`` is not a league state of a run with these options, or None."""

    def count(v: object, lo: int = 0) -> bool:
        return is_int(v) and v >= lo

    if not isinstance(doc, dict):
        return "not a JSON object"
    for key in ("iteration", "filled", "next_slot", "timesteps"):
        if not count(doc.get(key)):
            return f"{key} is not an integer >= 0"
    if doc["filled"] > cfg.snapshot_slots or doc["next_slot"] >= max(cfg.snapshot_slots, 1):
        slots = cfg.snapshot_slots
        return f"{doc['filled']} filled snapshot slots, next slot {doc['next_slot']}, with snapshot_slots={slots}"
    best = doc.get("best")
    if best is not None and not (isinstance(best, int | float) and not isinstance(best, bool) and 1 <= best <= players):
        return f"best placement {short_repr(best)} is not a placement 1..{players}"
    wall = doc.get("wall_s", 0.0)
    if not (isinstance(wall, int | float) and not isinstance(wall, bool) and math.isfinite(wall) and wall >= 0):
        return f"wall_s {short_repr(wall)} is not a duration"
    if "evaluated" in doc and not (count(doc["evaluated"], -1) and doc["evaluated"] <= doc["iteration"]):
        return f"evaluated {short_repr(doc['evaluated'])} is not an iteration -1..{doc['iteration']}"
    if "shape" in doc and (not isinstance(doc["shape"], dict) or set(doc["shape"]) != set(league_shape(cfg))):
        return "shape is not the description of a league"
    return None


def _old_shape(folder: RunFolder) -> dict[str, Any] | None:
    """The module shape of a checkpoint written before league states recorded it: its run's config.yaml."""
    from meld8_env.config_io import ConfigSyntaxError, load_yaml_text
    from training.train_options import RENAMED

    try:
        with (folder.path / "config.yaml").open("rb") as f:
            raw = f.read(MAX_LEAGUE_STATE + 1)
        # the strict reader: safe_load let nested aliases expand (and a repr of them hang), deep nesting raise
        # RecursionError and a 5,000-digit integer ValueError
        old = load_yaml_text(raw.decode()) if len(raw) <= MAX_LEAGUE_STATE else None
    except (OSError, UnicodeDecodeError, ConfigSyntaxError):
        return None
    if not isinstance(old, dict):
        return None
    old = {RENAMED.get(k, k): v for k, v in old.items()}
    return {k: old[k] for k in league_shape(RllibConfig()) if k in old}


def _eval_point(cfg: RllibConfig, iteration: int) -> bool:
    """Whether the learner is evaluated after ``iteration`` (0: the untrained learner, where the curve starts)."""
    return iteration == 0 or iteration % cfg.eval_every == 0 or iteration == cfg.iterations


def _train(cfg: RllibConfig, rules: RuleConfig, folder: RunFolder, saved: Path | None, league: dict) -> Path:
    from agents.rllib_policy import RllibPolicyAgent, export_policy

    out = folder.path
    recover(out / "best")
    if saved is not None:  # rows past the checkpoint are from iterations that will run again
        for name in LOGS:
            folder.keep_rows(name, lambda r: _row_iteration(r) <= league["iteration"])
    folder.start(dataclasses.asdict(cfg))
    league["shape"] = league_shape(cfg)
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
        """Export the learner as policy_it<N>/, evaluate it into eval.jsonl, keep the best, redraw the curve.
        A Ctrl-C in here leaves ``league["evaluated"]`` behind ``league["iteration"]``: resume evaluates again."""
        it = league["iteration"]
        bar.set_postfix_str("evaluating...", refresh=True)
        folder.keep_rows("eval.jsonl", lambda r: _row_iteration(r) < it)  # a row of a cut-short evaluation
        league["wall_s"] = round(time.monotonic() - clock, 1)
        meta = {"iteration": it, "timesteps": league["timesteps"]}
        policy = export_policy(algo.get_module("learner"), out / f"policy_it{it}", cfg.network, cfg.net_arch, rules,
                               cfg.features, meta)  # fmt: skip
        res = evaluate(RllibPolicyAgent(policy, rules), cfg.eval_opponents, cfg.eval_boards, rules, cfg.seed)
        if league["best"] is None or res["mean_placement"] < league["best"]:
            tmp = out / "best.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(policy, tmp)
            swap_in(tmp, out / "best")  # renames only: best/ (or best.old/) is complete at every moment
            league["best"] = res["mean_placement"]
        folder.append("eval.jsonl", {"iteration": it, "timesteps": league["timesteps"], "wall_s": league["wall_s"],
                                     **res})  # fmt: skip
        league["evaluated"] = it
        try:
            plot_learning_curve(out, "env steps (all seats)")
        except ImportError:
            pass
        bar.set_postfix_str(f"placement {res['mean_placement']:.3f} (best {league['best']:.3f})", refresh=True)

    with sigterm_as_interrupt() as sigterm:  # a SIGTERM (a scheduler ending the job) saves like Ctrl-C
        try:
            if _eval_point(cfg, league["iteration"]) and league["evaluated"] < league["iteration"]:
                evaluate_learner()  # the untrained learner, or an evaluation a Ctrl-C cut short
                if league["iteration"]:
                    _save(algo, out, league)
            say(f"meld8 train: RLlib league from iteration {league['iteration']} to {cfg.iterations} into {out}; "
                "Ctrl-C or SIGTERM saves a checkpoint")  # fmt: skip
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
                _log_metrics(folder, it + 1, league["timesteps"], result, writer)
                steps = runners.get("num_module_steps_sampled", {})
                folder.append("opponents.jsonl", {
                    "iteration": it + 1,
                    "timesteps": league["timesteps"],
                    "snapshots": league["filled"],
                    "module_steps": {k: int(v) for k, v in steps.items() if v == v},  # NaN: a module that did not play
                })  # fmt: skip
                if _eval_point(cfg, it + 1):
                    evaluate_learner()
                    _save(algo, out, league)
                    saved_at = league["iteration"]
                bar.update(1)
        except KeyboardInterrupt as exc:  # Ctrl-C, or a SIGTERM (sigterm_as_interrupt)
            bar.close()
            if league["iteration"] > saved_at or league["evaluated"] < league["iteration"]:
                try:
                    _save(algo, out, league)  # an evaluation cut short stays due (league["evaluated"])
                    saved_at = league["iteration"]
                except Exception:  # Ray's workers may have taken the Ctrl-C too; the last checkpoint stands
                    pass
            stopped = TrainingInterrupted(
                f"stopped after iteration {league['iteration']}; checkpoint of iteration {saved_at} in "
                f"{out / CHECKPOINT}; continue with --set resume=true"
            )
            stopped.signum = signal.SIGTERM if sigterm.seen or isinstance(exc, Terminated) else signal.SIGINT
            raise stopped from None
        finally:
            bar.close()
            if writer is not None:
                writer.close()
            algo.stop()
            if started:
                import ray

                ray.shutdown()
    return out / "best"


def _row_iteration(row: dict) -> int:
    v = row.get("iteration")
    return v if is_int(v) else 1 << 62  # a row without one is dropped


METRICS = {  # metrics.jsonl / TensorBoard name -> where RLlib's result holds it
    "learner_return": ("env_runners", "module_episode_returns_mean", "learner"),
    "episode_len": ("env_runners", "episode_len_mean"),
    "policy_loss": ("learners", "learner", "policy_loss"),
    "vf_loss": ("learners", "learner", "vf_loss"),
    "entropy": ("learners", "learner", "entropy"),
    "kl": ("learners", "learner", "mean_kl_loss"),
    "vf_explained_var": ("learners", "learner", "vf_explained_var"),
}


def _log_metrics(folder: RunFolder, iteration: int, timesteps: int, result: dict, writer) -> None:
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
    folder.append("metrics.jsonl", row)


def _tensorboard(folder: Path, purge_after: int = 0):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard is in the train extra; metrics.jsonl is written regardless
        return None
    # events logged after the checkpoint by a run that was killed are hidden (they will be logged again)
    return SummaryWriter(str(folder), purge_step=purge_after + 1)


# -- checkpoints and logs that survive a kill ---------------------------------------------------------
CHECKPOINT, LEAGUE_STATE = "checkpoint", "league.json"
MAX_LEAGUE_STATE = 1 << 20
"""The largest league state read (a run writes a few hundred bytes)."""
LOGS = ("metrics.jsonl", "opponents.jsonl", "eval.jsonl")


def _save(algo, out: Path, league: dict[str, Any]) -> None:
    """RLlib's checkpoint and the league state (iteration, snapshots, best) as one folder, swapped in by
    renames: a kill at any moment leaves a complete pair, the old one or the new one."""
    tmp = out / f"{CHECKPOINT}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save(str(tmp.resolve()))
    (tmp / LEAGUE_STATE).write_text(json.dumps(league))
    swap_in(tmp, out / CHECKPOINT)


def rllib_kinds(out: Path) -> dict[str, tuple[str, str]]:
    """The fixed names this trainer writes in run folder ``out`` besides ``training.run_folder.SHARED_KINDS``, each
    with its kind and role, checked before anything is written (as the SB3 trainer's ``SB3_KINDS``): a link named
    ``checkpoint.tmp`` or ``policy_it3`` took RLlib's files into the folder it pointed to, a file named ``best.tmp``
    failed after the iteration had trained (session 48). Every ``policy_it<N>`` already there is an exported policy
    (a later export of iteration N writes into it)."""
    kinds = {
        CHECKPOINT: (FOLDER, "the run's checkpoint"),
        f"{CHECKPOINT}.tmp": (SCRATCH, "the scratch folder of a checkpoint being written"),
        f"{CHECKPOINT}.old": (SCRATCH, "the checkpoint being replaced"),
        "best": (FOLDER, "the best evaluated policy"),
        "best.tmp": (SCRATCH, "the scratch copy of the best policy being written"),
        "best.old": (SCRATCH, "the best policy being replaced"),
        "metrics.jsonl": (FILE, "the learner's metrics log"),
        "metrics.jsonl.tmp": (FILE, "the scratch copy of metrics.jsonl being written"),
    }
    for p in sorted(Path(out).glob("policy_it*")) if Path(out).is_dir() else []:
        kinds[p.name] = (SCRATCH, f"the policy exported at iteration {p.name.removeprefix('policy_it')}")
    return kinds


def _latest_checkpoint(out: Path) -> Path | None:
    """The complete checkpoint of ``out`` (``checkpoint/``, or ``checkpoint.old/`` when a kill came
    between the two renames of :func:`_save`); None when there is none."""
    for name in (CHECKPOINT, f"{CHECKPOINT}.old"):
        if (out / name / LEAGUE_STATE).is_file():
            return out / name
    return None


def _progress(total: int, done: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="iter", desc="RLlib PPO", disable=not enabled, dynamic_ncols=True)
