"""The engine's wait table (issue 20 item 3): what it costs and where it wins, every mode in one run.

Usage: python bench/wait_table.py [--seconds 1.5] [--repeats 5] [--batch 4096] [--hands 20000] [--bot-hands 400]

Rows, medians of ``--repeats`` runs interleaved so machine noise hits every variant alike:
- env steps/s: ``FastBatch`` random legal play (B = ``--batch``), without a table and in each
  ``wait_mode`` (off: checks search, lazy/eager: checks read the table, tenpai: search until one passes);
- rollout hands/s: ``meld8_env.rollout`` to the end of the hand, 1 thread, random seats and
  greedy/defensive/greedy seats, in each mode;
- waits after every step: seat-waits/s of ``FastBatch.waits()`` (the table: only changed hands are
  computed) against ``waits_batch`` of every seat's hand (no table);
- ns per call of ``waits_batch`` vs ``is_win_form_batch`` on the hands the engine checks (random-play
  claim windows: the hand of each asked seat, plus the discard for is_win) and on bot-game hands.
Every row is a ``| name | number |`` markdown row, so ``bench/ab.py`` can put two trees side by side.

``--workload env|rollout-random|rollout-bots --mode MODE --units N`` runs one fixed piece of work instead
(N batch steps of B=4096, or a rollout of N records) and prints nothing: the deterministic instruction
count for a mode, free of this VM's timing noise, is then
``valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=py_step python bench/wait_table.py
--workload env --mode tenpai --units 100`` (``--toggle-collect=py_rollout`` for the rollouts).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from meld8_env.codes import Phase
from meld8_env.engine.fast import WAIT_MODES, FastBatch, wait_mode
from meld8_env.engine.records import start_records
from meld8_env.hands import is_win_form_batch, waits_batch
from meld8_env.rollout import rollout
from meld8_env.rules import RuleConfig

RULES = RuleConfig()


def play(b: FastBatch, seconds: float, each: Callable[[], None] | None = None) -> float:
    """Random legal play for ``seconds``; agent steps/s (``each`` runs after every batch step)."""
    b.reset(np.arange(b.B, dtype=np.uint64))
    rng = np.arange(b.B, dtype=np.uint64) * np.uint64(7) + np.uint64(1)
    act, ill = np.zeros(b.B, np.int64), np.zeros(b.B, np.uint8)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        b.random_legal(rng, act)
        b.step_into(act, ill)
        if each:
            each()
        n += b.B
        over = b.over
        if over.any():
            i = np.flatnonzero(over)
            b.start(i, i.astype(np.uint64) + np.uint64(n))
    return n / (time.perf_counter() - t0)


def env_rate(mode: str | None, batch: int, seconds: float) -> float:
    wait_mode(mode or "off")
    return play(FastBatch(batch, RULES, wait_table=mode is not None), seconds)


def rollout_rate(mode: str, seats: list[str], n: int) -> float:
    wait_mode(mode)
    rec = start_records(RULES, np.arange(n, dtype=np.uint64))
    t0 = time.perf_counter()
    rollout(RULES, rec, seats, np.arange(n, dtype=np.uint64), until="hand", threads=1)
    return n / (time.perf_counter() - t0)


def query_rate(table: bool, batch: int, seconds: float) -> float:
    """Seat-waits answered per second when every seat's waits are asked after every step."""
    wait_mode("off")
    b = FastBatch(batch, RULES)
    P = b.P
    asked = [0]

    def ask() -> None:
        if table:
            b.waits()
        else:  # the hands as FastBatch.waits defines them, then one waits_batch call
            st = b.state
            hands = st["hands"][:, :P].copy()
            cur = st["current"][:, None] == np.arange(P)[None, :]
            drawer = cur & (st["phase"][:, None] == int(Phase.DRAW)) & (st["drawn"][:, None] >= 0)
            drawn = np.where(st["drawn"] >= 0, st["drawn"], 0).astype(np.uint64)[:, None]
            hands = np.where(drawer, hands & ~(np.uint64(1) << drawn), hands)
            live = (hands != 0) & ~(cur & ~drawer & (st["phase"][:, None] != int(Phase.CLAIM)))
            live &= st["phase"][:, None] != int(Phase.OVER)
            waits_batch(hands[live], st["melds"][:, :P][live])
        asked[0] += b.B * P

    t0 = time.perf_counter()
    play(b, seconds, ask)
    return asked[0] / (time.perf_counter() - t0)


