"""Distillation (expert iteration, first step): teach the card-head network the search agent's choices.

Usage::

    python -m training.distill generate --spec search --games 4000 --seed 71 --out runs/distill/seed71
    python -m training.distill train --data runs/distill/seed71 runs/distill/seed72 --epochs 4 \
        --soft 0.5 --out runs/distill/distilled.zip
    python -m training.distill iterate --rounds 3 --games 1536 --seed 301 --epochs 3 --lr 1e-3 --out runs/iter

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
optimizer state, and metadata naming the teacher, the data's seeds and size, and the command).
Monte-Carlo returns: ``generate`` records each decision's return (the search seat's engine-credited
``points`` rewards to the end of the game, discounted by ``--gamma`` per decision of that seat, 0.995 as in
the ppo recipe), and ``train --value-coef C`` adds C times the value head's squared error against them, so
the checkpoint's critic starts fitted to the returns of the teacher's games; with
the default 0 the value head's own weights are left as they were (its predictions still move with the trunk
it shares with the policy). Every epoch reports the value head's held-out explained
variance of the returns either way. Deterministic under ``--seed``.
``iterate`` is expert iteration: round r generates with the search whose prior is round r-1's network
(``prior=ppo:NET+keep=prior``), then trains that network on those games (:func:`iterate`); rerunning resumes,
and a finished round made with other settings is refused rather than overwritten or silently reused.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shlex
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from agents import search_backend as sb
from agents.checkpoint import CONTEXTS, read_metadata
from agents.registry import load_agent, shipped_baseline
from meld8_env.agent import plays_streams, wants_infoset, wants_records
from meld8_env.agent_spec import checkpoint_path
from meld8_env.codes import Phase
from meld8_env.engine.records import observe_records, start_records, step_records
from meld8_env.engine.seeding import MAX_SEED, check_seed
from meld8_env.paths import creatable_folder, output_path
from meld8_env.rules import RuleConfig
from meld8_env.safe_text import one_line
from meld8_env.table import agent_actions
from training.distill_data import MAX_SPEC, DistillDataError, load_data, part_path, read_part, save_part

GAMMA = 0.995
"""The discount of the Monte-Carlo returns: the shipped ppo recipe's (configs/train/ppo_vs_bots.yaml)."""


def discounted_returns(step_rewards: list[float], gamma: float) -> np.ndarray:
    """G[k] = sum over j >= k of gamma^(j - k) * step_rewards[j]: the Monte-Carlo return of each learner step."""
    out = np.zeros(len(step_rewards))
    acc = 0.0
    for k in range(len(step_rewards) - 1, -1, -1):
        acc = step_rewards[k] + gamma * acc
        out[k] = acc
    return out


NEW_CHECKPOINT = "a new .zip file for the checkpoint"
PARTS_FOLDER = "a folder for the part files"
ROUNDS_FOLDER = "a folder for iterate's round{r}/ folders"
PROG = "python -m training.distill"
MAX_ROUNDS = 1_000  # rounds of iterate; each plays and trains, so more is days of work (and lists built up front)


DEAL_STRIDE = 100_003  # game g of seed s is dealt from s * DEAL_STRIDE + g


def check_generate_seed(seed: int, games: int, what: str = "") -> None:
    """ValueError unless every game's deal seed ``seed * DEAL_STRIDE + g`` (g < ``games``) lies in 0..2**63 - 1
    (int64, as the deal seeds are computed); ``what`` names a seed derived from --seed."""
    top = (MAX_SEED - games) // DEAL_STRIDE
    if not 0 <= seed <= top:
        got = what or str(seed)
        raise ValueError(f"--seed must be 0..{top} for {games} games (game g is dealt from seed * {DEAL_STRIDE} + g), "
                         f"got {got}")  # fmt: skip


