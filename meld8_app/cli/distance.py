"""``meld8 distance``: the fewest further cards to a winning hand."""

from __future__ import annotations

import argparse
import json

from meld8_env.cards import JOKER, CardError, card_str, parse_cards


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("distance", help="fewest further cards to a winning hand")
    d.add_argument("cards", help='the concealed cards in R4 notation, e.g. "2s 3s 4s 6h 7h 9d Kc" (JK: the Joker)')
    d.add_argument("--meld", help="an exposed meld (pon or chii) in R4 notation")
    d.add_argument(
        "--seen", help="cards seen elsewhere (discards, melds, dora indicator; never JK, R12): never drawable"
    )
    d.add_argument("--json", action="store_true", help='print {"distance": N} as JSON (null: unreachable)')
    d.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from meld8_env.hands import UNREACHABLE, distance_to_win

    unseen = None
    if args.seen:
        hand, meld = parse_cards(args.cards), parse_cards(args.meld or "")
        seen = parse_cards(args.seen, what="--seen")
        if JOKER in seen:  # it is never discarded or called (R12) nor the indicator (R35): no one else shows it
            raise CardError(
                "--seen: JK can never be seen elsewhere: the Joker is never discarded or called (R12) and never the "
                "dora indicator (R35); leave it out"
            )
        for c in seen:  # every card exists once (R1): a card held or in the meld was not seen elsewhere
            if c in hand or c in meld:
                where = "hand" if c in hand else "--meld"
                raise CardError(f"--seen: {card_str(c)} is in your {where}; give only cards seen elsewhere (R1)")
        unseen = [c for c in range(53) if c not in seen and c not in hand and c not in meld]
    d = distance_to_win(args.cards, args.meld, unseen)
    if args.json:
        print(json.dumps({"distance": d if d != UNREACHABLE else None}))
    else:
        print(d if d != UNREACHABLE else "unreachable: no winning hand can be made from the unseen cards")
    return 0
