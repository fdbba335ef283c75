"""``meld8 replay``: re-simulate a replay file and print it hand by hand."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    rp = sub.add_parser("replay", help="re-simulate a replay file and print it hand by hand")
    rp.add_argument("file")
    rp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from meld8_env.replay import load_replay, narrate

    doc, _ = load_replay(args.file)
    for line in narrate(doc):
        print(line)
    return 0
