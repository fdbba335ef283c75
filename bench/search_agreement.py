"""How often two deciders choose the same action: the ceiling on imitating a search.

Usage: ``python bench/search_agreement.py [--states N] [--seed 11] [--agent-seeds 1,2] SPEC...``

A distilled network is scored by its agreement with the search's action on held-out decisions (0.66-0.70 in every
distillation so far, ``training.distill``). How high could it go? The search's choice depends on its sampled
worlds, so between two near-equal candidates it is partly a coin flip that no observation can predict. This bench
measures that ceiling directly: every SPEC decides the same states (``bench/search_speed.states``: decisions with
more than one legal action from games of ``greedy`` vs ``defensive``, honest information sets only) once per
agent seed, and the table gives the share of states on which each pair of (spec, seed) deciders agree, overall and
for discards / claims (the claim phase: Pon, Chii or pass). Two runs of a search agree at A = the mean of
the summed squared choice probabilities. A student playing the search's most likely choice agrees with one run at
the mean largest probability, which lies between A and about sqrt(A). So A is a floor on the best achievable
agreement, and sqrt(A) is roughly its ceiling. Only specs starting with ``search`` are decided under every seed. The
regret intervals are unpaired, so they cannot rank close deciders.

Rows: ``spec@seed``. Columns: the same. Deterministic given the seeds. Prints the states' count and the median CPU
ms per decision of each decider.

A second table scores choices by a search run's own per-candidate values, the way ``training.distill`` scores a
student on held-out data (its "regret" and "off candidates"): for each search decider J and every other decider
B, the mean over the states J searched of (J's best value - J's value of B's choice), over the states where B's
choice is one of J's candidates, and the share where it is not. J's values are noisy, so even a perfect copy of
the search's *expected* choice has a positive regret by them; another seed of the same search measures that floor.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from search_regret import choices_and_values, parse_agent_seeds  # noqa: E402
from search_speed import states as decision_states  # noqa: E402

from agents.registry import load_agent  # noqa: E402
from meld8_env.actions import PASS  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402


def agreement(a: np.ndarray, b: np.ndarray, keep: np.ndarray) -> str:
    """Share of the ``keep`` states where ``a`` and ``b`` chose the same action, with a 95 % normal interval."""
    same = (a[keep] == b[keep]).astype(float)
    if len(same) == 0:
        return "-"
    half = 1.96 * same.std(ddof=1) / np.sqrt(len(same)) if len(same) > 1 else float("nan")
    return f"{same.mean():.3f} ±{half:.3f}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+", help="agent specs (search:..., ppo:PATH.zip, greedy, ...)")
    ap.add_argument("--states", type=int, default=400, help="decision states (each with a choice)")
    ap.add_argument("--seed", type=int, default=11, help="seed of the bot games the states come from")
    ap.add_argument("--agent-seeds", default="1,2", help="each spec decides once per seed (comma-separated)")
    a = ap.parse_args(argv)
    try:
        seeds = parse_agent_seeds(a.agent_seeds)
    except ValueError as e:
        ap.error(str(e))
    if a.states < 2:
        ap.error(f"--states must be >= 2, got {a.states}")
    rules = RuleConfig()
    for spec in a.specs:  # a bad spec fails in one line before any state is decided
        try:
            load_agent(spec, rules, seed=seeds[0])
        except ValueError as e:
            ap.error(str(e))
    recs = decision_states(rules, a.states, a.seed)  # each with more than one legal action
    claim = np.array([int(m) >> PASS & 1 for m in recs["mask"]], bool)
    everything = np.ones(len(recs), bool)
    print(f"{len(recs)} decision states with a choice (bot games of seed {a.seed}): "
          f"{int((~claim).sum())} discards, {int(claim.sum())} claims")  # fmt: skip
    deciders: dict[str, np.ndarray] = {}
    judges: dict[str, list[dict[int, float]]] = {}
    for spec in a.specs:
        # a deterministic spec (no worlds) decides the same under every seed: once is enough
        for s in seeds if spec.startswith("search") else seeds[:1]:
            acts, ms, values, _ = choices_and_values(spec, rules, recs, s)
            deciders[f"{spec}@{s}"] = acts
            if any(values):
                judges[f"{spec}@{s}"] = values
            print(f"{spec}@{s}: {ms:.1f} CPU ms / decision", file=sys.stderr, flush=True)
    print("\n| decider A | decider B | all | discards | claims |\n|---|---|---:|---:|---:|")
    for (na, a_), (nb, b_) in itertools.combinations(deciders.items(), 2):
        print(f"| {na} | {nb} | {agreement(a_, b_, everything)} | {agreement(a_, b_, ~claim)} | "
              f"{agreement(a_, b_, claim)} |")  # fmt: skip
    print("\n| judge (its values) | decider | regret by the judge's values (95 %) | off the judge's candidates |")
    print("|---|---|---:|---:|")
    for nj, values in judges.items():
        for nb, acts in deciders.items():
            r, off = regret_by(values, acts)
            print(f"| {nj} | {nb} | {r} | {off} |")


def regret_by(values: list[dict[int, float]], acts: np.ndarray) -> tuple[str, str]:
    """(mean regret with a 95 % interval, share off the candidates) of ``acts`` by per-state candidate values,
    over the states that have values (a searched decision)."""
    reg, off, seen = [], 0, 0
    for vals, act in zip(values, acts.tolist(), strict=True):
        if len(vals) < 2:
            continue
        seen += 1
        if act in vals:
            reg.append(max(vals.values()) - vals[act])
        else:
            off += 1
    if len(reg) < 2:
        return "-", "-"
    r = np.array(reg)
    return f"{r.mean():.4f} ±{1.96 * r.std(ddof=1) / np.sqrt(len(r)):.4f}", f"{off / seen:.3f}"


if __name__ == "__main__":
    main()
