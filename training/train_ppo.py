"""Train MaskablePPO in one seat of the batched engine (``meld8 train CONFIG [--set key=value]``).

Outputs in ``out``: TensorBoard logs (``tb/``), checkpoints (``ckpt_<steps>.zip``), ``best.zip`` (best
evaluation), ``final.zip``, ``eval.jsonl`` (one line per evaluation), ``config.yaml`` and, in self-play,
``opponents.jsonl`` (the opponents drawn at each redraw). With ``resume: true`` training continues
from the newest checkpoint in ``out`` (``ckpt_<steps>.zip``, or ``final.zip`` where it is further on). The
folder follows ``training.run_folder``: every option, the folder and (resume) the checkpoint's weights and
``eval.jsonl`` are checked before anything is written, and a folder holding a run is only continued
(``resume: true``), never started over; one whose run never saved a checkpoint is refused with the advice to
move it away, its files untouched (``training.run_folder.check_run_folder``). One line on stderr says when PPO
(or cloning) starts.

Ctrl-C (``training.stop_request``): the first SIGINT only asks the run to stop; it stops at the next safe
point (a step of the demonstration or evaluation games, a minibatch of cloning, a PPO step), writes
``ckpt_<steps>.zip`` and raises :class:`TrainingInterrupted` (``meld8 train`` exits 130 with one line), so
the checkpoint is whole and no scratch file stays behind, wherever the signal came. A second Ctrl-C
stops at once without a new checkpoint. Every checkpoint, ``best.zip`` and ``final.zip`` is written into
``_saving/`` and renamed into place, so a kill never leaves half of one.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from meld8_env.config_io import is_int, short_repr
from meld8_env.rules import RuleConfig
from meld8_env.safe_text import one_line
from training.evaluation import evaluate
from training.run_folder import (
    FILE,
    SCRATCH,
    OutputLock,
    RunFolder,
    RunFolderError,
    TrainingInterrupted,
    check_run_folder,
    plot_learning_curve,
    recover,
    say,
)
from training.stop_request import StopRequest, StopRequested
from training.train_options import (
    MAX_HIDDEN,
    check_common,
    check_eval_opponents,
    check_rates,
    check_seats,
    load_checked_agent,
    read_options,
    train_rules,
)

__all__ = ["TrainConfig", "TrainingInterrupted", "check_rates", "evaluate", "plot_learning_curve", "read_options",
           "train"]  # fmt: skip


MAX_ENVS = 65_536  # games in one engine batch, as `meld8 simulate --batch`
MAX_BC_DECISIONS = 2_000_000  # about 2.2 GB of observations, masks and actions; ppo_vs_bots.yaml uses 1,000,000
MAX_ROLLOUT = 2**20  # 64x the default rollout: a float32 observation per step is ~4 GiB at this size


@dataclasses.dataclass
class TrainConfig:
    total_timesteps: int = 200_000
    """learner steps (one action of the learning seat) to train for"""
    n_envs: int = 256
    """games played at once"""
    n_steps: int = 64
    """steps per game per PPO update (rollout = n_envs * n_steps)"""
    batch_size: int = 4096
    """minibatch size of each PPO gradient step (at most the rollout, n_envs * n_steps)"""
    n_epochs: int = 4
    """passes over each rollout per PPO update"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.995
    """discount factor per learner step"""
    gae_lambda: float = 0.95
    """GAE lambda of the advantage estimate"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    clip_range: float = 0.2
    """PPO clipping range of the probability ratio"""
    net_arch: list[int] = dataclasses.field(default_factory=lambda: [256, 256])
    """hidden layers of the policy and value networks"""
    network: str = "card_heads"
    """``separate`` (SB3's MLPs), ``shared`` (one trunk) or ``card_heads`` (trunk + per-card action
    heads over the look-ahead features); see ``agents.networks``"""
    features: bool = True
    """append the look-ahead features of ``meld8_env.features`` to the observation"""
    shaping: float = 0.0
    """potential-based reward shaping: reward per step of distance to win gained (``meld8_env.vector``;
    0 = off); it sums to a constant over a game, so the best policy is unchanged"""
    opponents: list[str] = dataclasses.field(default_factory=lambda: ["greedy", "random"])
    """agents in the learner's relative seats 1 and 2 (3 players)"""
    bc_teacher: str = "defensive"
    """bot whose decisions warm-start the policy by behaviour cloning (``training.imitation``)"""
    bc_decisions: int = 0
    """teacher decisions to clone before PPO (0 = start PPO from a random policy)"""
    bc_epochs: int = 3
    """passes over the cloned decisions"""
    bc_batch_size: int = 1024
    """minibatch size of behaviour cloning"""
    vf_warmup: int = 0
    """learner steps at the start of PPO during which only the value network learns (the policy
    stays frozen), so a cloned policy meets sensible advantages"""
    critic: str = "plain"
    """what the value network reads: ``plain`` (the policy's input; the network's own value head) or
    ``oracle`` (also the learner seat's full-information observation: other hands, the wall; its own MLP
    ``critic_arch``, ``agents.networks.OracleCriticPolicy``). The policy never reads the oracle part: the
    checkpoint plays as an ordinary ``ppo:PATH`` agent. Needs ``network: card_heads``"""
    critic_arch: list[int] = dataclasses.field(default_factory=lambda: [256, 256])
    """hidden layers of the oracle critic (``critic: oracle`` only)"""
    init_from: str | None = None
    """start from this checkpoint (a path, or a shipped name: ``ppo``, ``distilled``) instead of a fresh or
    cloned network: its policy weights (and, with ``critic: plain``, its value head); an oracle critic
    starts fresh, so pair it with ``vf_warmup``. Only for a fresh run (``resume`` continues a run)"""
    target_kl: float | None = None
    """stop an update's epochs early past this KL divergence (None: no limit)"""
    selfplay: bool = False
    """draw opponents from a pool of the learner's own checkpoints plus ``pool_bots``"""
    pool_bots: list[str] = dataclasses.field(default_factory=lambda: ["greedy", "defensive"])
    """bots that join the self-play opponent pool"""
    pool_every: int = 50_000
    """learner steps between redraws of self-play opponents"""
    eval_every: int = 50_000
    """learner steps between evaluations (a duplicate mini-tournament vs ``eval_opponents``)"""
    eval_boards: int = 20
    """board seeds per evaluation, each played under every seating"""
    eval_opponents: list[str] = dataclasses.field(default_factory=lambda: ["greedy", "random"])
    """the two fixed agents the evaluations play against"""
    checkpoint_every: int = 50_000
    """learner steps between checkpoints (ckpt_<steps>.zip)"""
    seed: int = 0
    """seed of the games, the network initialisation and the opponents"""
    out: str = "runs/ppo"
    """output folder (checkpoints, logs, curves)"""
    rules: str | None = None
    """rule config YAML or built-in name (null: the default rules)"""
    resume: bool = False
    """continue from the newest checkpoint in ``out`` (ckpt_<steps>.zip, or final.zip where further on;
    weights-only)"""
    progress: bool = True
    """show progress bars"""

    BACKEND = "sb3"

    @classmethod
    def load(cls, path: str | None, overrides: list[str] | None = None) -> TrainConfig:
        cfg = cls(**read_options(cls, path, overrides))
        from agents.checkpoint import NETWORKS

        if cfg.network not in NETWORKS:
            raise ValueError(f"train option 'network' must be one of {', '.join(NETWORKS)}, got {cfg.network!r}")
        if cfg.network == "card_heads" and not cfg.features:
            raise ValueError("train option network=card_heads needs features=true (its heads read the features)")
        for name in (
            "total_timesteps",
            "n_envs",
            "n_steps",
            "batch_size",
            "n_epochs",
            "eval_boards",
            "bc_epochs",
            "bc_batch_size",
            "eval_every",
            "checkpoint_every",
            "pool_every",
        ):
            if not isinstance(getattr(cfg, name), int) or getattr(cfg, name) < 1:
                raise ValueError(f"train option {name!r} must be an integer >= 1, got {getattr(cfg, name)!r}")
        # games and buffers are allocated up front: a typo of a few zeros asked for hundreds of GiB after the run
        # folder was made (red team, session 33)
        if cfg.n_envs > MAX_ENVS:
            raise ValueError(f"train option 'n_envs' must be at most {MAX_ENVS:,} games, got {cfg.n_envs:,}")
        if cfg.n_envs * cfg.n_steps > MAX_ROLLOUT:
            raise ValueError(f"train options n_envs * n_steps (the rollout buffer's steps) must be at most "
                             f"{MAX_ROLLOUT:,}, got {cfg.n_envs:,} * {cfg.n_steps:,}")  # fmt: skip
        check_common(cfg)
        from agents.checkpoint import CRITICS

        if cfg.critic not in CRITICS:
            raise ValueError(f"train option 'critic' must be one of {', '.join(CRITICS)}, got {cfg.critic!r}")
        if cfg.critic == "oracle" and cfg.network != "card_heads":
            raise ValueError(f"train option critic=oracle needs network=card_heads, got network={cfg.network!r}")
        if cfg.critic == "oracle" and cfg.bc_decisions > 0:
            raise ValueError("train option critic=oracle starts from a checkpoint (init_from) or from scratch, not "
                             "from behaviour cloning: set bc_decisions=0")  # fmt: skip
        if not cfg.critic_arch or not all(1 <= h <= MAX_HIDDEN for h in cfg.critic_arch):
            raise ValueError(f"train option 'critic_arch' must be a non-empty list of layer sizes 1..{MAX_HIDDEN:,}, "
                             f"got {cfg.critic_arch!r}")  # fmt: skip
        if cfg.init_from is not None and cfg.bc_decisions > 0:
            raise ValueError("train options init_from and bc_decisions > 0 are two starts: give one of them")
        if cfg.init_from == "":
            raise ValueError("train option 'init_from' must name a checkpoint (a path, or ppo / distilled), got ''")
        check_ppo_options(cfg)
        check_seats(cfg, train_rules(cfg))  # the rules seat the players: a wrong count fails here, not in the env
        return cfg


