"""Distillation (expert iteration, first step): teach the card-head network the search agent's choices.

Usage::

    python -m training.distill generate --spec search --games 4000 --seed 71 --out runs/distill/seed71
    python -m training.distill train --data runs/distill/seed71 runs/distill/seed72 --epochs 4 \
        --soft 0.5 --out runs/distill/distilled.zip

``generate`` plays games with the search agent in one seat (rotated) against ``defensive`` + ``greedy`` (a
CHEATING teacher, ``--spec search:cheat=1``, is handed the true records: oracle guiding, the student still
reads only the observation) and records every decision of the search seat that had more than one legal action:
the augmented observation (``meld8_env.features.augment``, what the card-head network reads), the mask, the
search's action, and the per-candidate mean leaf values (NaN for actions that were not candidates). It writes
a folder of part files (``training.distill_data``), one per ``--chunk`` games with a progress line each;
rerunning the same command resumes (finished parts are skipped, and a game's data does not depend on the chunk
that played it).
``train`` merges any part files / folders of one teacher (checked), starts from a checkpoint (the shipped
``ppo`` by default) and minimises the cross-entropy of the masked policy against a target that puts
``1 - soft`` on the search's action and ``soft`` on a softmax of its per-candidate values / ``temp``
(``--soft 0``: plain imitation). The last 5 % of the games are held out: agreement with the search's action
and its log-loss per epoch go into the metadata and a learning-curve PNG beside the zip. It writes a
checkpoint that loads with ``ppo:PATH`` (the init's zip with the new ``policy.pth``, without the init's
optimizer state, and metadata naming the teacher, the data's seeds and size, and the command). The value
head is not trained (only the policy is distilled; a PPO fine-tune would have to re-fit it first).
Deterministic under ``--seed``.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from agents import search_backend as sb
from agents.registry import load_agent, shipped_baseline
from meld8_env.agent import wants_records
from meld8_env.codes import Phase
from meld8_env.engine.records import observe_records, start_records, step_records
from meld8_env.rules import RuleConfig
from training.distill_data import DistillDataError, load_data, part_path, read_part, save_part


def generate(
    spec: str, games: int, seed: int, rules: RuleConfig, batch: int = 64, first: int = 0
) -> dict[str, np.ndarray]:
    """Decisions of the search seat (module docstring) from games ``first .. first + games - 1``.

    Game ``g`` is dealt from seed ``seed * 100_003 + g`` with the search in seat ``g % players``, and every
    agent is seeded with ``seed`` alone; a search decision is a pure function of its seed and the
    information set, so the data of a game does not depend on which call (chunk) played it: chunks
    concatenate to exactly the data of one long call (tests/test_distill.py checks it). Arrays: ``obs``
    (N, 1017) uint8 augmented observations, ``masks`` (N, 64) bool, ``actions`` (N,) int64, ``values``
    (N, 64) float32 per-candidate mean leaf values (NaN off the candidates), ``game`` (N,) int64.
    """
    from meld8_env.features import augment

    P = rules.num_players
    search = load_agent(spec, rules, seed)
    opps = [load_agent("defensive", rules, seed + 1), load_agent("greedy", rules, seed + 2)]
    obs_l, mask_l, act_l, val_l, game_l = [], [], [], [], []
    done = first
    while done < first + games:
        n = min(batch, first + games - done)
        ids = np.arange(done, done + n, dtype=np.int64)
        recs = start_records(rules, (seed * 100_003 + ids).astype(np.uint64))
        me = ids % P  # the search seat, rotated
        while (recs["phase"] != Phase.OVER).any():
            live = recs["phase"] != Phase.OVER
            acting = recs["acting"].astype(np.int64)
            obs, masks = observe_records(rules, recs)
            acts = np.full(n, -1, np.int64)
            rows = np.flatnonzero(live & (acting == me))
            if rows.size:
                infos = [sb.infoset_of(recs[r], int(acting[r]), rules) for r in rows.tolist()]
                # a CHEATING teacher (search:cheat=1, "oracle guiding") reads the true records; the student
                # still learns from the honest observation only
                extra = {"records": recs[rows]} if wants_records(search) else {}
                acts[rows] = search.act_batch(obs[rows], masks[rows], infosets=infos, **extra)
                keep = [k for k, r in enumerate(rows.tolist()) if masks[r].sum() > 1]
                if keep:
                    kr = rows[keep]
                    obs_l.append(augment(obs[kr], masks[kr], rules))
                    mask_l.append(masks[kr].copy())
                    act_l.append(acts[kr].copy())
                    game_l.append(ids[kr])
                    v = np.full((len(keep), 64), np.nan, np.float32)
                    for i, k in enumerate(keep):
                        for a, (val, _) in search.last_values[k].items():
                            v[i, a] = val
                    val_l.append(v)
            # opponents: seat (me + 1) plays defensive, (me + 2) greedy
            for j, opp in enumerate(opps):
                orow = np.flatnonzero(live & (acting == (me + 1 + j) % P))
                if orow.size:
                    acts[orow] = opp.act_batch(obs[orow], masks[orow])
            step_records(rules, recs, acts)
        done += n
    data = {
        "obs": np.concatenate(obs_l),
        "masks": np.concatenate(mask_l),
        "actions": np.concatenate(act_l),
        "values": np.concatenate(val_l),
        "game": np.concatenate(game_l),
    }
    # games are played in batches, so decisions interleave across games: order them by game (stable in time)
    order = np.argsort(data["game"], kind="stable")
    return {k: v[order] for k, v in data.items()}


def generate_parts(
    spec: str,
    games: int,
    seed: int,
    rules: RuleConfig,
    folder: Path,
    chunk: int = 64,
    log: Callable[[str], None] = print,
) -> list[Path]:
    """Generate games ``0 .. games - 1`` of ``seed`` into ``folder`` one part per ``chunk`` games, skipping
    parts already written by the same teacher (a part by another teacher is refused: no mixed data)."""
    folder = Path(folder)
    paths, t0, made_games, total = [], time.time(), 0, 0
    for first in range(0, games, chunk):
        n = min(chunk, games - first)
        path = part_path(folder, seed, first)
        paths.append(path)
        if path.exists():
            arrays, meta = read_part(path)
            if meta != {"spec": spec, "seed": seed, "first": first, "games": n}:
                raise DistillDataError(f"{path}: holds {meta}, not spec={spec!r} seed={seed} first={first} games={n}")
            total += len(arrays["actions"])
            log(f"{path.name}: already there ({len(arrays['actions'])} decisions), skipped")
            continue
        data = generate(spec, n, seed, rules, batch=chunk, first=first)
        save_part(path, data, spec, seed, first, n)
        made_games += n
        total += len(data["actions"])
        rate = made_games / max(time.time() - t0, 1e-9)
        left = games - first - n
        log(
            f"{time.strftime('%H:%M:%S')} {path.name}: {len(data['actions'])} decisions; "
            f"{first + n}/{games} games, {total} decisions, {rate:.2f} games/s, ~{left / rate / 60:.0f} min left"
        )
    return paths


def heldout_split(data: dict[str, np.ndarray], frac: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, held-out rows): the held-out rows are every decision of the last ``frac`` of the games
    (by (seed, game)), so no game has decisions on both sides (decisions of one game are correlated)."""
    seed = data.get("seed", np.zeros(len(data["game"]), np.int64))
    keys = np.stack([seed, data["game"]], axis=1)
    uniq = np.unique(keys, axis=0)  # sorted by seed, then game
    n_val = max(1, int(np.ceil(frac * len(uniq))))
    if n_val >= len(uniq):
        raise ValueError(f"{len(uniq)} games cannot be split {1 - frac:.0%} / {frac:.0%}: generate more games")
    cut = uniq[-n_val]  # the first held-out game: it and every later (seed, game) are held out
    val = (keys[:, 0] > cut[0]) | ((keys[:, 0] == cut[0]) & (keys[:, 1] >= cut[1]))
    return np.flatnonzero(~val), np.flatnonzero(val)


