"""Instructions per bot rollout under callgrind: the measurement that does not move with the machine's load.

Usage: python bench/rollout_instructions.py [--records 1000] [--until hand|game] [--table 0|1|2|per-discard]
       [--tournament BOARDS]

Workload: ``--records`` decision states from games the C bots play (``bots_throughput.states``, seed 0,
3 players, default rules), rolled to the end of the hand (or game) by greedy, defensive, greedy with one
thread. The script runs itself under ``valgrind --tool=callgrind --toggle-collect=py_rollout``, so only
the C rollout call is counted (no Python, no state generation), and prints markdown rows that
``bench/ab.py`` reads: instructions per rollout and per bot decision, and the decisions taken (equal in
two trees whose bots decide the same). ``--inner`` runs the workload alone (what valgrind runs).
``--table MODE`` counts the one-pass discard table instead (``_native.discard_table_batch`` in acc_mode MODE: 0
distances, 1 with the tie-break counts, 2 every count) on the draw-phase hands among those ``--records`` states
(session 30: 3,000 states give 2,492 hands), toggled on that call alone; ``--table per-discard`` counts the same
hands' table the other way, one ``distance_batch`` call per allowed discard (the unit of issue 20's "one pass <= 2x
one distance call": acc_mode 0's instructions per hand over this mode's instructions per discard).
``--tournament BOARDS`` counts a bots-only tournament instead: greedy, defensive and random over BOARDS boards x 6
seatings (``bench/tournament_throughput.py``'s workload, its seed 0), the whole games in C on one thread (the
engine extension's ``play_games``, toggled on that call), with the bot decisions taken (from the games' action
logs).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")
PER_DISCARD = "per-discard"


def inner_table(records: int, mode: str) -> None:
    from bots_throughput import states

    from meld8_env.cardmask import BITS, bits_of, discard_masks
    from meld8_env.codes import Phase
    from meld8_env.hands import _native
    from meld8_env.observation import decode
    from meld8_env.rules import RuleConfig

    rules = RuleConfig()
    rec, obs, masks = states(rules, records)
    draw = ~masks[:, 63] & (rec["phase"] != int(Phase.CLAIM))
    d = decode(obs[draw], rules)
    hands, melds, unseen = (np.ascontiguousarray(x) for x in (d["hand"], d["melds"][:, 0], d["unseen"]))
    allowed = discard_masks(masks[draw])
    rows, cards = bits_of(allowed)
    if mode == PER_DISCARD:  # the unit of the one pass's target: one distance call per discard
        after = np.ascontiguousarray(hands[rows] & ~BITS[cards])
        _native.distance_batch(after, melds[rows], unseen[rows], np.zeros(len(rows), np.int8))
    else:
        dist, acc = np.zeros((len(hands), 53), np.int8), np.zeros((len(hands), 53), np.int8)
        _native.discard_table_batch(hands, melds, unseen, allowed, int(mode), dist, acc)
    print(f"hands {len(hands)} discards {len(rows)}")


def report(title: str, rows: list[tuple[str, str]]) -> None:
    """The markdown rows bench/ab.py reads, under a title line."""
    print(title)
    print()
    print("| row | value |")
    print("|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value} |")


def inner_tournament(boards: int) -> None:
    from tournament_throughput import actions_of, play_lineup

    recs, _ = play_lineup(boards, 512, 0, threads=1)
    print(f"decisions {actions_of(recs)}")


def inner(records: int, until: str) -> None:
    from bots_throughput import states

    from meld8_env.rollout import rollout
    from meld8_env.rules import RuleConfig

    rules = RuleConfig()
    rec, _, _ = states(rules, records)
    res = rollout(rules, rec, np.array([1, 2, 1], np.int8), np.arange(records, dtype=np.uint64), until=until, threads=1)
    print(f"decisions {int(res.steps.sum())}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, help="decision states (default 1000; not with --tournament)")
    ap.add_argument("--until", choices=("hand", "game"), help="rollouts' stop (default hand; not with --tournament)")
    ap.add_argument(
        "--table",
        choices=("0", "1", "2", PER_DISCARD),
        help=f"count the one-pass discard table in this acc_mode, or ({PER_DISCARD}) one distance call per discard",
    )
    ap.add_argument("--tournament", type=int, metavar="BOARDS", help="count a bots-only tournament of BOARDS boards")
    ap.add_argument("--inner", action="store_true", help="run the workload only (under valgrind)")
    a = ap.parse_args()
    if a.tournament is not None:
        if a.tournament < 1:
            sys.exit(f"--tournament must be at least 1, got {a.tournament}")
        if a.table is not None or a.records is not None or a.until is not None:
            sys.exit("--tournament counts its own workload: give it without --table, --records or --until")
    a.records = 1000 if a.records is None else a.records
    a.until = a.until or "hand"
    if a.records < 1:
        sys.exit(f"--records must be at least 1, got {a.records}")
    if a.inner:
        if a.tournament is not None:
            inner_tournament(a.tournament)
        elif a.table is None:
            inner(a.records, a.until)
        else:
            inner_table(a.records, a.table)
        return
    if not shutil.which("valgrind"):
        sys.exit("valgrind not found: install it (apt-get install valgrind) to count instructions")
    toggle = "py_rollout" if a.table is None else "py_discard_table_batch"
    toggle = "py_distance_batch" if a.table == PER_DISCARD else toggle
    toggle = "py_play_games" if a.tournament is not None else toggle
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", f"--toggle-collect={toggle}"]
    cmd += [sys.executable, os.path.abspath(__file__), "--inner"]
    if a.tournament is not None:
        cmd += ["--tournament", str(a.tournament)]
    else:
        cmd += ["--records", str(a.records), "--until", a.until]
        cmd += [] if a.table is None else ["--table", a.table]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    instructions = int(COLLECTED.search(out.stderr).group(1))

    def per(n: int) -> str:
        return f"{instructions / max(n, 1):,.0f}"

    if instructions == 0:  # the toggled C call never ran (e.g. MELD8_BACKEND=python plays no game in C)
        sys.exit(f"callgrind counted 0 instructions in {toggle}: the workload did not reach that C call")
    if a.table is not None:
        hands, discards = (int(x) for x in re.search(r"hands (\d+) discards (\d+)", out.stdout).groups())
        what = "distance_batch per discard" if a.table == PER_DISCARD else f"discard_table_batch acc_mode {a.table}"
        title = f"{hands} draw-phase hands ({discards} discards) of {a.records} states, {what}, callgrind"
        rows = [("instructions for the table", f"{instructions:,}"), ("instructions per hand", per(hands))]
        rows += [("instructions per discard", per(discards))]
        report(title, rows)
        return
    decisions = int(re.search(r"decisions (\d+)", out.stdout).group(1))
    per_decision = ("instructions per bot decision", per(decisions))
    if a.tournament is not None:
        title = (
            f"greedy / defensive / random, {a.tournament} boards x 6 seatings, whole games in C, 1 thread, callgrind"
        )
        rows = [("instructions for the tournament", f"{instructions:,}"), per_decision]
    else:
        title = f"{a.records} records to the end of the {a.until}, greedy/defensive/greedy, 1 thread, callgrind"
        rows = [("instructions per rollout", per(a.records)), per_decision]
    report(title, [*rows, ("bot decisions", f"{decisions:,}")])


if __name__ == "__main__":
    main()
