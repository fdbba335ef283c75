"""Instructions per bot rollout under callgrind: the measurement that does not move with the machine's load.

Usage: python bench/rollout_instructions.py [--records 1000] [--until hand|game]

Workload: ``--records`` decision states from games the C bots play (``bots_throughput.states``, seed 0,
3 players, default rules), rolled to the end of the hand (or game) by greedy, defensive, greedy with one
thread. The script runs itself under ``valgrind --tool=callgrind --toggle-collect=py_rollout``, so only
the C rollout call is counted (no Python, no state generation), and prints markdown rows that
``bench/ab.py`` reads: instructions per rollout and per bot decision, and the decisions taken (equal in
two trees whose bots decide the same). ``--inner`` runs the workload alone (what valgrind runs).
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
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--until", choices=("hand", "game"), default="hand")
    ap.add_argument("--inner", action="store_true", help="run the workload only (under valgrind)")
    a = ap.parse_args()
    if a.records < 1:
        sys.exit(f"--records must be at least 1, got {a.records}")
    if a.inner:
        inner(a.records, a.until)
        return
    if not shutil.which("valgrind"):
        sys.exit("valgrind not found: install it (apt-get install valgrind) to count instructions")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--toggle-collect=py_rollout"]
    cmd += [sys.executable, os.path.abspath(__file__), "--inner", "--records", str(a.records), "--until", a.until]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    instructions = int(COLLECTED.search(out.stderr).group(1))
    decisions = int(re.search(r"decisions (\d+)", out.stdout).group(1))
    print(f"{a.records} records to the end of the {a.until}, greedy/defensive/greedy, 1 thread, callgrind")
    print()
    print("| row | value |")
    print("|---|---:|")
    print(f"| instructions per rollout | {instructions / a.records:,.0f} |")
    print(f"| instructions per bot decision | {instructions / max(decisions, 1):,.0f} |")
    print(f"| bot decisions | {decisions:,} |")


if __name__ == "__main__":
    main()
