"""Belief sampler speed: the C core against its numpy twin, on the same information sets, in one run.

Usage: ``python bench/belief_speed.py [--states 300] [--worlds 16 64] [--repeats 3] [--seed 3]``

Information sets: decisions with a choice from games of ``greedy`` vs ``defensive`` (``bench/search_speed``).
Rows (markdown, ``bench/ab.py`` reads them): the median over repeats of the mean microseconds per
``sample_worlds`` call (two_level), for the C core (``meld8_env._belief``) and for the numpy twin
(``belief.sample_worlds`` with the core switched off), per world count; and the ratio. Both give the same
worlds (``tests/test_belief_core.py``), so the rows compare speed only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from search_speed import states as decision_states  # noqa: E402

from agents import search_backend as sb  # noqa: E402
from meld8_env import belief  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402


def per_call_us(infos: list, n: int, core: bool, rules: RuleConfig) -> float:
    saved = belief._core
    if not core:
        belief._core = None  # the twin: the same function with the core switched off
    try:
        rng = np.random.default_rng(0)
        t = time.perf_counter()
        for info in infos:
            belief.sample_worlds(info, n, rng, "two_level", rules)
        return 1e6 * (time.perf_counter() - t) / len(infos)
    finally:
        belief._core = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=300)
    ap.add_argument("--worlds", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=3)
    a = ap.parse_args()
    rules = RuleConfig()
    if belief._core is None:
        sys.exit("belief_speed: the C core meld8_env._belief is not built (python setup.py build_ext --inplace)")
    recs = decision_states(rules, a.states, a.seed)
    infos = [sb.infoset_of(r, int(r["acting"]), rules) for r in recs]
    print(f"{len(infos)} information sets, two_level, median of {a.repeats} repeats\n")
    print("| row | value |\n|---|---|")
    for n in a.worlds:
        c = statistics.median(per_call_us(infos, n, True, rules) for _ in range(a.repeats))
        p = statistics.median(per_call_us(infos, n, False, rules) for _ in range(a.repeats))
        print(f"| sample_worlds {n} worlds, C core (us/call) | {c:.0f} |")
        print(f"| sample_worlds {n} worlds, numpy twin (us/call) | {p:.0f} |")
        print(f"| numpy / C, {n} worlds | {p / c:.2f} |")


if __name__ == "__main__":
    main()