def soft_targets(actions: np.ndarray, values: np.ndarray, soft: float, temp: float) -> np.ndarray:
    """(N, 64) float32 target distributions: ``(1 - soft)`` on the search's action plus ``soft`` times a
    softmax of the per-candidate values / ``temp`` (placement units; NaN = not a candidate, weight 0).
    Rows without values keep the one-hot target. ``soft=0`` is plain imitation of the search's choice."""
    n = len(actions)
    out = np.zeros((n, values.shape[1]), np.float32)
    out[np.arange(n), actions] = 1.0
    if soft <= 0:
        return out
    has = ~np.isnan(values)
    rows = has.any(axis=1)
    z = np.where(has, values / temp, -np.inf)[rows]
    z = np.exp(z - z.max(axis=1, keepdims=True))
    sm = (z / z.sum(axis=1, keepdims=True)).astype(np.float32)
    out[rows] = (1 - soft) * out[rows] + soft * sm
    return out


def value_regret(picks: np.ndarray, values: np.ndarray) -> dict[str, float]:
    """How good ``picks`` (N,) are by the search's own per-candidate values (N, 64) (NaN = not a
    candidate): ``heldout_regret`` = mean over decisions with values whose pick is a candidate of (best
    candidate value - the pick's value), in placement units (0 = always the search's best); and
    ``heldout_off_candidates`` = the fraction of those decisions whose pick the search did not evaluate.
    A measure that does not reward copying the search's margin rule (its choice is the best value in
    about 80 % of decisions)."""
    has = ~np.isnan(values)
    rows = np.flatnonzero(has.any(axis=1))
    if not rows.size:
        return {"heldout_regret": float("nan"), "heldout_off_candidates": float("nan")}
    v = values[rows]
    picked = v[np.arange(len(rows)), picks[rows]]
    on = ~np.isnan(picked)
    regret = (np.nanmax(v[on], axis=1) - picked[on]).mean() if on.any() else float("nan")
    return {"heldout_regret": float(regret), "heldout_off_candidates": float(1 - on.mean())}


