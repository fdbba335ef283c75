"""Train MaskablePPO in one seat of the batched engine (``meld8 train CONFIG [--set key=value]``).

Outputs in ``out``: TensorBoard logs (``tb/``), checkpoints (``ckpt_<steps>.zip``), ``best.zip`` (best
evaluation), ``final.zip``, ``eval.jsonl`` (one line per evaluation), ``config.yaml`` and, in self-play,
``opponents.jsonl`` (the opponents drawn at each redraw). With ``resume: true`` training continues
from the newest checkpoint in ``out``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from meld8_env.rules import RuleConfig


@dataclasses.dataclass
class TrainConfig:
    total_timesteps: int = 200_000
    """learner steps (one action of the learning seat) to train for"""
    n_envs: int = 256
    """games played at once"""
    n_steps: int = 64
    """steps per game per PPO update (rollout = n_envs * n_steps)"""
    batch_size: int = 4096
    """minibatch size of each PPO gradient step"""
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
    """rule config YAML (default rules when empty)"""
    resume: bool = False
    """continue from the newest checkpoint in ``out`` (weights-only)"""
    progress: bool = True
    """show progress bars"""

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
        ):
            if not isinstance(getattr(cfg, name), int) or getattr(cfg, name) < 1:
                raise ValueError(f"train option {name!r} must be an integer >= 1, got {getattr(cfg, name)!r}")
        check_rates(cfg)
        return cfg


def check_rates(cfg: Any) -> None:
    """Options of both backends that are fractions: ``gamma`` and ``gae_lambda`` in [0, 1], ``shaping``
    as ``Meld8Vector`` takes it - checked at load, not in an env built later (on a Ray worker)."""
    from meld8_env.vector import check_shaping

    for name in ("gamma", "gae_lambda"):
        if not 0 <= getattr(cfg, name) <= 1:
            raise ValueError(f"train option {name!r} must be in [0, 1], got {getattr(cfg, name)!r}")
    try:
        check_shaping(cfg.shaping)
    except ValueError as exc:
        raise ValueError(f"train option {exc}") from None


def read_options(cls: type, path: str | None, overrides: list[str] | None) -> dict[str, Any]:
    """The options of a train config dataclass ``cls`` from a YAML file (or built-in name) and
    ``--set key=value`` overrides, each checked against its default's type (ValueError otherwise)."""
    import yaml

    from meld8_env.config_io import read_yaml_mapping

    data: dict[str, Any] = read_yaml_mapping(path, "train config", kind="train") if path else {}
    for item in overrides or []:
        if "=" not in item:
            raise ValueError(f"--set expects key=value, got {item!r}")
        key, value = item.split("=", 1)
        try:
            data[key] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            reason = str(exc).splitlines()[0]
            raise ValueError(f"--set {item}: the value is not valid YAML ({reason})") from None
    if "eval_deals" in data:  # the old name of eval_boards
        data.setdefault("eval_boards", data.pop("eval_deals"))
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ValueError(f"unknown train option {unknown[0]!r}; known: {', '.join(sorted(known))}")
    for key, value in data.items():
        _check_type(key, value, known[key])
    return data


def _check_type(key: str, value: Any, field: dataclasses.Field) -> None:
    """Each option has the type of its default (ints for int options, a list of names for lists, ...)."""
    default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
    if value is None and (default is None or key in ("target_kl", "rules")):
        return
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float) or key == "target_kl":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, list):
        kind = type(default[0]) if default else str
        ok = isinstance(value, list) and all(isinstance(v, kind) and not isinstance(v, bool) for v in value)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise ValueError(f"train option {key!r} must be like its default {default!r}, got {value!r}")


def _rules(cfg: TrainConfig) -> RuleConfig:
    return RuleConfig.load(cfg.rules) if cfg.rules else RuleConfig()


def evaluate(policy, opponents: list[str], boards: int, rules: RuleConfig, seed: int) -> dict:
    """Duplicate mini-tournament of ``policy`` vs two fixed agents (every seating of every board)."""
    import itertools

    from agents.registry import load_agent
    from training.arena import play

    agents = [policy] + [load_agent(n, rules, 100 + i) for i, n in enumerate(opponents)]
    perms = np.array(list(itertools.permutations(range(len(agents)))))
    seeds = np.repeat(np.arange(boards) + 1_000_000 + seed, len(perms))
    recs = play(agents, np.tile(perms, (boards, 1)), seeds, rules)
    places = [r.placements[r.seats.index(0)] for r in recs]
    scores = [r.final_scores[r.seats.index(0)] for r in recs]
    return {"mean_placement": float(np.mean(places)), "mean_score": float(np.mean(scores)), "games": len(recs)}


