"""``meld8 score``: the calculator - score a winning hand (R26-R38)."""

from __future__ import annotations

import argparse
import json

from meld8_app.cli.common import rules_from
from meld8_env.cards import card_str, format_cards
from meld8_env.display import bonus_name, yaku_name


def add_parser(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("score", help="score a winning hand (the calculator)")
    s.add_argument("cards", help='concealed cards including the winning card, e.g. "2s 3s 4s 6h 7h 8h 9d 9c"')
    s.add_argument("--win", required=True, help="the winning card")
    s.add_argument("--tsumo", action="store_true", help="won on own draw (default: Ron)")
    s.add_argument("--meld", help="the exposed called meld, 3 cards")
    s.add_argument("--round", type=int, default=1, help="round number 1..6 (R30 minimum; default 1)")
    s.add_argument("--dealer", action="store_true", help="the winner is the dealer")
    s.add_argument(
        "--dora-indicator",
        help="the dealer's first discard (R35): not a card you hold, drew or called, but for a non-dealer's Ron on it",
    )
    s.add_argument(
        "--first-draw", action="store_true", help="Tsumo on the first draw, before any call or discard (Tenhou/Chiihou)"
    )
    s.add_argument("--last-card", action="store_true", help="Tsumo on the last card / Ron on the final discard")
    s.add_argument("--discards", help="the winner's own discards, for furiten (R33)")
    s.add_argument("--rules", help="rule config YAML (default: the defaults of docs/rules.md)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from meld8_env.scoring import REASON_TEXT, score_hand

    rules = rules_from(args.rules)
    res = score_hand(
        args.cards,
        args.win,
        meld=args.meld,
        tsumo=args.tsumo,
        round=args.round,
        dealer=args.dealer,
        dora_indicator=args.dora_indicator,
        first_draw=args.first_draw,
        last_card=args.last_card,
        discards=args.discards or (),
        rules=rules,
    )
    if args.json:
        print(json.dumps(res.to_json()))
        return 0 if res.win else 1
    if not res.win:
        print(f"no win: {REASON_TEXT.get(res.reason, res.reason)}")
        return 1
    print(f"form    {res.form}")
    groups = ["  ".join(format_cards(g) for g in res.groups)]
    if res.meld:
        groups.append(f"[{format_cards(res.meld)}] (called)")
    print("groups  " + "   ".join(groups))
    if res.joker_as is not None:
        print(f"joker   stands for {card_str(res.joker_as)}")
    for name, han in res.yaku:
        note = " (reduced by 1: call or Joker, R32)" if name in res.reductions else ""
        print(f"  {yaku_name(name):<28}{han:>3} han{note}")  # display names: meld8_env.display (--json keeps ids)
    for name, han in res.bonuses.items():
        print(f"  {bonus_name(name):<28}{han:>3} han")
    kind = {0: "", 1: " (yakuman)", 2: " (double yakuman)"}[res.yakuman]
    if res.yakuman and any(y == "counted_yakuman" for y, _ in res.yaku):
        kind = " (counted yakuman)"
    print(f"total   {res.han} han{kind} = {res.points} points")
    if "discarder" in res.payments:
        print(f"pays    discarder pays {res.payments['discarder']}")
    else:
        print(f"pays    each other player pays {res.payments['each']}")
    return 0