def generate(
    spec: str,
    games: int,
    seed: int,
    rules: RuleConfig,
    batch: int = 64,
    first: int = 0,
    gamma: float = GAMMA,
    driver: str = "",
) -> dict[str, np.ndarray]:
    """Decisions of the search seat (module docstring) from games ``first .. first + games - 1``.

    Game ``g`` is dealt from seed ``seed * DEAL_STRIDE + g`` with the search in seat ``g % players``, and every
    agent is seeded with ``seed`` alone; a search decision is a pure function of its seed and the
    information set, so the data of a game does not depend on which call (chunk) played it: chunks
    concatenate to exactly the data of one long call (tests/test_distill.py checks it). Arrays: ``obs``
    (N, 1017) uint8 augmented observations, ``masks`` (N, 64) bool, ``actions`` (N,) int64, ``values``
    (N, 64) float32 per-candidate mean leaf values (NaN off the candidates), ``game`` (N,) int64, and
    ``returns`` (N,) float32: the Monte-Carlo return of the decision, the search seat's rewards from it to the
    end of the game as the engine credits them (``reward="points"``: points / 10,000 per hand and the
    placement bonus, as PPO's single-seat face sees them), discounted by ``gamma`` per decision of that seat
    (forced ones included, as in PPO, where each of the learner's decisions is a step).

    ``driver`` (an agent spec; ``""``: the teacher itself) plays the seat's moves while the search still labels
    every decision: with a network as the driver the labels are the search's choices on the states the *network*
    reaches (DAgger's data: a student that only ever saw its teacher's states never learns to recover from its own
    mistakes). The driver is seeded with ``seed + 3``; ``returns`` are then the driver's game's.
    """
    from meld8_env.features import augment

    check_generate_seed(seed, first + games)
    P = rules.num_players
    search = load_agent(spec, rules, seed)
    opps = [load_agent("defensive", rules, seed + 1), load_agent("greedy", rules, seed + 2)]
    player = load_agent(driver, rules, seed + 3) if driver else None
    if player is not None:
        check_driver(player, driver)
    obs_l, mask_l, act_l, val_l, game_l, ret_l = [], [], [], [], [], []
    done = first
    while done < first + games:
        n = min(batch, first + games - done)
        ids = np.arange(done, done + n, dtype=np.int64)
        recs = start_records(rules, (seed * DEAL_STRIDE + ids).astype(np.uint64))
        me = ids % P  # the search seat, rotated
        # per record: the search seat's reward in each of its steps (a step runs from its decision to its next),
        # and (record, step) of every recorded decision, in the order they were recorded
        step_rewards: list[list[float]] = [[] for _ in range(n)]
        recorded: list[tuple[int, int]] = []
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
                labels = search.act_batch(obs[rows], masks[rows], infosets=infos, **extra)
                if player is None:
                    acts[rows] = labels
                else:
                    more = {"infosets": infos} if wants_infoset(player) else {}
                    played = agent_actions(player, player.act_batch(obs[rows], masks[rows], **more), len(rows))
                    if not masks[rows, played].all():  # the engine ignores an illegal action: the game would stall
                        bad = int(np.flatnonzero(~masks[rows, played])[0])
                        legal = np.flatnonzero(masks[rows[bad]]).tolist()
                        raise ValueError(f"--driver {driver[:80]!r} played action {int(played[bad])}, illegal "
                                         f"under its mask (legal: {legal})")  # fmt: skip
                    acts[rows] = played
                for r in rows.tolist():
                    step_rewards[r].append(0.0)
                keep = [k for k, r in enumerate(rows.tolist()) if masks[r].sum() > 1]
                if keep:
                    kr = rows[keep]
                    recorded += [(int(r), len(step_rewards[r]) - 1) for r in kr.tolist()]
                    obs_l.append(augment(obs[kr], masks[kr], rules))
                    mask_l.append(masks[kr].copy())
                    act_l.append(np.asarray(labels)[keep].astype(np.int64))
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
            step_records(rules, recs, acts, reward="points")
            gained = recs["rewards"][np.arange(n), me]  # this step's reward of the search seat (engine-credited)
            for r in np.flatnonzero(live).tolist():
                if step_rewards[r]:  # nothing is credited before the seat's first decision
                    step_rewards[r][-1] += float(gained[r])
        returns = [discounted_returns(sr, gamma) for sr in step_rewards]
        ret_l.append(np.array([returns[r][k] for r, k in recorded], np.float32))
        done += n
    data = {
        "obs": np.concatenate(obs_l),
        "masks": np.concatenate(mask_l),
        "actions": np.concatenate(act_l),
        "values": np.concatenate(val_l),
        "game": np.concatenate(game_l),
        "returns": np.concatenate(ret_l),
    }
    # games are played in batches, so decisions interleave across games: order them by game (stable in time)
    order = np.argsort(data["game"], kind="stable")
    return {k: v[order] for k, v in data.items()}


def check_driver(agent: object, driver: str) -> None:
    """ValueError in one line unless the agent ``driver`` loaded as decides from what a seat sees, in process: a
    seat-protocol bot (``cmd:``) plays through event streams, and a CHEATING diagnostic reads the true records,
    neither of which ``generate`` hands out."""
    if plays_streams(agent):
        raise ValueError(f"--driver {driver[:80]!r} plays through the seat protocol; give an in-process agent")
    if wants_records(agent):
        raise ValueError(f"--driver {driver[:80]!r} is a CHEATING diagnostic that reads the true records; give an "
                         "honest agent")  # fmt: skip