def check_ppo_options(cfg: TrainConfig) -> None:
    """The options only this backend has, in range (red team, session 35: clip_range=-1 or .nan, target_kl=-1,
    vf_warmup=-5 and bc_decisions=-5 were taken, and trained nothing meaningful or were silently ignored)."""
    # above 1 the lower clip 1 - clip_range is negative: a ratio can never reach it, and the clip is one-sided
    if not math.isfinite(cfg.clip_range) or not 0 < cfg.clip_range <= 1:
        raise ValueError(f"train option 'clip_range' must be a number in (0, 1], got {cfg.clip_range!r}")
    # None means no limit; 0 or less would stop every update before its first minibatch
    if cfg.target_kl is not None and (not math.isfinite(cfg.target_kl) or cfg.target_kl <= 0):
        raise ValueError(f"train option 'target_kl' must be a finite number > 0, or null for no limit, got "
                         f"{cfg.target_kl!r}")  # fmt: skip
    rollout = cfg.n_envs * cfg.n_steps if is_int(cfg.n_envs) and is_int(cfg.n_steps) else None
    if rollout is not None and is_int(cfg.batch_size) and cfg.batch_size > rollout:
        # MaskablePPO slices minibatches from the rollout and silently takes all of it as one (red team, session 47:
        # batch_size 100000 with a rollout of 512, and the default 4096 with any smaller rollout)
        raise ValueError(f"train option 'batch_size' is {cfg.batch_size:,}, more than a rollout (n_envs * n_steps = "
                         f"{cfg.n_envs:,} * {cfg.n_steps:,} = {rollout:,}): give batch_size at most {rollout:,}, or "
                         "a larger n_envs or n_steps")  # fmt: skip
    for name in ("vf_warmup", "bc_decisions"):
        v = getattr(cfg, name)
        if not is_int(v) or v < 0:
            raise ValueError(f"train option {name!r} must be an integer >= 0, got {v!r}")
    if cfg.bc_decisions > MAX_BC_DECISIONS:  # red team, session 43: held in memory, a typo ran out of it hours in
        raise ValueError(f"train option 'bc_decisions' must be at most {MAX_BC_DECISIONS:,} (each is held in memory, "
                         f"about 1.1 KB), got {cfg.bc_decisions:,}")  # fmt: skip


