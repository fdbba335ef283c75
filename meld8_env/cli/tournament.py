"""``meld8 tournament``: a duplicate tournament between agents."""

from __future__ import annotations

import argparse

from meld8_env.cli.common import rules_from


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    t.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
        rules=rules_from(settings.get("rules")),
    )
    res = run(cfg)
    print(format_table(res))
    print(f"written: {cfg.out}/results.json, games.csv, chart.png, games.jsonl")
    return 0