def generate_parts(
    spec: str,
    games: int,
    seed: int,
    rules: RuleConfig,
    folder: str | Path,
    chunk: int = 64,
    log: Callable[[str], None] = print,
    gamma: float = GAMMA,
    driver: str = "",
) -> list[Path]:
    """Generate games ``0 .. games - 1`` of ``seed`` into ``folder`` one part per ``chunk`` games, skipping
    parts already written by the same teacher and driver with the same discount (a part by another teacher or
    driver, or with other returns, is refused: no mixed data)."""
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma}")
    if spec.partition(":")[0] != "search":  # the teacher's per-candidate values are what a part holds
        raise ValueError(f"--spec must be a search agent (search or search:k=v+...), got {spec[:80]!r}")
    check_generate_seed(seed, games)
    for flag, text in (("--spec", spec), ("--driver", driver)):  # a part stores both; the reader refuses longer
        if len(text) > MAX_SPEC:
            raise ValueError(f"{flag} is {len(text):,} characters, at most {MAX_SPEC:,} (with the paths inside it)")
    if driver:  # checked before any part is made
        agent = load_agent(driver, rules, 0)
        try:
            check_driver(agent, driver)
        finally:
            agent.close()
    folder = creatable_folder(output_path(folder, "--out", PARTS_FOLDER, "folder"), "--out", PARTS_FOLDER)
    paths, t0, made_games, total = [], time.time(), 0, 0
    for first in range(0, games, chunk):
        n = min(chunk, games - first)
        path = part_path(folder, seed, first)
        paths.append(path)
        if path.exists():
            arrays, meta = read_part(path)
            want = {"spec": spec, "seed": seed, "first": first, "games": n, "gamma": gamma, "driver": driver}
            if meta != want:
                why = " (a part made before the returns were recorded: generate into a new folder)"
                raise DistillDataError(
                    f"{path}: holds {meta}, not spec={spec!r} seed={seed} first={first} games={n} gamma={gamma} "
                    f"driver={driver!r}" + (why if meta["gamma"] is None else "")
                )
            total += len(arrays["actions"])
            log(f"{path.name}: already there ({len(arrays['actions'])} decisions), skipped")
            continue
        data = generate(spec, n, seed, rules, batch=chunk, first=first, gamma=gamma, driver=driver)
        save_part(path, data, spec, seed, first, n, gamma, driver)
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