def train(cfg: TrainConfig) -> Path:
    import yaml
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.networks import policy_for
    from agents.policy import PolicyAgent
    from agents.registry import load_agent
    from meld8_env.observation import obs_size
    from training.single_seat import SingleSeatVecEnv

    rules = _rules(cfg)
    opponents = [load_agent(n, rules, i + 1) for i, n in enumerate(cfg.opponents)]
    # every agent the run will need later, so a misspelt name fails now, not an hour in
    later = [
        *cfg.eval_opponents,
        *(cfg.pool_bots if cfg.selfplay else []),
        *([cfg.bc_teacher] * (cfg.bc_decisions > 0)),
    ]
    for name in later:
        load_agent(name, rules)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.yaml").write_text(yaml.safe_dump(dataclasses.asdict(cfg)))
    env = SingleSeatVecEnv(cfg.n_envs, opponents, rules, seed=cfg.seed, features=cfg.features, shaping=cfg.shaping)
    ckpts = sorted(out.glob("ckpt_*.zip"), key=lambda p: int(p.stem.split("_")[1]))
    if cfg.resume and not ckpts:
        raise ValueError(f"resume: no checkpoint in {out}")
    policy, kwargs = policy_for(cfg.network, cfg.net_arch, obs_size(rules), rules.num_players)
    model = MaskablePPO(
        policy, env, n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
        learning_rate=cfg.learning_rate, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda, ent_coef=cfg.ent_coef,
        clip_range=cfg.clip_range, target_kl=cfg.target_kl, policy_kwargs=kwargs, seed=cfg.seed,
        tensorboard_log=str(out / "tb"), device="cpu", verbose=0,
    )  # fmt: skip
    if cfg.resume:  # weights only: the checkpoint's tensors into the network this config builds (no unpickling)
        from agents.checkpoint import check_compatible, load_tensors, read_metadata

        last = ckpts[-1]
        saved = read_metadata(last)
        check_compatible(saved, rules, str(last))
        if (saved["network"], list(saved["net_arch"]), saved["features"]) != (cfg.network, cfg.net_arch, cfg.features):
            raise ValueError(f"resume: {last} holds a {saved['network']} {saved['net_arch']} network; the config asks "
                             f"for {cfg.network} {cfg.net_arch} (features={cfg.features})")  # fmt: skip
        model.policy.load_state_dict(load_tensors(last, "policy.pth"))
        model.policy.optimizer.load_state_dict(load_tensors(last, "policy.optimizer.pth"))
        model.num_timesteps = int(saved["num_timesteps"])

    from agents.checkpoint import make_metadata, write_metadata

    meta = make_metadata(rules, cfg.features, cfg.network, cfg.net_arch)

    def save(path: Path) -> None:
        """Every checkpoint carries its metadata (agents.checkpoint): loading never guesses or unpickles."""
        model.save(path)
        write_metadata(path, {**meta, "num_timesteps": int(model.num_timesteps)})

    fresh = model.num_timesteps == 0
    try:
        if fresh and cfg.bc_decisions > 0:
            _clone(cfg, model, rules, out)
    except KeyboardInterrupt:
        raise _interrupted(save, out, model) from None

    class Periodic(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.best = float("inf")
            self.next_eval = self.next_ckpt = self.next_pool = 0
            self.bar = None

        def _on_training_start(self) -> None:
            start = self.model.num_timesteps
            if fresh and cfg.bc_decisions > 0:
                self._evaluate(0)  # the cloned policy is the first candidate for best.zip
            self.frozen = policy_side_parameters(self.model.policy) if start < cfg.vf_warmup else []
            for p in self.frozen:
                p.requires_grad_(False)
            self.next_eval, self.next_ckpt, self.next_pool = (
                start + cfg.eval_every, start + cfg.checkpoint_every, start + cfg.pool_every
            )  # fmt: skip
            if cfg.progress:
                from tqdm import tqdm

                self.bar = tqdm(total=cfg.total_timesteps, initial=start, unit="step", dynamic_ncols=True)

        def _on_step(self) -> bool:
            t = self.model.num_timesteps
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
                self.next_eval += cfg.eval_every
            if cfg.selfplay and t >= self.next_pool:
                self._redraw_opponents(t)
                self.next_pool += cfg.pool_every
            return True

        def _evaluate(self, t: int) -> None:
            path = out / "_eval.zip"
            save(path)
            try:
                res = evaluate(PolicyAgent(path, rules), cfg.eval_opponents, cfg.eval_boards, rules, cfg.seed)
            finally:
                path.unlink(missing_ok=True)  # a scratch copy for the evaluation: never left behind
            res["timesteps"] = t
            with open(out / "eval.jsonl", "a") as f:
                f.write(json.dumps(res) + "\n")
            self.logger.record("eval/mean_placement", res["mean_placement"])
            self.logger.record("eval/mean_score", res["mean_score"])
            if res["mean_placement"] < self.best:
                self.best = res["mean_placement"]
                save(out / "best.zip")

        def _redraw_opponents(self, t: int) -> None:
            rng = np.random.default_rng(cfg.seed + t)
            pool = [str(p) for p in sorted(out.glob("ckpt_*.zip"))] + list(cfg.pool_bots)
            picks = [pool[int(rng.integers(len(pool)))] for _ in env.opponents]
            for k, pick in enumerate(picks):
                env.opponents[k] = PolicyAgent(pick, rules) if pick.endswith(".zip") else load_agent(pick, rules, k)
            with open(out / "opponents.jsonl", "a") as f:
                f.write(json.dumps({"timesteps": t, "opponents": picks}) + "\n")

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.close()

    remaining = max(cfg.total_timesteps - model.num_timesteps, 0)
    periodic = Periodic()
    try:
        model.learn(total_timesteps=remaining, callback=periodic, reset_num_timesteps=False, tb_log_name="ppo")
    except KeyboardInterrupt:
        if periodic.bar is not None:
            periodic.bar.close()
        raise _interrupted(save, out, model) from None
    final = out / "final.zip"
    save(final)
    if not (out / "best.zip").exists():
        save(out / "best.zip")
    plot_learning_curve(out)
    return final


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C during training: a checkpoint was saved; ``resume: true`` continues from it."""


def _interrupted(save, out: Path, model) -> TrainingInterrupted:
    path = out / f"ckpt_{model.num_timesteps}.zip"
    save(path)
    return TrainingInterrupted(
        f"stopped at {model.num_timesteps} learner steps; saved {path}; continue with --set resume=true"
    )


def _clone(cfg: TrainConfig, model, rules: RuleConfig, out: Path) -> None:
    """Behaviour cloning of ``cfg.bc_teacher`` into the fresh policy (``training.imitation``)."""
    from agents.registry import load_agent
    from training.imitation import collect, pretrain

    teacher = load_agent(cfg.bc_teacher, rules, cfg.seed + 7)
    data = collect(teacher, cfg.bc_decisions, rules, cfg.seed, features=cfg.features, progress=cfg.progress)
    acc = pretrain(model, data, epochs=cfg.bc_epochs, batch_size=cfg.bc_batch_size, seed=cfg.seed,
                   progress=cfg.progress)  # fmt: skip
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


def plot_learning_curve(out: str | Path, steps: str = "learner steps") -> Path | None:
    """``learning_curve.png`` from ``eval.jsonl``: mean placement and score vs ``timesteps`` (named ``steps``)."""
    out = Path(out)
    rows = (
        [json.loads(x) for x in (out / "eval.jsonl").read_text().splitlines()] if (out / "eval.jsonl").exists() else []
    )
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import yaml

    cfg = yaml.safe_load((out / "config.yaml").read_text()) if (out / "config.yaml").exists() else {}
    bots = " + ".join(cfg.get("eval_opponents") or ["evaluation bots"])
    xs = [r["timesteps"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(xs, [r["mean_placement"] for r in rows], marker="o")
    a.set_title(f"mean placement vs {bots} (lower is better)")
    a.set_xlabel(steps)
    b.plot(xs, [r["mean_score"] for r in rows], marker="o")
    b.axhline(30_000, color="grey", lw=0.8)
    b.set_title("mean final score")
    b.set_xlabel(steps)
    fig.tight_layout()
    path = out / "learning_curve.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