def train(cfg: TrainConfig) -> Path:
    """Train (or, with ``resume``, continue) into ``cfg.out``; returns ``final.zip``. Every option, the
    agents it names and the folder (``training.run_folder``) are checked before anything is written."""
    from agents.registry import load_agent

    rules = train_rules(cfg)
    # again here: a TrainConfig built in code has not been through load()
    check_common(cfg)  # the out folder's checks too
    check_ppo_options(cfg)
    check_seats(cfg, rules)
    opponents = [load_checked_agent("opponents", n, rules, load_agent, i + 1, keep=True)
                 for i, n in enumerate(cfg.opponents)]  # fmt: skip
    # every agent the options name, so a misspelt or cheating one fails now, not an hour in; the ones this run leaves
    # unused too (selfplay off, bc_decisions=0): a typo in them was taken silently (red team, session 37)
    for name in cfg.pool_bots:
        load_checked_agent("pool_bots", name, rules, load_agent)
    load_checked_agent("bc_teacher", cfg.bc_teacher, rules, load_agent)
    check_eval_opponents(cfg, rules, load_agent)
    init = init_checkpoint(cfg, rules) if cfg.init_from is not None else None
    folder = RunFolder(cfg.out, "sb3")
    resume_from = _check_folder(cfg, rules, folder)  # before the folder exists: a refusal leaves nothing
    folder.path.mkdir(parents=True, exist_ok=True)
    with OutputLock(folder.path):
        if _check_folder(cfg, rules, folder, locked=True) != resume_from:  # pragma: no cover - changed while we waited
            raise RunFolderError(f"{folder.path} changed while this run started; start it again")
        _note_frozen_policy(cfg)  # after every check: a refused start says its one line alone
        with StopRequest() as stop:  # from here on Ctrl-C stops the run at its next safe point
            try:
                return _train(cfg, rules, folder, opponents, resume_from, stop, init)
            except KeyboardInterrupt as exc:
                if not stop.requested:
                    raise
                stopped = exc if isinstance(exc, TrainingInterrupted) else _stopped_at_once(folder.path)
                stopped.signum = stop.signum
                raise stopped from None


#: scratch names in a run folder (a killed run may leave them; the next run of the folder removes them)
SAVING, EVAL_COPY = "_saving", "_eval.zip"
#: the fixed names this trainer writes in a run folder besides ``training.run_folder.SHARED_KINDS``, each with its
#: kind and role, checked before anything is written (red team, session 47); every ``ckpt_N.zip`` is a checkpoint too
SB3_KINDS: dict[str, tuple[str, str]] = {
    SAVING: (SCRATCH, "the scratch folder of a checkpoint being written"),
    EVAL_COPY: (FILE, "the scratch copy of a policy being evaluated"),
    "_best.tmp.zip": (FILE, "earlier versions' scratch copy of best.zip"),
    "best.zip": (FILE, "the best evaluated checkpoint"),
    "best.zip.old": (FILE, "the best checkpoint being replaced"),
    "final.zip": (FILE, "the last checkpoint"),
    "pretrain.json": (FILE, "the behaviour cloning's summary"),
}
MAX_STEPS = 2**62
"""The most learner steps a checkpoint may count (SB3 keeps them in an int64, and adds a rollout to them)."""


def _ckpt_step(path: Path) -> int | None:
    """N of a checkpoint ``ckpt_N.zip``; None for any other name (a stray copy such as ``ckpt_16 (copy).zip`` is no
    checkpoint of the run: its name failed in int(), review of session 37)."""
    m = re.fullmatch(r"ckpt_(\d+)\.zip", path.name)
    return int(m.group(1)) if m else None


def _checkpoints(out: Path) -> list[Path]:
    """The run's checkpoints, oldest first."""
    if not out.is_dir():
        return []
    return sorted((p for p in out.glob("ckpt_*.zip") if _ckpt_step(p) is not None), key=_ckpt_step)


def _has_saved(out: Path) -> bool:
    """Whether the run in ``out`` saved anything a resume continues from (a checkpoint or final.zip)."""
    return bool(_checkpoints(out)) or (out / "final.zip").is_file()


