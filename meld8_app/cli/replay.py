"""``meld8 replay``: re-simulate a replay file and print it hand by hand."""

from __future__ import annotations

import argparse

from meld8_app.cli.common import GAME_FILE, game_file


def add_parser(sub: argparse._SubParsersAction) -> None:
    rp = sub.add_parser("replay", help="re-simulate a replay file and print it hand by hand")
    rp.add_argument("file", help=GAME_FILE)
    rp.add_argument("--game", type=int, help="game K (0-based) of a tournament log")
    rp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from meld8_env.replay import narrate, open_game

    # "" is no file ("." was read and refused as a folder, a name the user never gave)
    game_file(args.file)
    doc = open_game(args.file, args.game)
    for line in narrate(doc):
        print(line)
    return 0
