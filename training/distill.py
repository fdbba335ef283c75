"""Distillation (expert iteration, first step): teach the card-head network the search agent's choices.

Usage::

    python -m training.distill generate --spec search --games 200 --seed 31 --out runs/distill/data.npz
    python -m training.distill train --data runs/distill/data.npz --init agents/models/ppo_baseline.zip \\
        --epochs 4 --out runs/distill/distilled.zip

``generate`` plays games with the search agent in one seat (rotated) against ``defensive`` + ``greedy`` and
records every decision of the search seat that had more than one legal action: the augmented observation
(``meld8_env.features.augment``, what the card-head network reads), the mask, the search's action, and the
per-candidate mean leaf values (NaN for actions that were not candidates). ``train`` starts from a
checkpoint (the shipped ``ppo`` by default), minimises the cross-entropy of the masked policy against the
search's actions (held-out last 5 %: agreement reported per epoch, the learning curve), and writes a
checkpoint that loads with ``ppo:PATH`` (the baseline's zip with the new ``policy.pth`` and metadata naming
the teacher and the data). Deterministic under ``--seed``.
"""

from __future__ import annotations

import argparse
import io
import json
import time
import zipfile
from pathlib import Path

import numpy as np

from agents import search_backend as sb
from agents.registry import load_agent, shipped_baseline
from meld8_env.codes import Phase
from meld8_env.engine.records import observe_records, start_records, step_records
from meld8_env.rules import RuleConfig


def generate(spec: str, games: int, seed: int, rules: RuleConfig, batch: int = 64) -> dict[str, np.ndarray]:
    """Decisions of the search seat (module docstring) from ``games`` games."""
    from meld8_env.features import augment

    P = rules.num_players
    search = load_agent(spec, rules, seed)
    opps = [load_agent("defensive", rules, seed + 1), load_agent("greedy", rules, seed + 2)]
    obs_l, mask_l, act_l, val_l = [], [], [], []
    done = 0
    while done < games:
        n = min(batch, games - done)
        recs = start_records(rules, np.arange(seed * 100_003 + done, seed * 100_003 + done + n, dtype=np.uint64))
        me = (np.arange(done, done + n) % P).astype(np.int64)  # the search seat, rotated
        while (recs["phase"] != Phase.OVER).any():
            live = recs["phase"] != Phase.OVER
            acting = recs["acting"].astype(np.int64)
            obs, masks = observe_records(rules, recs)
            acts = np.full(n, -1, np.int64)
            rows = np.flatnonzero(live & (acting == me))
            if rows.size:
                infos = [sb.infoset_of(recs[r], int(acting[r]), rules) for r in rows.tolist()]
                acts[rows] = search.act_batch(obs[rows], masks[rows], infosets=infos)
                keep = [k for k, r in enumerate(rows.tolist()) if masks[r].sum() > 1]
                if keep:
                    kr = rows[keep]
                    obs_l.append(augment(obs[kr], masks[kr], rules))
                    mask_l.append(masks[kr].copy())
                    act_l.append(acts[kr].copy())
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
    return {
        "obs": np.concatenate(obs_l),
        "masks": np.concatenate(mask_l),
        "actions": np.concatenate(act_l),
        "values": np.concatenate(val_l),
    }


def train(data: dict[str, np.ndarray], init: str, rules: RuleConfig, epochs: int, lr: float, seed: int) -> tuple:
    """(policy, learning curve: held-out agreement before training and after each epoch)."""
    import torch

    from agents.networks import load_policy

    policy, meta = load_policy(init, rules)
    obs, masks, acts = data["obs"], data["masks"], data["actions"]
    n_val = max(1, len(obs) // 20)
    train_idx = np.arange(len(obs) - n_val)
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)

    def agreement() -> float:
        policy.set_training_mode(False)
        with torch.no_grad():
            o = torch.as_tensor(obs[-n_val:], dtype=torch.float32)
            pred = policy.get_distribution(o, action_masks=masks[-n_val:]).get_actions(deterministic=True).numpy()
        return float((pred == acts[-n_val:]).mean())

    curve = [agreement()]
    for _ in range(epochs):
        policy.set_training_mode(True)
        rng.shuffle(train_idx)
        for start in range(0, len(train_idx), 512):
            b = train_idx[start : start + 512]
            dist = policy.get_distribution(torch.as_tensor(obs[b], dtype=torch.float32), action_masks=masks[b])
            loss = -dist.log_prob(torch.as_tensor(acts[b])).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        curve.append(agreement())
    policy.set_training_mode(False)
    return policy, meta, curve


def save(policy, meta: dict, init: str, out: Path, extra: dict) -> None:
    """The init checkpoint's zip with the new weights and metadata (loads with ``ppo:OUT``)."""
    import torch

    from agents.checkpoint import MEMBER

    buf = io.BytesIO()
    torch.save(policy.state_dict(), buf)
    with zipfile.ZipFile(init) as z:
        members = {n: z.read(n) for n in z.namelist() if n not in (MEMBER, "policy.pth")}
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
    g = sub.add_parser("generate")
    g.add_argument("--spec", default="search")
    g.add_argument("--games", type=int, default=100)
    g.add_argument("--seed", type=int, default=31)
    g.add_argument("--out", required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", required=True)
    t.add_argument("--init", default=None, help="checkpoint to start from (default: the shipped ppo)")
    t.add_argument("--epochs", type=int, default=4)
    t.add_argument("--lr", type=float, default=3e-4)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    rules = RuleConfig()
    if args.cmd == "generate":
        if args.games < 1:
            ap.error(f"--games must be >= 1, got {args.games}")
        t0 = time.time()
        data = generate(args.spec, args.games, args.seed, rules)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.out, **data, spec=np.array(args.spec), games=np.array(args.games))
        print(f"{args.out}: {len(data['actions'])} decisions from {args.games} games in {time.time() - t0:.0f} s")
        return
    init = args.init or str(shipped_baseline())
    with np.load(args.data) as z:
        data = {k: z[k] for k in ("obs", "masks", "actions", "values")}
        teacher = str(z["spec"])
    policy, meta, curve = train(data, init, rules, args.epochs, args.lr, args.seed)
    extra = {"distilled_from": teacher, "init": Path(init).name, "decisions": int(len(data["actions"])),
             "epochs": args.epochs, "lr": args.lr, "heldout_agreement": curve}  # fmt: skip
    save(policy, meta, init, Path(args.out), extra)
    print(f"{args.out}: held-out agreement with {teacher} by epoch {[round(x, 3) for x in curve]}")


if __name__ == "__main__":
    main()
