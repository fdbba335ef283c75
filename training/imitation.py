"""Behaviour-cloning warm start: teach a MaskablePPO policy a bot's choices before PPO takes over.

``collect(teacher, n, rules, seed, features)`` plays batched games with ``teacher`` in every seat and
records its decisions wherever more than one action was legal: observations ``uint8[n, D]`` (with the
look-ahead features when ``features``), masks ``bool[n, 64]`` and the teacher's actions ``int64[n]``.
``pretrain(model, data, epochs, batch_size, lr)`` minimises the cross-entropy of the masked policy
against those actions and returns the share of held-out decisions (the last 5 %) where the policy's
most likely action equals the teacher's. The value head is left to PPO.

Both take ``stop`` (a callable, e.g. ``training.stop_request.StopRequest``): polled before each step of
the games and each minibatch, they raise ``StopRequested`` as soon as it returns True, with their progress
bars closed (so nothing is drawn after the trainer's last line).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from meld8_env.agent import as_agent
from meld8_env.features import augment
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector
from training.stop_request import check_stop


def collect(
    teacher,
    n: int,
    rules: RuleConfig,
    seed: int = 0,
    features: bool = True,
    n_games: int = 512,
    progress: bool = False,
    stop: Callable[[], bool] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    teacher = as_agent(teacher)
    teacher.setup(rules)
    v = Meld8Vector(n_games, rules=rules, seed=seed)
    v.reset(seed=seed)
    obs, masks, acts = [], [], []
    have = 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n, unit="decision", desc=f"demonstrations ({teacher.name})", dynamic_ncols=True)
    try:
        while have < n:
            check_stop(stop, "collecting demonstrations")
            m = v.action_mask
            a = teacher.act_batch(v.observation, m)
            keep = np.flatnonzero(m.sum(axis=1) > 1)
            if keep.size:
                o = v.observation[keep]
                obs.append(augment(o, m[keep], rules) if features else o.copy())
                masks.append(m[keep].copy())
                acts.append(np.asarray(a)[keep].copy())
                have += keep.size
                if bar is not None:
                    bar.update(keep.size)
            v.step(a)
    finally:
        if bar is not None:
            bar.close()
        v.close()
    return np.concatenate(obs)[:n], np.concatenate(masks)[:n], np.concatenate(acts)[:n]


def pretrain(
    model, data: tuple[np.ndarray, np.ndarray, np.ndarray], epochs: int = 3, batch_size: int = 4096,
    lr: float = 1e-3, seed: int = 0, progress: bool = False, stop: Callable[[], bool] | None = None,
) -> float:  # fmt: skip
    import torch

    obs, masks, acts = data
    n_val = max(1, len(obs) // 20)
    policy = model.policy
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    train_idx = np.arange(len(obs) - n_val)
    policy.set_training_mode(True)
    bar = None
    if progress:
        from tqdm import tqdm

        steps = epochs * -(-len(train_idx) // batch_size)
        bar = tqdm(total=steps, unit="batch", desc="behaviour cloning", dynamic_ncols=True)
    try:
        for _ in range(epochs):
            rng.shuffle(train_idx)
            for start in range(0, len(train_idx), batch_size):
                check_stop(stop, "behaviour cloning")  # between two optimiser steps: the weights are whole
                b = train_idx[start : start + batch_size]
                o = torch.as_tensor(obs[b], dtype=torch.float32)
                dist = policy.get_distribution(o, action_masks=masks[b])
                loss = -dist.log_prob(torch.as_tensor(acts[b])).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    finally:
        if bar is not None:
            bar.close()
        policy.set_training_mode(False)
    with torch.no_grad():
        o = torch.as_tensor(obs[-n_val:], dtype=torch.float32)
        pred = policy.get_distribution(o, action_masks=masks[-n_val:]).get_actions(deterministic=True).numpy()
    return float((pred == acts[-n_val:]).mean())