def value_fit(pred: np.ndarray, target: np.ndarray) -> dict[str, float]:
    """How well value predictions (N,) fit Monte-Carlo returns (N,): ``heldout_value_mse`` and
    ``heldout_value_ev``, the explained variance 1 - Var(target - pred) / Var(target) (1 = perfect, 0 = no
    better than a constant, negative = worse); NaN when the returns are missing."""
    from stable_baselines3.common.utils import explained_variance  # SB3's, as its PPO logs it

    if not len(target) or np.isnan(target).any():
        return {"heldout_value_mse": float("nan"), "heldout_value_ev": float("nan")}
    return {
        "heldout_value_mse": float(np.mean((target - pred) ** 2)),
        "heldout_value_ev": float(explained_variance(pred, target)),
    }


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
    value_coef: float = 0.0,
    context: str = "",
) -> tuple:
    """(policy, metadata, curve): the network of ``init`` trained on ``data`` (cross-entropy of the masked
    policy against :func:`soft_targets`, plus ``value_coef`` times the squared error of its value head against
    the Monte-Carlo returns), and per epoch (0 = before training) the held-out agreement of its deterministic
    action with the search's action, the held-out log-loss of the search's action, the regret by the search's
    values, the value head's fit to the returns (:func:`value_fit`), and the mean training loss.
    ``value_coef=0`` leaves the value head's weights alone. ``context`` (``agents.checkpoint.CONTEXTS``; ``""``:
    the init's own) gives a ``card_heads`` init the inputs it names (:func:`with_context`). Deterministic under
    ``seed`` (torch and the shuffles are seeded)."""
    import torch

    from agents.networks import load_policy

    obs, masks, acts, returns = data["obs"], data["masks"], data["actions"], data["returns"]
    if value_coef > 0 and np.isnan(returns).any():
        raise ValueError(
            f"value_coef > 0 needs Monte-Carlo returns, and {int(np.isnan(returns).sum())} decisions have none "
            "(parts made before they were recorded): regenerate them, or train with value_coef 0"
        )
    policy, meta = load_policy(init, rules)
    if context:
        policy, meta = with_context(policy, meta, context, rules)
    target = soft_targets(acts, data["values"], soft, temp)
    train_idx, val_idx = heldout_split(data)
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)  # with value_coef 0 the value head gets no gradient

    def heldout() -> dict[str, float]:
        policy.set_training_mode(False)
        picks, vals, nll = [], [], 0.0
        with torch.no_grad():
            for start in range(0, len(val_idx), 4096):
                b = val_idx[start : start + 4096]
                x = torch.as_tensor(obs[b], dtype=torch.float32)
                dist = policy.get_distribution(x, action_masks=masks[b])
                picks.append(dist.get_actions(deterministic=True).numpy())
                nll -= float(dist.log_prob(torch.as_tensor(acts[b])).sum())
                vals.append(policy.predict_values(x).numpy().ravel())
        pick = np.concatenate(picks)
        return {
            "heldout_agreement": float((pick == acts[val_idx]).mean()),
            "heldout_nll": nll / len(val_idx),
            **value_regret(pick, data["values"][val_idx]),
            **value_fit(np.concatenate(vals), returns[val_idx]),
        }

    curve = [{"epoch": 0, **heldout(), "train_loss": None}]
    for epoch in range(1, epochs + 1):
        policy.set_training_mode(True)
        rng.shuffle(train_idx)
        total = 0.0
        for start in range(0, len(train_idx), batch):
            b = train_idx[start : start + batch]
            x = torch.as_tensor(obs[b], dtype=torch.float32)
            dist = policy.get_distribution(x, action_masks=masks[b])
            logp = torch.log_softmax(dist.distribution.logits, dim=-1)  # masked: illegal logits are -1e8
            loss = -(torch.as_tensor(target[b]) * logp).sum(dim=-1).mean()
            if value_coef > 0:
                err = policy.predict_values(x).squeeze(-1) - torch.as_tensor(returns[b])
                loss = loss + value_coef * (err**2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(b)
        curve.append({"epoch": epoch, **heldout(), "train_loss": total / len(train_idx)})
    policy.set_training_mode(False)
    return policy, meta, curve


def check_context(meta: dict, context: str) -> None:
    """ValueError in one line unless an init with metadata ``meta`` can be given the input context ``context``
    (``agents.checkpoint.CONTEXTS``): a ``card_heads`` network without a context, or with this one already."""
    if context not in CONTEXTS:
        raise ValueError(f"--context must be one of {', '.join(CONTEXTS)}, got {context!r}")
    if meta.get("network") != "card_heads":
        raise ValueError(f"--context needs a card_heads init, this one is {meta.get('network')!r}")
    have = meta.get("context")
    if have and have != context:
        raise ValueError(f"--context {context}: the init already reads the context {have!r}")


def with_context(policy, meta: dict, context: str, rules: RuleConfig) -> tuple:
    """(policy, metadata) of a ``card_heads`` network given the input context ``context``
    (``agents.checkpoint.CONTEXTS``): the same network with its trunk's first layer widened by the context's
    columns, their weights zero, so it decides exactly as before until it is trained. An init that already
    has this context is returned as it is; one with another context, or another network, is refused."""
    import torch

    from agents.networks import build_policy

    check_context(meta, context)
    if meta.get("context") == context:
        return policy, meta
    meta = {**meta, "context": context}
    wide = build_policy(meta, rules)
    old, new = policy.state_dict(), wide.state_dict()
    if old.keys() != new.keys():
        raise ValueError("--context: the widened network's layers are not the init's")  # a bug, never the user's
    state = {}
    for name, w in old.items():
        if w.shape == new[name].shape:
            state[name] = w
        else:  # the trunk's first layer: the context's columns come after the observation's, at zero
            pad = torch.zeros(w.shape[0], new[name].shape[1] - w.shape[1], dtype=w.dtype)
            state[name] = torch.cat([w, pad], dim=1)
    wide.load_state_dict(state)
    wide.set_training_mode(False)
    return wide, meta


def plot_curve(curve: list[dict], path: Path, title: str, target: str = "the search") -> Path:
    """The learning curve PNG: held-out agreement with the labels' source ``target``, log-loss, regret by the
    search's values and the value head's explained variance of the returns, by epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ep = [c["epoch"] for c in curve]
    fig, (a, b, c3, c4) = plt.subplots(1, 4, figsize=(18, 4))
    a.plot(ep, [c["heldout_agreement"] for c in curve], marker="o")
    a.set_title(f"held-out agreement with {target} (higher is better)")
    a.set_xlabel("epoch (0 = the init checkpoint)")
    b.plot(ep, [c["heldout_nll"] for c in curve], marker="o", label="held-out")
    b.plot(ep[1:], [c["train_loss"] for c in curve[1:]], marker="x", label="train (vs its targets)")
    b.set_title(f"log-loss of the labels ({target})")
    b.set_xlabel("epoch")
    b.legend()
    c3.plot(ep, [c["heldout_regret"] for c in curve], marker="o")
    c3.set_title("held-out regret by the search's values (placement)")
    c3.set_xlabel("epoch")
    c4.plot(ep, [c["heldout_value_ev"] for c in curve], marker="o")
    c4.set_title("value head: explained variance of the returns")
    c4.set_xlabel("epoch")
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


MIN_TEMP = 1e-4  # placement units: values / temp must stay finite in the soft targets' softmax


@dataclass(frozen=True)
class TrainSettings:
    """The ``train`` options (``iterate`` passes the same to every round)."""

    epochs: int = 4
    lr: float = 3e-4
    batch: int = 512
    soft: float = 0.0
    temp: float = 0.1
    seed: int = 0
    value_coef: float = 0.0
    context: str = ""

    @classmethod
    def of(cls, args: argparse.Namespace) -> TrainSettings:
        return cls(args.epochs, args.lr, args.batch, args.soft, args.temp, args.train_seed, args.value_coef,
                   args.context)  # fmt: skip

    def check(self) -> None:
        """ValueError in one line on a setting out of range."""
        if self.epochs < 0 or self.batch < 1:
            raise ValueError(f"need --epochs >= 0 and --batch >= 1, got {self.epochs} and {self.batch}")
        # floats are read by float(): inf, nan and 1e-320 used to pass and end the training in a torch dump of NaN
        # logits that named no flag (red team, session 33)
        floats = {"--lr": (self.lr, 1e-8, 1.0), "--soft": (self.soft, 0.0, 1.0), "--temp": (self.temp, MIN_TEMP, 1e3),
                  "--value-coef": (self.value_coef, 0.0, 1e3)}  # fmt: skip
        for flag, (v, lo, hi) in floats.items():
            if not lo <= v <= hi:
                raise ValueError(f"{flag} must be a number in [{lo:g}, {hi:g}], got {v}")
        check_seed(self.seed, "the training's seed (train --seed, iterate --train-seed)")  # torch's words named none


def own_actions(init: str, rules: RuleConfig, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(n,) the deterministic action of the network ``init`` on each stored decision (the CONTROL labels)."""
    import torch

    from agents.networks import load_policy

    policy, _ = load_policy(init, rules)
    policy.set_training_mode(False)
    out = []
    with torch.no_grad():
        for a in range(0, len(obs), 4096):
            x = torch.as_tensor(obs[a : a + 4096], dtype=torch.float32)
            out.append(policy.get_distribution(x, action_masks=masks[a : a + 4096]).get_actions(deterministic=True))
    return np.concatenate([o.numpy() for o in out]).astype(np.int64)


def train_checkpoint(
    inputs: list[str],
    init: str,
    out: str | Path,
    rules: RuleConfig,
    ts: TrainSettings,
    command: str,
    log=print,
    labels: str = "teacher",
) -> list[dict]:
    """``train``: the checkpoint ``out`` (and its learning curve beside it) trained from ``init`` on the parts
    ``inputs`` (DistillDataError on data that cannot be trained on); returns the per-epoch curve.
    ``labels="own"`` is the CONTROL of a distillation: the same states and training, but every label replaced
    by ``init``'s own deterministic action, so what training alone does to the network (fine-tuning a flat PPO
    policy on its own choices still changes about a tenth of them) is told apart from what the teacher teaches."""
    if labels not in ("teacher", "own"):
        raise ValueError(f"--labels must be teacher or own, got {labels!r}")
    out = output_path(out, "--out", NEW_CHECKPOINT, "file")  # never overwritten: --out named its own --init once
    if out.suffix != ".zip":
        raise ValueError(f"--out {out}: name a .zip (the checkpoint)")
    creatable_folder(out.parent, "--out", NEW_CHECKPOINT)  # before the training, not when its curve is written
    if labels == "own" and ts.soft > 0:
        raise ValueError("--labels own replaces the teacher's choices; its values would still leak in with --soft > 0")
    init_meta = read_metadata(init)  # a missing or foreign --init in one line, before the data is read
    width = int(init_meta["obs_size"])
    if ts.context:
        check_context(init_meta, ts.context)
    data, info = load_data(inputs)
    if data["obs"].shape[1] != width:  # red team, session 32: a torch shape error from deep inside training
        raise DistillDataError(
            f"the parts hold observations of {data['obs'].shape[1]} values, {init} reads {width}: they were not made "
            "for this network (generate them again, or train another --init)"
        )
    if labels == "own":
        own = own_actions(init, rules, data["obs"], data["masks"])
        log(f"labels: {init}'s own actions (CONTROL); the teacher's agree on {(own == data['actions']).mean():.3f}")
        data = {**data, "actions": own}
    if ts.value_coef > 0 and info["without_returns"]:
        raise DistillDataError(
            f"--value-coef needs Monte-Carlo returns; {len(info['without_returns'])} parts have none (made before "
            f"they were recorded), e.g. {info['without_returns'][0]}: regenerate them or use --value-coef 0"
        )
    t0 = time.time()
    policy, meta, curve = train(data, init, rules, ts.epochs, ts.lr, ts.seed, ts.soft, ts.temp, ts.batch, ts.value_coef,
                                ts.context)  # fmt: skip
    source = "the search" if labels == "teacher" else "the init's own actions (CONTROL)"
    png = plot_curve(curve, out.with_name(out.stem + "_learning_curve.png"),
                     f"{out.name}: {info['decisions']} decisions of {info['spec']}, soft={ts.soft}, labels: {source}",
                     source)  # fmt: skip
    extra = {
        "distilled_from": info["spec"] if labels == "teacher" else f"CONTROL: own labels on {info['spec']}'s states",
        "labels": labels,
        "init": Path(init).name,
        "init_sha256": file_sha256(Path(init)),
        "data": {
            "decisions": info["decisions"],
            "games_by_seed": {str(k): v for k, v in info["seeds"].items()},
            "opponents": ["defensive", "greedy"],
            "returns_gamma": info["gamma"],
            "drivers": {str(k): v for k, v in info["drivers"].items()},
        },
        "train": {
            "epochs": ts.epochs,
            "lr": ts.lr,
            "batch": ts.batch,
            "soft": ts.soft,
            "temp": ts.temp,
            "value_coef": ts.value_coef,
            "context": ts.context,
            "seed": ts.seed,
            "seconds": round(time.time() - t0),
        },
        "command": "python -m training.distill " + command,
        "curve": curve,
        "learning_curve": png.name,
    }
    save(policy, meta, init, out, extra)
    for c in curve:
        log(f"epoch {c['epoch']}: held-out agreement {c['heldout_agreement']:.4f}, log-loss "
            f"{c['heldout_nll']:.4f}, regret {c['heldout_regret']:.4f}, off candidates "
            f"{c['heldout_off_candidates']:.3f}, value EV {c['heldout_value_ev']:.3f}")  # fmt: skip
    log(f"{out}: {info['decisions']} decisions of {info['spec']}; curve {png}")
    return curve


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file's bytes (a checkpoint's identity, whatever its name or place)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def round_mismatch(meta: dict, teacher: str, games: int, seed: int, gamma: float, ts: TrainSettings, init: Path) -> str:
    """Why a finished round's checkpoint (its metadata ``meta``) was not made by this round's settings; ``""`` when
    it was: the same teacher, games and seed, returns' discount, training settings and init network (by hash)."""
    data, train = meta.get("data", {}), meta.get("train", {})
    want = {
        "teacher": (meta.get("distilled_from"), teacher),
        "games_by_seed": (data.get("games_by_seed"), {str(seed): games}),
        "gamma": (data.get("returns_gamma"), gamma),
        "init (sha256)": (meta.get("init_sha256"), file_sha256(init)),
    }
    for key in ("epochs", "lr", "batch", "soft", "temp", "value_coef", "seed"):
        want[f"train {key}"] = (train.get(key), getattr(ts, key))
    want["train context"] = (train.get("context", ""), ts.context)  # rounds made before the option: none
    return "; ".join(f"{k} {got!r}, not {need!r}" for k, (got, need) in want.items() if got != need)


