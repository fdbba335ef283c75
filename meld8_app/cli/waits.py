"""``meld8 waits``: the cards that complete a 7-card hand (R33)."""

from __future__ import annotations

import argparse
import json

from meld8_env.cards import card_str, format_cards


def add_parser(sub: argparse._SubParsersAction) -> None:
    w = sub.add_parser("waits", help="cards that complete a 7-card hand (R33)")
    w.add_argument("cards", help='the 7 concealed cards in R4 notation, e.g. "2s 3s 4s 6h 7h 8h 9d" (JK: the Joker)')
    w.add_argument("--meld", help="an exposed meld (pon or chii) in R4 notation; then the concealed part is 4 cards")
    w.add_argument("--json", action="store_true", help='print {"waits": [...]} as JSON instead of card text')
    w.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from meld8_env.hands import waits

    ws = waits(args.cards, args.meld)
    if args.json:
        print(json.dumps({"waits": [card_str(c) for c in ws]}))
    else:
        print(format_cards(ws) if ws else "not tenpai (no waits)")
    return 0
