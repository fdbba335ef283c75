"""The ``meld8`` command line: ``score`` (the calculator), ``waits``, ``distance``.

Bad input exits with code 2 and one line on stderr naming the problem; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from meld8_env.cards import CardError, card_str, format_cards, parse_cards
from meld8_env.rules import RuleConfig, RuleConfigError


def _rules(path: str | None) -> RuleConfig:
    return RuleConfig.load(path) if path else RuleConfig()


def _cmd_score(args: argparse.Namespace) -> int:
    from meld8_env.scoring import score_hand

    rules = _rules(args.rules)
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
        print(f"no win: {res.reason.replace('_', ' ')}")
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
        print(f"  {name:<22}{han:>3} han{note}")
    for name, han in res.bonuses.items():
        print(f"  {name + ' bonus':<22}{han:>3} han")
    kind = {0: "", 1: " (yakuman)", 2: " (double yakuman)"}[res.yakuman]
    if res.yakuman and any(y == "counted_yakuman" for y, _ in res.yaku):
        kind = " (counted yakuman)"
    print(f"total   {res.han} han{kind} = {res.points} points")
    if "discarder" in res.payments:
        print(f"pays    discarder pays {res.payments['discarder']}")
    else:
        print(f"pays    each other player pays {res.payments['each']}")
    return 0


def _cmd_waits(args: argparse.Namespace) -> int:
    from meld8_env.hands import waits

    ws = waits(args.cards, args.meld)
    if args.json:
        print(json.dumps({"waits": [card_str(c) for c in ws]}))
    else:
        print(format_cards(ws) if ws else "not tenpai (no waits)")
    return 0


def _cmd_distance(args: argparse.Namespace) -> int:
    from meld8_env.hands import UNREACHABLE, distance_to_win

    unseen = None
    if args.seen:
        held = set(parse_cards(args.cards)) | set(parse_cards(args.meld or ""))
        seen = set(parse_cards(args.seen))
        unseen = [c for c in range(53) if c not in seen and c not in held]
    d = distance_to_win(args.cards, args.meld, unseen)
    if args.json:
        print(json.dumps({"distance": d if d != UNREACHABLE else None}))
    else:
        print(d if d != UNREACHABLE else "unreachable: no winning hand can be made from the unseen cards")
    return 0


def _cmd_simulate(args: argparse.Namespace) -> int:
    from meld8_env.simulate import format_report, simulate

    if args.games < 1:
        raise ValueError("--games must be >= 1")
    stats = simulate(args.games, seed=args.seed, rules=_rules(args.rules), batch=args.batch)
    print(json.dumps(stats) if args.json else format_report(stats))
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from meld8_env.replay import load_replay, narrate

    doc, _ = load_replay(args.file)
    for line in narrate(doc):
        print(line)
    return 0


def _cmd_tournament(args: argparse.Namespace) -> int:
    from training.tournament import TournamentConfig, format_table, run

    settings: dict = {}
    if args.config:
        from meld8_env.config_io import read_yaml_mapping

        settings = read_yaml_mapping(args.config, "tournament config")
        known = {"agents", "deals", "seed", "workers", "out", "rules"}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ValueError(f"{args.config}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(known))}")
    for key in ("agents", "deals", "seed", "workers", "out", "rules"):
        value = getattr(args, key)
        if value is not None:
            settings[key] = value
    if "agents" not in settings:
        raise ValueError("name the agents: --agents greedy,defensive,random (or 'agents:' in --config)")
    agents = settings["agents"]
    if isinstance(agents, str):
        agents = [a.strip() for a in agents.split(",") if a.strip()]
    cfg = TournamentConfig(
        agents=agents,
        deals=int(settings.get("deals", 100)),
        seed=int(settings.get("seed", 0)),
        workers=int(settings.get("workers", 1)),
        out=str(settings.get("out", "results/tournament")),
        resume=args.resume,
        backend=args.backend,
        rules=_rules(settings.get("rules")),
    )
    res = run(cfg)
    print(format_table(res))
    print(f"written: {cfg.out}/results.json, games.csv, chart.png, games.jsonl")
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    try:
        from training.train_ppo import TrainConfig, train
    except ImportError as exc:
        raise ValueError(f"training needs the train extra: pip install torch==2.13.0 'meld8[train]' ({exc})") from None
    cfg = TrainConfig.load(args.config, args.set)
    final = train(cfg)
    print(f"trained: {final} (best evaluation: {final.parent / 'best.zip'}, logs: {final.parent / 'tb'})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="meld8", description="Meld8 rules engine tools (cards in R4 notation).")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("score", help="score a winning hand (the calculator)")
    s.add_argument("cards", help='concealed cards including the winning card, e.g. "2s 3s 4s 6h 7h 8h 9d 9c"')
    s.add_argument("--win", required=True, help="the winning card")
    s.add_argument("--tsumo", action="store_true", help="won on own draw (default: Ron)")
    s.add_argument("--meld", help="the exposed called meld, 3 cards")
    s.add_argument("--round", type=int, default=1, help="round number 1..6 (R30 minimum)")
    s.add_argument("--dealer", action="store_true", help="the winner is the dealer")
    s.add_argument("--dora-indicator", help="the dealer's first discard (R35)")
    s.add_argument("--first-draw", action="store_true", help="won on the first draw (Tenhou/Chiihou)")
    s.add_argument("--last-card", action="store_true", help="Tsumo on the last card / Ron on the final discard")
    s.add_argument("--discards", help="the winner's own discards, for furiten (R33)")
    s.add_argument("--rules", help="rule config YAML (default: RULES.md defaults)")
    s.add_argument("--json", action="store_true", help="print one JSON object")
    s.set_defaults(func=_cmd_score)

    w = sub.add_parser("waits", help="cards that complete a 7-card hand (R33)")
    w.add_argument("cards")
    w.add_argument("--meld")
    w.add_argument("--json", action="store_true")
    w.set_defaults(func=_cmd_waits)

    d = sub.add_parser("distance", help="fewest further cards to a winning hand")
    d.add_argument("cards")
    d.add_argument("--meld")
    d.add_argument("--seen", help="cards seen elsewhere (not drawable)")
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=_cmd_distance)

    sim = sub.add_parser("simulate", help="random-legal self-play statistics")
    sim.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--batch", type=int, default=256, help="games stepped together")
    sim.add_argument("--rules", help="rule config YAML")
    sim.add_argument("--json", action="store_true")
    sim.set_defaults(func=_cmd_simulate)

    t = sub.add_parser("tournament", help="duplicate tournament between agents")
    t.add_argument(
        "--agents",
        help="one per seat, comma separated: random, greedy, defensive, ppo (the shipped baseline), "
        "ppo:PATH.zip (a checkpoint) or pkg.mod:Class",
    )
    t.add_argument("--deals", type=int, help="deal seeds, each played under every seating (default 100)")
    t.add_argument("--seed", type=int)
    t.add_argument("--workers", type=int, help="worker processes (default 1)")
    t.add_argument(
        "--backend",
        default="local",
        choices=["local", "ray"],
        help="local worker processes, or Ray (the cluster in RAY_ADDRESS, else a local instance)",
    )
    t.add_argument("--out", help="output folder (default results/tournament)")
    t.add_argument("--resume", action="store_true", help="continue the log in --out")
    t.add_argument("--rules", help="rule config YAML")
    t.add_argument("--config", help="tournament YAML (keys: agents, deals, seed, workers, out, rules)")
    t.set_defaults(func=_cmd_tournament)

    tr = sub.add_parser("train", help="train a MaskablePPO agent (needs the train extra)")
    tr.add_argument("config", nargs="?", help="train YAML, e.g. configs/train/ppo_vs_bots.yaml")
    tr.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config option")
    tr.set_defaults(func=_cmd_train)

    rp = sub.add_parser("replay", help="re-simulate a replay file and print it hand by hand")
    rp.add_argument("file")
    rp.set_defaults(func=_cmd_replay)
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