def teacher_spec(spec: str, net: Path) -> str:
    """The search ``spec`` with the network ``net`` as its prior and the choice it keeps (``keep=prior``)."""
    name, _, options = spec.partition(":")
    if name != "search":
        raise ValueError(f"iterate needs a search teacher (search or search:k=v+...), got {spec!r}")
    if any(k in options for k in ("prior=", "keep=")):
        raise ValueError(f"iterate sets the teacher's prior and keep itself; drop them from {spec!r}")
    if any(c in str(net) for c in ",+"):
        raise ValueError(f"{net}: a network path inside a search spec may hold neither ',' nor '+'")
    extra = f"prior=ppo:{net}+keep=prior"
    return f"search:{options.replace(',', '+')}+{extra}" if options else f"search:{extra}"


def _round_number(ckpt: Path) -> int:
    """N of ``.../roundN/net.zip`` (0 for a folder not named so)."""
    tail = ckpt.parent.name[len("round") :]
    return int(tail) if tail.isdigit() else 0


def iterate(
    spec: str,
    rounds: int,
    games: int,
    seed: int,
    init: Path,
    out: str | Path,
    rules: RuleConfig,
    ts: TrainSettings,
    chunk: int = 64,
    gamma: float = GAMMA,
    log=print,
    command: str = "",
) -> list[Path]:
    """Expert iteration: round r (1..rounds) generates ``games`` games of seed ``seed + r - 1`` with the search
    whose prior is the last round's network and which keeps that network's choice unless its paired gain from the
    rollouts exceeds the margin (margin/10 = 0.5 standard errors by default; :func:`teacher_spec`), into
    ``out/round{r}/data``, then trains that network on them into ``out/round{r}/net.zip``. Rerunning resumes: a
    round whose checkpoint exists is skipped when it was made by the same settings (:func:`round_mismatch`) and
    refused otherwise (so is one made before the init's hash was recorded, and a finished round after a missing
    one, whose init would change), and a round's parts resume as ``generate``'s do. Every check on the arguments
    (the teacher spec, the paths that go inside it, the init) and on the finished rounds runs before anything is
    written. ``command`` (the iterate command line) is stored in each round's checkpoint with its round number
    as a shell comment. Returns each round's checkpoint."""
    if not 1 <= rounds <= MAX_ROUNDS:
        raise ValueError(f"--rounds must be 1..{MAX_ROUNDS:,}, got {rounds:,}")
    check_generate_seed(seed, games)
    check_generate_seed(
        seed + rounds - 1, games, f"--seed + --rounds - 1 = {seed + rounds - 1} (the last round's seed)"
    )
    ts.check()
    out = creatable_folder(output_path(out, "--out", ROUNDS_FOLDER, "folder"), "--out", ROUNDS_FOLDER)
    net = Path(init).resolve()
    # CheckpointError in one line on a missing or foreign init, before anything is written
    init_meta = read_metadata(net)
    if ts.context:
        check_context(init_meta, ts.context)
    ckpts = [out.resolve() / f"round{r}" / "net.zip" for r in range(1, rounds + 1)]
    teachers = [teacher_spec(spec, prior) for prior in [net, *ckpts[:-1]]]  # a ',' or '+' in --out fails here
    done = [c.exists() for c in ckpts]
    # rounds past --rounds count too: rerunning a missing round would change their init just the same
    beyond = sorted(p for p in out.resolve().glob("round*/net.zip") if _round_number(p) > rounds)
    if not all(done) and (any(done[done.index(False) :]) or beyond):
        gap = done.index(False)
        later = next((c for c, d in zip(ckpts[gap:], done[gap:], strict=True) if d), beyond[0] if beyond else None)
        raise DistillDataError(f"{later}: round {gap + 1} ({ckpts[gap]}) is missing, and rerunning it would "
                               "change this later round's init; delete the later rounds")  # fmt: skip
    for r, (teacher, ckpt, prior) in enumerate(zip(teachers, ckpts, [net, *ckpts[:-1]], strict=True), start=1):
        if not done[r - 1]:
            break  # the finished rounds are a prefix (checked above), each checked before any round writes
        meta = read_metadata(ckpt)
        if "init_sha256" not in meta:
            raise DistillDataError(f"{ckpt}: has no init_sha256 (made before iterate recorded its init network's "
                                   "hash, or not by iterate), so it cannot be checked against this run; use another "
                                   "--out or delete it")  # fmt: skip
        why = round_mismatch(meta, teacher, games, seed + r - 1, gamma, ts, prior)
        if why:
            raise DistillDataError(f"{ckpt}: made with other settings ({why}); use another --out or delete it")
    nets = []
    for r, (teacher, ckpt) in enumerate(zip(teachers, ckpts, strict=True), start=1):
        folder = ckpt.parent / "data"
        if done[r - 1]:
            log(f"round {r}: {ckpt} already there, skipped")
        else:
            log(f"round {r}: teacher {teacher}")
            # the parts of this run only: a folder left by a cut-short run with more --games holds extra parts
            parts = generate_parts(teacher, games, seed + r - 1, rules, folder, chunk, log=log, gamma=gamma)
            train_checkpoint([str(p) for p in parts], str(net), ckpt, rules, ts, f"{command}  # round {r} of {rounds}",
                             log=log)  # fmt: skip
        nets.append(ckpt)
        net = ckpt
    return nets


