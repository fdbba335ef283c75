"""Hand-evaluator throughput: C backend vs the pure-Python twin, side by side in one run.

Usage: python bench/hand_eval.py [--n 200000] [--n-python 300] [--repeats 5]

Each cell is the median of ``--repeats`` timed runs on the same hands (one thread). Hand sets:
uniform random hands, winning hands (sampled from the table of all 1,865,828), tenpai 7-card hands
(a winning hand minus one card, kept if it still has waits): the near-ready hands bots rate most.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from bench_args import at_least

from meld8_env.hands import _native, _reference, set_backend
from meld8_env.hands.sampling import drop_random_card, random_masks
from meld8_env.rules import RuleConfig
from meld8_env.scoring import score_batch, score_masks


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=at_least(1), default=200_000, help="hands per C measurement (default 200,000)")
    ap.add_argument("--n-python", type=at_least(1), default=300, help="hands per Python measurement (default 300)")
    ap.add_argument("--repeats", type=at_least(1), default=5, help="timed repeats, median quoted (default 5)")
    ap.add_argument("--seed", type=at_least(0), default=0, help="seed of the hands (default 0)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    win = _reference.winning_hands()
    n, npy = args.n, args.n_python

    rand8 = random_masks(rng, n, 8)
    win8 = win[rng.integers(0, len(win), n)]
    rand7 = random_masks(rng, n, 7)
    t7 = drop_random_card(rng, win[rng.integers(0, len(win), 2 * n)])
    w = np.zeros(len(t7), np.uint64)
    _native.waits_batch(t7, None, w)
    tenpai7 = t7[w != 0][:n]
    wins = np.array([int(h).bit_length() - 1 if int(h) >> 52 == 0 else 52 for h in win8], np.int8)
    flags = rng.integers(0, 4, n).astype(np.uint8)
    min_han = np.ones(n, np.int8)
    dora = rng.integers(0, 52, n).astype(np.int8)
    rules = RuleConfig()
    set_backend("python")  # the Python column is the pure twin end to end; C rows call _native directly

    def c_batch(fn, hands, dtype):
        out = np.zeros(len(hands), dtype)
        return lambda: fn(hands, None, out)

    def c_dist(hands):
        out = np.zeros(len(hands), np.int8)
        return lambda: _native.distance_batch(hands, None, None, out)

    def py_loop(fn, hands, count):
        small = [int(h) for h in hands[:count]]
        return (lambda: [fn(h) for h in small]), len(small)

    def py_score(h):
        win_card = 52 if h >> 52 else h.bit_length() - 1
        return score_masks(h, 0, win_card, tsumo=True, min_han=1, rules=rules)

    few = max(npy // 10, 10)
    rows = [
        ("win check, random 8", c_batch(_native.is_win_form_batch, rand8, np.uint8), n,
         py_loop(lambda h: _reference.is_win_form(h, 0), rand8, npy)),
        ("win check, winning 8", c_batch(_native.is_win_form_batch, win8, np.uint8), n,
         py_loop(lambda h: _reference.is_win_form(h, 0), win8, npy)),
        ("waits, random 7", c_batch(_native.waits_batch, rand7, np.uint64), n,
         py_loop(lambda h: _reference.waits(h, 0), rand7, few)),
        ("waits, tenpai 7", c_batch(_native.waits_batch, tenpai7, np.uint64), len(tenpai7),
         py_loop(lambda h: _reference.waits(h, 0), tenpai7, few)),
        ("full scoring, winning 8", lambda: score_batch(win8, None, wins, flags, min_han, dora, None, rules), n,
         py_loop(py_score, win8, npy)),
        ("distance_to_win, random 7", c_dist(rand7[: n // 10]), n // 10,
         py_loop(lambda h: _reference.distance(h, 0, None), rand7, few)),
        ("distance_to_win, random 8", c_dist(rand8[: n // 10]), n // 10,
         py_loop(lambda h: _reference.distance(h, 0, None), rand8, few)),
        ("distance_to_win, tenpai 7", c_dist(tenpai7[: n // 10]), len(tenpai7[: n // 10]),
         py_loop(lambda h: _reference.distance(h, 0, None), tenpai7, few)),
    ]  # fmt: skip
    _reference.distance(int(rand7[0]), 0, None)  # build the reference table outside the timing
    print(f"hand evaluator, one thread, median of {args.repeats} runs (C: {n:,} hands; Python twin: fewer)")
    print()
    print("| operation | C hands/s | C ns/hand | Python hands/s | Python hands | C / Python |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, cfn, cn, (pfn, pn) in rows:
        ct = median_time(cfn, args.repeats) / cn
        pt = median_time(pfn, min(args.repeats, 3)) / pn
        print(f"| {name} | {1 / ct:,.0f} | {ct * 1e9:,.0f} | {1 / pt:,.1f} | {pn} | {pt / ct:,.0f}x |", flush=True)


if __name__ == "__main__":
    main()