def _note_frozen_policy(cfg: TrainConfig) -> None:
    """Say so where ``vf_warmup`` outlasts the run: the policy is unfrozen at the first step at or past it, so it
    learns in the run's last update unless the warmup goes beyond the last rollout's end (SB3 collects whole rollouts
    of ``n_envs * n_steps`` steps, past ``total_timesteps`` when that is no multiple of them). Allowed (a critic fitted
    alone), but a short run of the shipped config trained no policy unannounced (a user, session 45)."""
    rollout = cfg.n_envs * cfg.n_steps
    end = -(-cfg.total_timesteps // rollout) * rollout
    if cfg.vf_warmup > end > 0:
        say(f"note: vf_warmup ({cfg.vf_warmup:,}) is past the run's last step ({end:,}: total_timesteps "
            f"{cfg.total_timesteps:,} in rollouts of {rollout:,}): the policy stays frozen for the whole run and only "
            "the value network learns")  # fmt: skip


def _check_folder(cfg: TrainConfig, rules: RuleConfig, folder: RunFolder, locked: bool = False) -> Path | None:
    """The checkpoint a resume continues from (None: a fresh start); RunFolderError / ValueError when
    the folder holds a run this config must not touch, or a checkpoint its network does not fit."""
    from agents.checkpoint import check_compatible, read_metadata

    out = folder.path
    names = {p.name: (FILE, "a checkpoint") for p in out.glob("ckpt_*.zip") if _ckpt_step(p) is not None}
    check_run_folder(folder, cfg.resume, _has_saved(out), "ckpt_*.zip or final.zip", locked, {**SB3_KINDS, **names})
    if not cfg.resume:
        return None
    last = _resume_point(out)
    saved = read_metadata(last)
    check_compatible(saved, rules, str(last))
    try:
        steps = _saved_steps(last, saved)
    except ValueError as exc:
        raise ValueError(f"{exc}; restore it, or move it out of {out}") from None
    # a session stops within one rollout (at most MAX_ROLLOUT steps, whatever its n_envs and n_steps) past its total;
    # a count far beyond this one's trained nothing, said "trained" and was written back (red team, session 47: 2**61)
    if steps > cfg.total_timesteps + MAX_ROLLOUT:
        raise ValueError(f"resume: {last} counts {steps:,} learner steps, far beyond total_timesteps "
                         f"{cfg.total_timesteps:,} (a run stops within a rollout, at most {MAX_ROLLOUT:,} steps, past "
                         f"it): restore the file or move it out of {out}, or give total_timesteps above {steps:,} if "
                         "the run did train that far")  # fmt: skip
    if (saved["network"], list(saved["net_arch"]), saved["features"]) != (cfg.network, cfg.net_arch, cfg.features):
        raise ValueError(f"resume: {last} holds a {saved['network']} {saved['net_arch']} network; the config asks "
                         f"for {cfg.network} {cfg.net_arch} (features={cfg.features})")  # fmt: skip
    if saved.get("critic", "plain") != cfg.critic:
        raise ValueError(f"resume: {last} was trained with critic={saved.get('critic', 'plain')}; the config asks "
                         f"for critic={cfg.critic}")  # fmt: skip
    return last


def _resume_point(out: Path) -> Path:
    """What a resume continues from: the newest ``ckpt_*.zip``, or ``final.zip`` where it is further on. A finished
    run whose ``checkpoint_every`` exceeds its steps holds only final.zip, and one whose total is no multiple of
    it went on past its last ckpt: resuming from that dropped the steps (and evaluations) after it. final.zip is
    written by the same save as a checkpoint: the weights, Adam's state and the step count a resume restores.
    A final.zip behind the newest ckpt (a later session stopped by Ctrl-C) is passed over (:func:`_note_passed_over`
    says so); a step count that is none is refused."""
    from agents.checkpoint import CheckpointError, read_metadata

    ckpts = _checkpoints(out)
    final = out / "final.zip"
    if not final.is_file():  # (a FIFO is no checkpoint; reading it would hang)
        return ckpts[-1]
    if not ckpts:
        return final
    newest = ckpts[-1]
    try:
        # a count that is no step count was taken for "behind", and final.zip was overwritten unannounced (red team,
        # session 47: "abc", -5)
        steps = _saved_steps(final, read_metadata(final))
    except (CheckpointError, ValueError) as exc:
        why = one_line(str(exc), 240).removeprefix("resume: ")
        raise ValueError(f"resume: {why}; restore it, or move {final.name} out of {out} to continue from "
                         f"{newest.name}") from None  # fmt: skip
    # >=: ckpt_N is saved before the last update of N steps, final.zip after it (review, session 37)
    return final if steps >= _ckpt_step(newest) else newest


def _note_passed_over(out: Path, resume_from: Path) -> None:
    """Say so where a resume goes on from a ckpt past final.zip, which the run then overwrites: it was silent, and
    a tampered count looked the same (red team, session 47). Called after every check (a refusal stays one line)."""
    from agents.checkpoint import read_metadata

    final = out / "final.zip"
    if resume_from != final and final.is_file():  # its count was checked by _resume_point
        steps = read_metadata(final)["num_timesteps"]
        say(f"resume: {final} ({steps:,} learner steps) is behind {resume_from.name}: going on from "
            f"{resume_from.name}; {final.name} is replaced when the run ends")  # fmt: skip


def _saved_steps(path: Path, meta: dict[str, Any]) -> int:
    """The ``num_timesteps`` of checkpoint ``path`` (metadata ``meta``): an integer 0..MAX_STEPS - 1, and N for a
    ``ckpt_N.zip`` (its name is the count it was saved at); ValueError naming the file otherwise."""
    steps = meta.get("num_timesteps")
    if not is_int(steps) or not 0 <= steps < MAX_STEPS:
        raise ValueError(f"resume: {path}: 'num_timesteps' must be an integer 0..2**62 - 1 (the learner steps it "
                         f"was saved at), got {short_repr(steps, 40)}; not a checkpoint meld8 wrote")  # fmt: skip
    named = _ckpt_step(path)
    if named is not None and steps != named:
        raise ValueError(f"resume: {path}: 'num_timesteps' is {steps:,}, but meld8 names a checkpoint by the steps it "
                         f"was saved at ({named:,}): not a checkpoint meld8 wrote")  # fmt: skip
    return steps


def init_checkpoint(cfg: TrainConfig, rules: RuleConfig) -> Path:
    """The checkpoint ``init_from`` names, checked to fit this config's network (ValueError, one line)."""
    from agents.checkpoint import CheckpointError, check_compatible, read_metadata
    from meld8_env.agent_spec import SHIPPED_MODELS, shipped_model

    name = str(cfg.init_from)
    path = shipped_model(name) if name in SHIPPED_MODELS else Path(name)
    if not path.is_file():
        raise ValueError(f"train option 'init_from': no checkpoint {name!r} (give a .zip path, or one of "
                         f"{', '.join(SHIPPED_MODELS)})")  # fmt: skip
    try:
        saved = read_metadata(path)
        check_compatible(saved, rules, str(path))
    except CheckpointError as exc:
        raise ValueError(f"train option 'init_from': {exc}") from None
    if saved.get("context"):  # only distillation builds one (training.distill train --context); PPO would drop it
        raise ValueError(f"train option 'init_from': {path} reads the input context {saved['context']!r}, which PPO "
                         "training does not build; start from a network without one")  # fmt: skip
    if (saved["network"], list(saved["net_arch"]), saved["features"]) != (cfg.network, cfg.net_arch, cfg.features):
        raise ValueError(f"train option 'init_from': {path} holds a {saved['network']} {saved['net_arch']} network "
                         f"(features={saved['features']}); the config asks for {cfg.network} {cfg.net_arch} "
                         f"(features={cfg.features})")  # fmt: skip
    from agents.networks import load_policy

    try:  # its weights must load into the network its metadata describes: checked before any folder exists
        load_policy(path, rules)
    except (CheckpointError, ValueError, RuntimeError, KeyError) as exc:
        raise ValueError(f"train option 'init_from': {str(exc).splitlines()[0]}") from None
    return path


def _load_init(model, path: Path) -> None:
    """The init checkpoint's weights into a fresh model: everything but an oracle critic (which stays as
    initialised). The policy side must match name for name and shape for shape."""
    from agents.checkpoint import load_tensors
    from agents.networks import actor_state

    state = actor_state(load_tensors(path, "policy.pth"))
    own = model.policy.state_dict()
    want = actor_state(own)
    if set(state) != set(want) or any(tuple(state[k].shape) != tuple(want[k].shape) for k in want):
        raise ValueError(f"train option 'init_from': {path}'s weights do not fit the network this config builds")
    model.policy.load_state_dict({**own, **state})


def _check_policy_weights(path: Path, rules: RuleConfig) -> None:
    """The resume checkpoint's policy weights load as a player would load them (``agents.networks.load_policy``:
    named dense finite float tensors that fit the network its metadata names); ValueError in one line otherwise."""
    from agents.checkpoint import CheckpointError
    from agents.networks import load_policy

    try:
        load_policy(path, rules)
    except (CheckpointError, ValueError, RuntimeError, KeyError, TypeError) as exc:
        raise ValueError(f"resume: {str(exc).splitlines()[0]}") from None


def _load_resumed(model, state: Any, optimizer: Any, path: Path) -> None:
    """The resume checkpoint's policy and optimizer state into ``model``, each checked first against what the
    model holds: the same tensor names and shapes, finite floats (an oracle critic too, which a player never
    loads), and Adam's settings as this trainer makes them. ValueError in one line naming ``path`` otherwise:
    torch's own errors are tracebacks of many lines, and a bad moment estimate failed only in the first update."""
    why = _misfit(state, model.policy.state_dict())
    if why is None:
        why = _optimizer_misfit(optimizer, model.policy.optimizer)
    if why is None:
        try:
            model.policy.load_state_dict(state)
            model.policy.optimizer.load_state_dict(optimizer)
        except (RuntimeError, ValueError, KeyError, TypeError, IndexError) as exc:  # what the checks above missed
            why = one_line(str(exc), 200)
    if why is not None:
        raise ValueError(f"resume: {path} does not fit the network this config builds ({why}); resume from another "
                         "checkpoint or choose another out")  # fmt: skip


def _tensor_misfit(name: str, value: Any, shape: tuple[int, ...]) -> str | None:
    """Why ``value`` is not a dense finite float tensor of ``shape`` (None: it is)."""
    import torch

    if not torch.is_tensor(value) or value.layout != torch.strided or not value.is_floating_point():
        return f"{name} is not a dense float tensor"
    if tuple(value.shape) != tuple(shape):
        return f"{name} has shape {tuple(value.shape)[:8]}, the network's is {tuple(shape)}"
    if not bool(torch.isfinite(value).all()):
        return f"{name} holds NaN or infinite values"
    return None


def _misfit(state: Any, own: dict[str, Any]) -> str | None:
    """Why the saved ``state`` does not load into a network whose state is ``own`` (None: it does)."""
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        return "policy.pth is not a table of named tensors"
    extra, missing = sorted(set(state) - set(own)), sorted(set(own) - set(state))
    if extra or missing:
        return f"policy.pth {'has no tensor ' + repr(missing[0][:80]) if missing else 'has ' + repr(extra[0][:80])}"
    for k, v in own.items():
        why = _tensor_misfit(f"policy.pth tensor {k!r}", state[k], tuple(v.shape))
        if why is not None:
            return why
    return None


def _optimizer_misfit(saved: Any, optimizer: Any) -> str | None:
    """Why the saved Adam state does not fit ``optimizer`` (None: it fits): its groups name the same parameters
    with the settings this trainer gives (the learning rate is set again at every update), and each parameter's
    moments are finite tensors of that parameter's shape (a second moment below 0 is the square root of one)."""
    import torch

    own = optimizer.state_dict()
    if not isinstance(saved, dict) or not isinstance(saved.get("state"), dict):
        return "policy.optimizer.pth is not an optimizer state"
    groups = saved.get("param_groups")
    if not isinstance(groups, list) or len(groups) != len(own["param_groups"]):
        return "policy.optimizer.pth holds other parameter groups"
    for group, mine in zip(groups, own["param_groups"], strict=True):
        if not isinstance(group, dict) or group.get("params") != mine["params"]:
            return "policy.optimizer.pth names other parameters"
        for key in set(group) & set(mine) - {"params", "lr"}:
            a, b = group[key], mine[key]
            if (list(a) if isinstance(a, tuple | list) else a) != (list(b) if isinstance(b, tuple | list) else b):
                return f"policy.optimizer.pth sets {key}={short_repr(a, 40)}, this trainer {short_repr(b, 40)}"
    shapes = {i: tuple(p.shape) for g, mine in zip(optimizer.param_groups, own["param_groups"], strict=True)
              for i, p in zip(mine["params"], g["params"], strict=True)}  # fmt: skip
    for i, moments in saved["state"].items():
        if i not in shapes or not isinstance(moments, dict) or set(moments) != {"step", "exp_avg", "exp_avg_sq"}:
            return f"policy.optimizer.pth holds a state {short_repr(i, 40)} that is not Adam's for a parameter"
        step = moments["step"]  # a float tensor, as torch's Adam keeps it
        if not torch.is_tensor(step) or step.numel() != 1 or not step.is_floating_point() or not step.item() >= 0:
            return f"policy.optimizer.pth: the step count of parameter {i} is not a finite number >= 0"
        for key in ("exp_avg", "exp_avg_sq"):
            why = _tensor_misfit(f"policy.optimizer.pth {key} of parameter {i}", moments[key], shapes[i])
            if why is not None:
                return why
        if bool((moments["exp_avg_sq"] < 0).any()):
            return f"policy.optimizer.pth: exp_avg_sq of parameter {i} is negative"
    return None


def _logged_by(row: dict[str, Any], path: Path) -> int:
    """The ``timesteps`` of a row of ``eval.jsonl`` / ``opponents.jsonl`` (a row without an integer count is refused:
    dropping it would lose it)."""
    t = row.get("timesteps")
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise ValueError(f"{path}: a row's 'timesteps' is {str(t)[:40]}, not an integer >= 0; fix or move the file")
    return t


def _train(
    cfg: TrainConfig,
    rules: RuleConfig,
    folder: RunFolder,
    opponents: list,
    resume_from: Path | None,
    stop: StopRequest,
    init: Path | None = None,
) -> Path:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.checkpoint import load_tensors, make_metadata, read_metadata, write_metadata
    from agents.networks import oracle_critic_policy_for, policy_for
    from agents.policy import PolicyAgent
    from agents.registry import load_agent
    from meld8_env.observation import obs_size
    from training.single_seat import SingleSeatVecEnv

    out = folder.path
    resumed = None
    # Nothing in the folder is written until the checkpoint and the logs are read, checked and loaded into the
    # network this config builds: a resume that fails must leave the run as it was (red team, session 35: an edited
    # policy.pth failed in load_state_dict after config.yaml had been rewritten)
    if resume_from is not None:
        steps = _saved_steps(resume_from, read_metadata(resume_from))
        _check_policy_weights(resume_from, rules)
        resumed = load_tensors(resume_from, "policy.pth"), load_tensors(resume_from, "policy.optimizer.pth"), steps
        folder.check_eval_log(rules.num_players)  # the best so far, the curve and the last line are read from it
        for _, row in folder.numbered_rows("opponents.jsonl"):
            _logged_by(row, out / "opponents.jsonl")
    oracle = cfg.critic == "oracle"
    env = SingleSeatVecEnv(cfg.n_envs, opponents, rules, seed=cfg.seed, features=cfg.features, shaping=cfg.shaping,
                           oracle=oracle)  # fmt: skip
    if oracle:  # observations [honest | oracle]: the policy reads the first env.honest_size columns only
        policy, kwargs = oracle_critic_policy_for(cfg.net_arch, obs_size(rules), rules.num_players, env.honest_size,
                                                  cfg.critic_arch)  # fmt: skip
    else:
        policy, kwargs = policy_for(cfg.network, cfg.net_arch, obs_size(rules), rules.num_players)
    model = MaskablePPO(
        policy, env, n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
        learning_rate=cfg.learning_rate, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda, ent_coef=cfg.ent_coef,
        clip_range=cfg.clip_range, target_kl=cfg.target_kl, policy_kwargs=kwargs, seed=cfg.seed,
        tensorboard_log=str(out / "tb"), device="cpu", verbose=0,
    )  # fmt: skip
    if resumed is not None:  # weights only: the checkpoint's tensors into the network this config builds
        _load_resumed(model, resumed[0], resumed[1], resume_from)
        model.num_timesteps = resumed[2]
    elif init is not None:
        _load_init(model, init)
    # every check passed: from here on the folder is written
    try:  # scratch of a killed run (we hold the folder's lock); it is a folder (checked), removed before anything
        if (out / SAVING).exists():  # is written: ignore_errors left a file there to fail the first save (s47)
            shutil.rmtree(out / SAVING)
    except OSError as exc:
        raise RunFolderError(f"{out / SAVING}: cannot remove this scratch folder of a killed run ({exc.strerror}): "
                             f"remove it, or choose another out") from None  # fmt: skip
    for name in (EVAL_COPY, "_best.tmp.zip"):  # (_best.tmp.zip: earlier versions' scratch name)
        (out / name).unlink(missing_ok=True)
    if resume_from is not None:
        _note_passed_over(out, resume_from)
    folder.start(dataclasses.asdict(cfg))
    if resumed is not None:  # rows a killed run logged after its last checkpoint: those steps run again
        start = resumed[2]
        for name in ("eval.jsonl", "opponents.jsonl"):
            folder.keep_rows(name, lambda r: r["timesteps"] <= start)  # every row checked above
    recover(out / "best.zip")

    meta = make_metadata(rules, cfg.features, cfg.network, cfg.net_arch)
    if oracle:  # the honest input (obs_size) is what it plays from; the critic is dropped when it plays
        meta.update(critic="oracle", critic_arch=list(cfg.critic_arch))
    if init is not None:
        meta["init_from"] = str(cfg.init_from)

    def save(path: Path) -> None:
        """Every checkpoint carries its metadata (agents.checkpoint): loading never guesses or unpickles.
        Written in ``_saving/`` and renamed into place: a kill (or a second Ctrl-C) at any moment leaves
        the old file or the new one, and no scratch."""
        tmp = out / SAVING / path.name
        tmp.parent.mkdir(exist_ok=True)
        try:
            model.save(tmp)
            write_metadata(tmp, {**meta, "num_timesteps": int(model.num_timesteps)})
            os.replace(tmp, path)
        finally:
            shutil.rmtree(tmp.parent, ignore_errors=True)

    def save_best() -> None:
        save(out / "best.zip")

    fresh = model.num_timesteps == 0
    if fresh and cfg.bc_decisions > 0:
        try:
            _clone(cfg, model, rules, out, stop)
        except StopRequested:
            raise _interrupted(
                save, out, model, " (behaviour cloning starts over: it was stopped unfinished)"
            ) from None

    evaluated = folder.rows("eval.jsonl")

    class Periodic(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            # the best so far counts the evaluations of earlier sessions of this run (resume)
            self.best = min((r["mean_placement"] for r in evaluated if "mean_placement" in r), default=float("inf"))
            self.next_eval = self.next_ckpt = self.next_pool = 0
            self.bar = None
            self.announced = False

        def _on_training_start(self) -> None:
            start = self.model.num_timesteps
            if fresh and (cfg.bc_decisions > 0 or init is not None):
                self._evaluate(0)  # the cloned (or initial) policy is the first candidate for best.zip
            self.frozen = policy_side_parameters(self.model.policy) if start < cfg.vf_warmup else []
            for p in self.frozen:
                p.requires_grad_(False)
            # an evaluation that a Ctrl-C cut short is due at once (it never wrote its row)
            last_eval = max((r["timesteps"] for r in evaluated if isinstance(r.get("timesteps"), int)), default=0)
            if evaluated:
                self.next_eval = last_eval + cfg.eval_every
            elif fresh:
                self.next_eval = start + cfg.eval_every
            else:  # a resume with no row yet: the first evaluation (at 0 after cloning or an init, else at
                # eval_every) was cut short when the checkpoint is past it - it runs at the first step (it was
                # skipped until session 46, and best.zip became the final policy unevaluated)
                self.next_eval = 0 if cfg.bc_decisions > 0 or cfg.init_from is not None else cfg.eval_every
            self.next_ckpt, self.next_pool = start + cfg.checkpoint_every, start + cfg.pool_every
            if cfg.progress:
                from tqdm import tqdm

                self.bar = tqdm(total=cfg.total_timesteps, initial=start, unit="step", desc="PPO", dynamic_ncols=True)

        def _on_step(self) -> bool:
            t = self.model.num_timesteps
            if stop.requested:
                return False  # learn() returns; the checkpoint is written after it
            if not self.announced:  # the signal that training runs (tests wait for it instead of sleeping)
                say(f"meld8 train: PPO from step {t} to {cfg.total_timesteps} into {out}; {stop.how_to_stop()}")
                self.announced = True
            if self.frozen and t >= cfg.vf_warmup:
                for p in self.frozen:
                    p.requires_grad_(True)
                self.frozen = []
            if self.bar is not None and min(t, cfg.total_timesteps) > self.bar.n:
                self.bar.update(min(t, cfg.total_timesteps) - self.bar.n)  # throttled by tqdm; 100% drawn once
            if t >= self.next_ckpt:
                save(out / f"ckpt_{t}.zip")
                self.next_ckpt += cfg.checkpoint_every
            if t >= self.next_eval:
                self._evaluate(t)
                while self.next_eval <= t:
                    self.next_eval += cfg.eval_every
            if cfg.selfplay and t >= self.next_pool:
                self._redraw_opponents(t)
                self.next_pool += cfg.pool_every
            return not stop.requested

        def _evaluate(self, t: int) -> None:
            if self.bar is not None:
                self.bar.set_postfix_str("evaluating...", refresh=True)
            path = out / EVAL_COPY
            try:
                save(path)
                res = evaluate(PolicyAgent(path, rules), cfg.eval_opponents, cfg.eval_boards, rules, cfg.seed, stop)
            except StopRequested:
                return  # cut short: no row, so a resume evaluates again; learn() stops at the next step
            finally:
                path.unlink(missing_ok=True)  # a scratch copy for the evaluation: never left behind
            res["timesteps"] = t
            if res["mean_placement"] < self.best:  # best.zip first, then the row: a row never names a lost best
                save_best()
                self.best = res["mean_placement"]
            folder.append("eval.jsonl", res)
            self.logger.record("eval/mean_placement", res["mean_placement"])
            self.logger.record("eval/mean_score", res["mean_score"])
            if self.bar is not None:
                self.bar.set_postfix_str(f"placement {res['mean_placement']:.3f} (best {self.best:.3f})")

        def _redraw_opponents(self, t: int) -> None:
            rng = np.random.default_rng(cfg.seed + t)
            pool = [str(p) for p in sorted(out.glob("ckpt_*.zip"))] + list(cfg.pool_bots)
            picks = [pool[int(rng.integers(len(pool)))] for _ in env.opponents]
            for k, pick in enumerate(picks):
                env.opponents[k] = PolicyAgent(pick, rules) if pick.endswith(".zip") else load_agent(pick, rules, k)
            folder.append("opponents.jsonl", {"timesteps": t, "opponents": picks})

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.close()

    if stop.requested:  # asked for since the cloning's last safe point
        raise _interrupted(save, out, model)
    remaining = max(cfg.total_timesteps - model.num_timesteps, 0)
    # a stop asked for from here on ends learn() at its next step (the callback returns False); learn()
    # closes the progress bar (_on_training_end) however it ends
    model.learn(total_timesteps=remaining, callback=Periodic(), reset_num_timesteps=False, tb_log_name="ppo")
    if stop.requested and model.num_timesteps < cfg.total_timesteps:
        raise _interrupted(save, out, model)
    final = out / "final.zip"
    save(final)
    if not (out / "best.zip").exists():
        save_best()
    plot_learning_curve(out)
    return final


def _interrupted(save, out: Path, model, then: str = "") -> TrainingInterrupted:
    """The checkpoint of a run stopped by Ctrl-C (at a safe point), and the line that says so (``then``: what the
    resume will do first)."""
    path = out / f"ckpt_{model.num_timesteps}.zip"
    save(path)
    return TrainingInterrupted(
        f"stopped at {model.num_timesteps} learner steps; saved {path}; continue with --set resume=true{then}"
    )


def _stopped_at_once(out: Path) -> TrainingInterrupted:
    """A second Ctrl-C: the run stopped where it was, without a new checkpoint."""
    where = "no checkpoint was written yet"
    if _has_saved(out):  # the file a resume continues from, as it picks it (it named the newest ckpt where the
        try:  # resume goes on from final.zip: review, session 37)
            point = _resume_point(out)
        except ValueError:  # an unreadable final.zip: the resume will say so
            point = _checkpoints(out)[-1]
        where = f"continue from {point} with --set resume=true"
    return TrainingInterrupted(f"a second Ctrl-C stopped the run at once, without a new checkpoint; {where}")


def _clone(cfg: TrainConfig, model, rules: RuleConfig, out: Path, stop: StopRequest) -> None:
    """Behaviour cloning of ``cfg.bc_teacher`` into the fresh policy (``training.imitation``)."""
    from agents.registry import load_agent
    from training.imitation import collect, pretrain

    teacher = load_agent(cfg.bc_teacher, rules, cfg.seed + 7)
    say(f"meld8 train: behaviour cloning of {cfg.bc_teacher} ({cfg.bc_decisions} decisions); {stop.how_to_stop()}")
    data = collect(teacher, cfg.bc_decisions, rules, cfg.seed, features=cfg.features, progress=cfg.progress,
                   stop=stop)  # fmt: skip
    acc = pretrain(model, data, epochs=cfg.bc_epochs, batch_size=cfg.bc_batch_size, seed=cfg.seed,
                   progress=cfg.progress, stop=stop)  # fmt: skip
    with open(out / "pretrain.json", "w") as f:
        json.dump({"teacher": cfg.bc_teacher, "decisions": cfg.bc_decisions, "held_out_agreement": acc}, f)
    print(f"behaviour cloning from {cfg.bc_teacher}: {cfg.bc_decisions} decisions, "
          f"held-out agreement {acc:.1%}", flush=True)  # fmt: skip


def policy_side_parameters(policy) -> list:
    """Parameters that shape the action distribution (the shared trunk included, if any)."""
    params = list(policy.action_net.parameters()) + list(policy.mlp_extractor.policy_net.parameters())
    if policy.share_features_extractor:
        params += list(policy.features_extractor.parameters())
    else:
        params += list(policy.pi_features_extractor.parameters())
    return params