def _train_options(t: argparse.ArgumentParser, seed_flag: str = "--seed") -> None:
    t.add_argument("--epochs", type=int, default=4, help="passes over the training games")
    t.add_argument("--lr", type=float, default=3e-4, help="Adam's learning rate")
    t.add_argument("--batch", type=int, default=512, help="decisions per minibatch")
    t.add_argument("--soft", type=float, default=0.0, help="weight of the softmax of the search's values (0..1)")
    t.add_argument(
        "--temp", type=float, default=0.1, help=f"softmax temperature in placement units ({MIN_TEMP:g}..1000)"
    )
    t.add_argument(seed_flag, dest="train_seed", metavar="SEED", type=int, default=0,
                   help="seed of the training (torch, shuffles)")  # fmt: skip
    t.add_argument("--value-coef", type=float, default=0.0,
                   help="weight of the value head's squared error against the returns (0: untouched)")  # fmt: skip
    t.add_argument("--context", choices=("", *CONTEXTS), default="",
                   help="scores: the trunk also reads the score situation linearly (agents.card_net.ScoreContext); "
                   "a card_heads init without it is widened with zero weights")  # fmt: skip


def init_checkpoint_path(value: str | None) -> Path:
    """``--init``: a checkpoint file, ``ppo:PATH``, or the name of a shipped network (``ppo``, ``distilled``; the
    names every agent spec takes: they were "checkpoint not found: ppo" here, session 46); None: the shipped ppo."""
    if value is None:
        return shipped_baseline()
    return Path(checkpoint_path(value) or value)  # a path without .zip names no checkpoint spec: taken as given


