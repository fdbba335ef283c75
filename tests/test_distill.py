"""Distillation pipeline (training/distill.py): search decisions with values -> a loadable card-head agent."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from meld8_env.rules import RuleConfig

pytest.importorskip("sb3_contrib")
RULES = RuleConfig()


def test_generate_then_train_gives_a_checkpoint_that_loads_and_plays(tmp_path):
    from agents.registry import load_agent, shipped_baseline
    from training.distill import generate, save, train

    data = generate("search:worlds=2+cands=2+stages=1", 1, 3, RULES)
    n = len(data["actions"])
    assert n > 10 and data["obs"].shape[0] == n and data["masks"][np.arange(n), data["actions"]].all()
    # the chosen action is one of the searched candidates whenever the decision was searched
    searched = ~np.isnan(data["values"]).all(axis=1)
    assert searched.any()
    assert (~np.isnan(data["values"][searched, data["actions"][searched]])).all()
    policy, meta, curve = train(data, str(shipped_baseline()), RULES, epochs=1, lr=1e-4, seed=0)
    assert len(curve) == 2 and all(0 <= x <= 1 for x in curve)
    out = tmp_path / "distilled.zip"
    save(policy, meta, str(shipped_baseline()), out, {"distilled_from": "test", "heldout_agreement": curve})
    with zipfile.ZipFile(out) as z:
        assert json.loads(z.read("meld8.json"))["distilled_from"] == "test"
    agent = load_agent(f"ppo:{out}", RULES)
    from meld8_env.engine.records import observe_records, start_records

    obs, masks = observe_records(RULES, start_records(RULES, np.arange(4, dtype=np.uint64)))
    acts = agent.act_batch(obs, masks)
    assert masks[np.arange(4), acts].all()