def engine_hands(batch: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hands, melds, cards): each asked seat's hand in random-play claim windows, and the discarded card."""
    wait_mode("off")
    b = FastBatch(batch, RULES)
    b.reset(np.arange(batch, dtype=np.uint64))
    rng = np.arange(batch, dtype=np.uint64) + np.uint64(1)
    act = np.zeros(batch, np.int64)
    hs, ms, cs = [], [], []
    for t in range(40):
        b.random_legal(rng, act)
        b.step(act)
        st = b.state
        for p in range(b.P):
            sel = (st["phase"] == int(Phase.CLAIM)) & (st["claim_discarder"] != p)
            hs.append(st["hands"][sel, p])
            ms.append(st["melds"][sel, p])
            cs.append(st["claim_card"][sel].astype(np.uint64))
        if b.over.any():
            i = np.flatnonzero(b.over)
            b.start(i, i.astype(np.uint64) + np.uint64(batch * (t + 1)))
    return np.concatenate(hs), np.concatenate(ms), np.concatenate(cs)


def bot_hands(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """7-card hands of seats in greedy/defensive games (claim windows), and the discarded card."""
    from training.bot_states import play_bot_states  # the bench may use training; the engine never does

    rec = play_bot_states(RULES, games=n, seed=3)
    rec = rec[rec["phase"] == int(Phase.CLAIM)]
    seat = rec["acting"].astype(np.int64)
    idx = np.arange(len(rec))
    return rec["hands"][idx, seat], rec["melds"][idx, seat], rec["claim_card"].astype(np.uint64)


def ns_per(fn: Callable[[], None], n: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / n * 1e9


def workload(kind: str, mode: str, units: int) -> None:
    """Fixed work for an instruction count (module docstring); mode "none": a batch without a table."""
    if kind == "env":
        wait_mode("off" if mode == "none" else mode)
        b = FastBatch(4096, RULES, wait_table=mode != "none")
        b.reset(np.arange(b.B, dtype=np.uint64))
        rng = np.arange(b.B, dtype=np.uint64) * np.uint64(7) + np.uint64(1)
        act, ill = np.zeros(b.B, np.int64), np.zeros(b.B, np.uint8)
        for t in range(units):
            b.random_legal(rng, act)
            b.step_into(act, ill)
            if b.over.any():
                i = np.flatnonzero(b.over)
                b.start(i, i.astype(np.uint64) + np.uint64(t * b.B))
        return
    wait_mode(mode)
    seats = ["random"] * 3 if kind == "rollout-random" else ["greedy", "defensive", "greedy"]
    rec = start_records(RULES, np.arange(units, dtype=np.uint64))
    rollout(RULES, rec, seats, np.arange(units, dtype=np.uint64), until="hand", threads=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.5, help="length of one timed env run")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--hands", type=int, default=20000, help="records per random-seat rollout run")
    ap.add_argument("--bot-hands", type=int, default=400, help="records per bot-seat rollout run")
    ap.add_argument("--workload", choices=["env", "rollout-random", "rollout-bots"], help="fixed work only")
    ap.add_argument("--mode", default="tenpai", choices=["none", *WAIT_MODES], help="with --workload")
    ap.add_argument("--units", type=int, default=100, help="with --workload: batch steps or records")
    a = ap.parse_args()
    if a.workload:
        workload(a.workload, a.mode, a.units)
        return
    before = wait_mode()
    rows: dict[str, Callable[[], float]] = {
        f"env steps/s, B={a.batch}, no table": lambda: env_rate(None, a.batch, a.seconds)
    }
    for m in WAIT_MODES:
        rows[f"env steps/s, B={a.batch}, table, mode {m}"] = lambda m=m: env_rate(m, a.batch, a.seconds)
    for name, seats, n in (
        ("random", ["random"] * 3, a.hands),
        ("greedy/defensive/greedy", ["greedy", "defensive", "greedy"], a.bot_hands),
    ):
        for m in WAIT_MODES:
            rows[f"rollout hands/s, {name} seats, 1 thread, mode {m}"] = lambda m=m, s=seats, n=n: rollout_rate(m, s, n)
    rows["waits after every step, seat-waits/s, waits_batch of the hands"] = lambda: query_rate(
        False, a.batch, a.seconds
    )
    rows["waits after every step, seat-waits/s, FastBatch.waits (table)"] = lambda: query_rate(True, a.batch, a.seconds)
    values: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(a.repeats):
        for k, fn in rows.items():
            values[k].append(fn())
    print(f"wait table: median of {a.repeats} interleaved runs")
    print()
    print("| row | value |")
    print("|---|---:|")
    for k, v in values.items():
        print(f"| {k} | {statistics.median(v):,.0f} |")
    for label, (h, m, c) in (("random-play", engine_hands(a.batch)), ("bot-game", bot_hands(24))):
        h8 = h | (np.uint64(1) << c)
        win = ns_per(lambda h8=h8, m=m: is_win_form_batch(h8, m), len(h), 7)
        waits = ns_per(lambda h=h, m=m: waits_batch(h, m), len(h), 7)
        print(f"| ns per hand, is_win_form_batch, {label} claim hands | {win:.1f} |")
        print(f"| ns per hand, waits_batch, {label} claim hands | {waits:.1f} |")
    wait_mode(before)


if __name__ == "__main__":
    main()
