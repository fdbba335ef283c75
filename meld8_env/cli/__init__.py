"""The ``meld8`` command line: one module per command (``meld8_env/cli/<command>.py``), each with
``add_parser(sub)`` and ``run(args)``; a command imports what it needs only when it runs.

Bad input exits with code 2 and one line on stderr naming the problem; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from meld8_env.cards import CardError
from meld8_env.rules import RuleConfigError

COMMANDS = ("score", "waits", "distance", "simulate", "tournament", "train", "replay")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="meld8", description="Meld8 rules engine tools (cards in R4 notation).")
    sub = p.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"meld8_env.cli.{name}").add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (CardError, RuleConfigError, ValueError, OSError) as exc:
        print(f"meld8 {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