def _fail(cmd: str, message: str, code: int = 2) -> NoReturn:
    """One line on stderr and the exit status (the command's usage is in ``--help``, not before every error)."""
    print(f"{PROG} {cmd}: {'error: ' if code == 2 else ''}{one_line(message)}", file=sys.stderr)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    defaults = argparse.ArgumentDefaultsHelpFormatter
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0], formatter_class=defaults)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="play games with the teacher, write a folder of parts (resumable)",
                       formatter_class=defaults)  # fmt: skip
    g.add_argument("--spec", default="search", help="the teacher: a search agent spec (search:OPT=V+OPT=V)")
    g.add_argument("--games", type=int, default=100, help="games to play and record")
    g.add_argument("--seed", type=int, default=31, help="seed of the games")
    g.add_argument("--chunk", type=int, default=64, help="games per part file (and per batch)")
    g.add_argument("--out", required=True, help="folder of part files; rerunning the command resumes")
    g.add_argument("--gamma", type=float, default=GAMMA, help="discount of the recorded returns, per decision")
    g.add_argument("--driver", default="", help="agent spec that plays the seat while the search labels every "
                   "decision (default: the search itself; a network here gives DAgger's data)")  # fmt: skip
    t = sub.add_parser("train", help="train a checkpoint on generated parts (files and/or folders, merged)",
                       formatter_class=defaults)  # fmt: skip
    t.add_argument("--data", required=True, nargs="+", help="part files or folders of them (one teacher)")
    t.add_argument("--init", default=None, help="checkpoint to start from: a .zip, or ppo / distilled (the shipped "
                   "networks); default: the shipped ppo")  # fmt: skip
    _train_options(t)
    t.add_argument("--labels", choices=("teacher", "own"), default="teacher",
                   help="own: a CONTROL, the init network's own actions as labels on the same states")  # fmt: skip
    t.add_argument("--out", required=True, help="a new checkpoint zip (never overwritten); the curve goes beside it")
    it = sub.add_parser("iterate", help="expert iteration: generate with the network inside the search, train, repeat",
                        formatter_class=defaults)  # fmt: skip
    it.add_argument("--spec", default="search", help="the search teacher; each round adds prior=ppo:NET+keep=prior")
    it.add_argument("--rounds", type=int, default=2, help="rounds of generate + train (>= 1)")
    it.add_argument("--games", type=int, default=500, help="games per round")
    it.add_argument("--seed", type=int, default=201, help="round r plays the games of seed SEED + r - 1")
    it.add_argument("--chunk", type=int, default=64, help="games per part file (and per batch)")
    it.add_argument("--gamma", type=float, default=GAMMA, help="discount of the recorded returns, per decision")
    it.add_argument("--init", default=None, help="the first round's network: a .zip, or ppo / distilled; default: "
                    "the shipped ppo")  # fmt: skip
    _train_options(it, "--train-seed")
    it.add_argument("--out", required=True, help="folder: round{r}/data and round{r}/net.zip; rerunning resumes")
    args = ap.parse_args(argv)
    try:
        _run(args, argv)
    except (ValueError, OSError) as exc:  # DistillDataError, CheckpointError, a spec that does not load, a full disk
        where = f": {exc.filename}" if isinstance(exc, OSError) and exc.filename else ""
        _fail(args.cmd, str(exc) if isinstance(exc, ValueError) else f"{exc.strerror or exc}{where}")
    except KeyboardInterrupt:
        kept = {
            "generate": f"the part files written so far are kept in {args.out}: rerun the same command to go on",
            "iterate": f"the rounds' files written so far are kept in {args.out}: rerun the same command to go on",
            # --out is refused when it exists, so one there now was written by this run, before the Ctrl-C: it was
            # said to be missing (session 46)
            "train": f"{args.out} was written before the interrupt and is kept"
            if args.cmd == "train" and Path(args.out).is_file()
            else f"no checkpoint was written to {args.out}",
        }[args.cmd]
        _fail(args.cmd, f"interrupted: {kept}", 130)


