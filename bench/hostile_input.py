"""What hostile input costs the web table's event loop: the bounds check of a protocol line and the token cookie.

Usage: ``python bench/hostile_input.py [--rounds 5]``

Workload (red team, session 33): a protocol line of N bytes that opens 9 brackets and then a JSON string that
never closes (``{{{{{{{{{"\\"\\"...``), and a Cookie header of N bytes holding one cookie of escaped quotes
(``a="\\\\..."``), at N = 1, 2, 4, 8 and 16 KB. Rows (markdown): the median milliseconds per call over ``--rounds``
(each round repeats the call until 0.2 s pass) of today's code (``meld8_env.protocol.check_line``,
``meld8_app.web.app._cookie``) and, as the baseline in the same run, the code it replaced (the regex that
skipped JSON strings, ``http.cookies.SimpleCookie``), and how each grows from one size to the next (x2 the
size: about x2 is linear, about x4 quadratic). The protocol line is checked at every size, though the protocol
refuses lines over 4,096 bytes first: the row shows how the check scales.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from http.cookies import SimpleCookie

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from meld8_app.web.app import _cookie  # noqa: E402
from meld8_env.protocol import ProtocolError, check_line  # noqa: E402

_OLD_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
SIZES = (1024, 2048, 4096, 8192, 16384)


def old_check(raw: bytes) -> None:
    """The bounds check before session 33: strings removed by a regex, then brackets counted."""
    bare = _OLD_STRINGS.sub(b'""', raw)
    sum(ch in b"[{" for ch in bare)


def new_check(raw: bytes) -> None:
    try:
        check_line(raw, limit=len(raw))
    except ProtocolError:
        pass


def old_cookie(header: str) -> None:
    jar = SimpleCookie()
    try:
        jar.load(header)
    except Exception:
        pass


def new_cookie(header: str) -> None:
    _cookie(header, "meld8_token")


def per_call_ms(fn, arg, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 0.2:
            fn(arg)
            n += 1
        times.append((time.perf_counter() - t0) / n * 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    lines = {n: b"{" * 9 + b'"' + b'\\"' * ((n - 10) // 2) for n in SIZES}
    cookies = {n: 'a="' + "\\" * (n - 4) + '"' for n in SIZES}
    rows = [
        ("protocol line, old regex", old_check, lines),
        ("protocol line, check_line", new_check, lines),
        ("cookie, SimpleCookie", old_cookie, cookies),
        ("cookie, _cookie", new_cookie, cookies),
    ]
    print("| code | " + " | ".join(f"{n // 1024} KB ms" for n in SIZES) + " | growth per x2 size |")
    print("|---|" + "---:|" * (len(SIZES) + 1))
    for name, fn, inputs in rows:
        ms = [per_call_ms(fn, inputs[n], args.rounds) for n in SIZES]
        growth = statistics.median(b / a for a, b in zip(ms, ms[1:], strict=False) if a > 0)
        print(f"| {name} | " + " | ".join(f"{m:.4f}" for m in ms) + f" | x{growth:.1f} |")


if __name__ == "__main__":
    main()
