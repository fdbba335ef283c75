"""``meld8 simulate``: random-legal self-play statistics."""

from __future__ import annotations

import argparse
import json

from meld8_app.cli.common import rules_from
from meld8_env.engine.seeding import check_seed


def add_parser(sub: argparse._SubParsersAction) -> None:
    sim = sub.add_parser("simulate", help="random-legal self-play statistics")
    sim.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    sim.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0; same seed, same games)")
    sim.add_argument("--batch", type=int, default=256, help="games stepped together (default 256)")
    sim.add_argument("--rules", help="rule config YAML or built-in name (default rules when not given)")
    sim.add_argument("--json", action="store_true", help="print the statistics as JSON instead of a report")
    sim.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from meld8_env.simulate import format_report, simulate

    if not 1 <= args.games <= 2**63:
        raise ValueError(f"--games must be 1..2**63, got {args.games}")
    if not 1 <= args.batch <= 65_536:
        raise ValueError(f"--batch must be 1..65,536, got {args.batch}")
    check_seed(args.seed, "--seed")
    stats = simulate(args.games, seed=args.seed, rules=rules_from(args.rules), batch=args.batch)
    print(json.dumps(stats) if args.json else format_report(stats))
    return 0