def _run(args: argparse.Namespace, argv: list[str] | None) -> None:
    rules = RuleConfig()
    command = shlex.join(sys.argv[1:] if argv is None else argv)  # pastes back into a shell
    if args.cmd in ("generate", "iterate"):
        if args.games < 1 or args.chunk < 1:
            raise ValueError(f"--games and --chunk must be >= 1, got {args.games} and {args.chunk}")
        if not 0 < args.gamma <= 1:
            raise ValueError(f"--gamma must be in (0, 1], got {args.gamma}")
    if args.cmd == "iterate" and args.games < 2:  # checked before any round writes: training holds out 5 % of games
        raise ValueError(f"--games must be >= 2 for iterate (each round trains with held-out games), got {args.games}")
    if args.cmd == "generate":
        t0 = time.time()
        paths = generate_parts(args.spec, args.games, args.seed, rules, args.out, args.chunk, gamma=args.gamma,
                               driver=args.driver)  # fmt: skip
        print(f"{args.out}: {len(paths)} parts, {args.games} games of seed {args.seed} in {time.time() - t0:.0f} s")
        return
    settings = TrainSettings.of(args)
    settings.check()
    init = str(init_checkpoint_path(args.init))
    if args.cmd == "iterate":
        nets = iterate(args.spec, args.rounds, args.games, args.seed, Path(init), args.out, rules, settings,
                       args.chunk, args.gamma, command=command)  # fmt: skip
        print(f"{args.out}: {len(nets)} rounds; the last network {nets[-1]} (play it as ppo:{nets[-1]})")
        return
    train_checkpoint(args.data, init, args.out, rules, settings, command, labels=args.labels)


if __name__ == "__main__":
    main()