def train(
    data: dict[str, np.ndarray],
    init: str,
    rules: RuleConfig,
    epochs: int,
    lr: float,
    seed: int,
    soft: float = 0.0,
    temp: float = 0.1,
    batch: int = 512,
) -> tuple:
    """(policy, metadata, curve): the network of ``init`` trained on ``data`` (cross-entropy of the masked
    policy against :func:`soft_targets`), and per epoch (0 = before training) the held-out agreement of
    its deterministic action with the search's action, the held-out log-loss of the search's action, and
    the mean training loss. Deterministic under ``seed`` (torch and the shuffles are seeded)."""
    import torch

    from agents.networks import load_policy

    policy, meta = load_policy(init, rules)
    obs, masks, acts = data["obs"], data["masks"], data["actions"]
    target = soft_targets(acts, data["values"], soft, temp)
    train_idx, val_idx = heldout_split(data)
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)

    def heldout() -> dict[str, float]:
        policy.set_training_mode(False)
        picks, nll = [], 0.0
        with torch.no_grad():
            for start in range(0, len(val_idx), 4096):
                b = val_idx[start : start + 4096]
                dist = policy.get_distribution(torch.as_tensor(obs[b], dtype=torch.float32), action_masks=masks[b])
                picks.append(dist.get_actions(deterministic=True).numpy())
                nll -= float(dist.log_prob(torch.as_tensor(acts[b])).sum())
        pick = np.concatenate(picks)
        return {
            "heldout_agreement": float((pick == acts[val_idx]).mean()),
            "heldout_nll": nll / len(val_idx),
            **value_regret(pick, data["values"][val_idx]),
        }

    curve = [{"epoch": 0, **heldout(), "train_loss": None}]
    for epoch in range(1, epochs + 1):
        policy.set_training_mode(True)
        rng.shuffle(train_idx)
        total = 0.0
        for start in range(0, len(train_idx), batch):
            b = train_idx[start : start + batch]
            dist = policy.get_distribution(torch.as_tensor(obs[b], dtype=torch.float32), action_masks=masks[b])
            logp = torch.log_softmax(dist.distribution.logits, dim=-1)  # masked: illegal logits are -1e8
            loss = -(torch.as_tensor(target[b]) * logp).sum(dim=-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(b)
        curve.append({"epoch": epoch, **heldout(), "train_loss": total / len(train_idx)})
    policy.set_training_mode(False)
    return policy, meta, curve


def plot_curve(curve: list[dict], path: Path, title: str) -> Path:
    """The learning curve PNG: held-out agreement with the search, log-loss and value regret by epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ep = [c["epoch"] for c in curve]
    fig, (a, b, c3) = plt.subplots(1, 3, figsize=(14, 4))
    a.plot(ep, [c["heldout_agreement"] for c in curve], marker="o")
    a.set_title("held-out agreement with the search (higher is better)")
    a.set_xlabel("epoch (0 = the init checkpoint)")
    b.plot(ep, [c["heldout_nll"] for c in curve], marker="o", label="held-out")
    b.plot(ep[1:], [c["train_loss"] for c in curve[1:]], marker="x", label="train (vs its targets)")
    b.set_title("log-loss of the search's action")
    b.set_xlabel("epoch")
    b.legend()
    c3.plot(ep, [c["heldout_regret"] for c in curve], marker="o")
    c3.set_title("held-out regret by the search's values (placement)")
    c3.set_xlabel("epoch")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def save(policy, meta: dict, init: str, out: Path, extra: dict) -> None:
    """The init checkpoint's zip with the new weights and metadata (loads with ``ppo:OUT``). The init's
    optimizer state is left out: it belongs to the init's training, not this one (and doubles the size)."""
    import torch

    from agents.checkpoint import MEMBER

    buf = io.BytesIO()
    torch.save(policy.state_dict(), buf)
    with zipfile.ZipFile(init) as z:
        members = {n: z.read(n) for n in z.namelist() if n not in (MEMBER, "policy.pth", "policy.optimizer.pth")}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name, blob in members.items():
            z.writestr(name, blob)
        z.writestr("policy.pth", buf.getvalue())
        z.writestr(MEMBER, json.dumps({**meta, **extra}, indent=1, sort_keys=True))
    tmp.replace(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="play games with the teacher, write a folder of parts (resumable)")
    g.add_argument("--spec", default="search")
    g.add_argument("--games", type=int, default=100)
    g.add_argument("--seed", type=int, default=31)
    g.add_argument("--chunk", type=int, default=64, help="games per part file (and per batch)")
    g.add_argument("--out", required=True, help="folder of part files; rerunning the command resumes")
    t = sub.add_parser("train", help="train a checkpoint on generated parts (files and/or folders, merged)")
    t.add_argument("--data", required=True, nargs="+", help="part files or folders of them (one teacher)")
    t.add_argument("--init", default=None, help="checkpoint to start from (default: the shipped ppo)")
    t.add_argument("--epochs", type=int, default=4)
    t.add_argument("--lr", type=float, default=3e-4)
    t.add_argument("--batch", type=int, default=512)
    t.add_argument("--soft", type=float, default=0.0, help="weight of the softmax of the search's values (0..1)")
    t.add_argument("--temp", type=float, default=0.1, help="softmax temperature in placement units (> 0)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", required=True, help="the checkpoint zip; its learning curve goes beside it (.png)")
    args = ap.parse_args(argv)
    rules = RuleConfig()
    if args.cmd == "generate":
        if args.games < 1 or args.chunk < 1:
            ap.error(f"--games and --chunk must be >= 1, got {args.games} and {args.chunk}")
        t0 = time.time()
        paths = generate_parts(args.spec, args.games, args.seed, rules, Path(args.out), args.chunk)
        print(f"{args.out}: {len(paths)} parts, {args.games} games of seed {args.seed} in {time.time() - t0:.0f} s")
        return
    if args.epochs < 0 or args.lr <= 0 or args.batch < 1 or not 0 <= args.soft <= 1 or args.temp <= 0:
        ap.error("need --epochs >= 0, --lr > 0, --batch >= 1, --soft in 0..1 and --temp > 0")
    out = Path(args.out)
    if out.suffix != ".zip":
        ap.error(f"--out {out}: name a .zip (the checkpoint)")
    init = args.init or str(shipped_baseline())
    try:
        data, info = load_data(args.data)
    except DistillDataError as exc:
        ap.error(str(exc))
    t0 = time.time()
    policy, meta, curve = train(data, init, rules, args.epochs, args.lr, args.seed, args.soft, args.temp, args.batch)
    png = plot_curve(curve, out.with_name(out.stem + "_learning_curve.png"),
                     f"{out.name}: {info['decisions']} decisions of {info['spec']}, soft={args.soft}")  # fmt: skip
    extra = {
        "distilled_from": info["spec"],
        "init": Path(init).name,
        "data": {
            "decisions": info["decisions"],
            "games_by_seed": {str(k): v for k, v in info["seeds"].items()},
            "opponents": ["defensive", "greedy"],
        },
        "train": {
            "epochs": args.epochs,
            "lr": args.lr,
            "batch": args.batch,
            "soft": args.soft,
            "temp": args.temp,
            "seed": args.seed,
            "seconds": round(time.time() - t0),
        },
        "command": "python -m training.distill " + " ".join(sys.argv[1:] if argv is None else argv),
        "curve": curve,
        "learning_curve": png.name,
    }
    save(policy, meta, init, out, extra)
    for c in curve:
        print(f"epoch {c['epoch']}: held-out agreement {c['heldout_agreement']:.4f}, log-loss "
              f"{c['heldout_nll']:.4f}, regret {c['heldout_regret']:.4f}, off candidates "
              f"{c['heldout_off_candidates']:.3f}")  # fmt: skip
    print(f"{out}: {info['decisions']} decisions of {info['spec']}; curve {png}")


if __name__ == "__main__":
    main()
