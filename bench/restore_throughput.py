"""Cost of putting records back: ``FastBatch.restore`` of bot-free random-play records, per record.

Usage: python bench/restore_throughput.py [--batch 256] [--repeats 7]

Restore runs the engine's record checks (field ranges; from issue 19 item 2 also card conservation and the
claim-window / mask caches, in C). Run it with ``bench/ab.py`` to compare two trees in one run; rows are
restored records per second (median of ``--repeats``) and the cost of one ``snapshot`` + ``restore`` pair.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from meld8_env.engine.fast import FastBatch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args()
    eng = FastBatch(a.batch)
    eng.reset(np.arange(a.batch, dtype=np.uint64))
    rng, acts = np.arange(a.batch, dtype=np.uint64) + 1, np.zeros(a.batch, np.int64)
    for _ in range(40):  # mid-game records: discards, some calls and claim windows
        eng.random_legal(rng, acts)
        eng.step(np.where(eng.over, -1, acts))
    snap = eng.snapshot(slice(None))
    rates = []
    for _ in range(a.repeats):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 0.3:
            eng.restore(slice(None), snap)
            n += a.batch
        rates.append(n / (time.perf_counter() - t0))
    med = statistics.median(rates)
    print("| row | value |\n|---|---|")
    print(f"| restore B={a.batch} records/s | {med:,.0f} |")
    print(f"| restore B={a.batch} us per record | {1e6 / med:.3f} |")


if __name__ == "__main__":
    main()
