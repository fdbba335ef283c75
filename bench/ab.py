"""A/B: run one bench script against two source trees, interleaved, and put their rows side by side.

Usage: python bench/ab.py --baseline /path/to/old/checkout [--rounds 3] bench/env_throughput.py [ARGS...]

Both trees need their C extensions built in place (``python setup.py build_ext --inplace``), e.g. a
``git worktree add /tmp/old <commit>``. Each round runs the bench once in the baseline tree and once in
this one (``PYTHONPATH`` = that tree), alternating so machine noise hits both alike. Every markdown
table row ``| name | number |`` of the bench's output is collected; the table shows each row's
median over the rounds for both trees and the ratio.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROW = re.compile(r"^\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<value>[\d,.]+)\s*\|")


def run(tree: Path, script: str, args: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, str(tree / script), *args], cwd=tree, env=env, capture_output=True, text=True
    )
    if done.returncode:  # the child's own last lines say why (a tree without its C extensions built, most often)
        tail = "\n".join(done.stderr.strip().splitlines()[-3:])
        hint = (
            ""
            if "_fast" not in tail and "_native" not in tail
            else (f"\n(build its C extensions first: cd {tree} && python setup.py build_ext --inplace)")
        )
        sys.exit(f"{script} failed in {tree} (exit {done.returncode}):\n{tail}{hint}")
    out = done.stdout
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            rows[m["name"]] = float(m["value"].replace(",", ""))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, type=Path, help="the other source tree")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("script", help="bench script path relative to a tree root")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    here = Path(__file__).resolve().parents[1]
    results: dict[str, dict[str, list[float]]] = {"baseline": {}, "this": {}}
    for _ in range(a.rounds):
        for label, tree in (("baseline", a.baseline.resolve()), ("this", here)):
            for name, value in run(tree, a.script, a.args).items():
                results[label].setdefault(name, []).append(value)
    print(f"{a.script} {' '.join(a.args)}: median of {a.rounds} interleaved runs per tree")
    print()
    print("| row | baseline | this tree | this / baseline |")
    print("|---|---:|---:|---:|")
    for name, values in results["this"].items():
        base = results["baseline"].get(name)
        mine = statistics.median(values)
        if base:
            b = statistics.median(base)
            print(f"| {name} | {_shown(b)} | {_shown(mine)} | {mine / b:.3f} |")
        else:
            print(f"| {name} | - | {_shown(mine)} | - |")


def _shown(v: float) -> str:
    """Whole numbers from 100 up, two decimals below (a median of 9.46 ms is not "9")."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


if __name__ == "__main__":
    main()
