"""``meld8 tournament``: a duplicate tournament between agents."""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path

from meld8_app.cli import typed_options
from meld8_app.cli.common import rules_from
from meld8_env.config_io import no_duplicate_keys, short_repr
from meld8_env.engine.seeding import MAX_SEED, check_seed
from meld8_env.paths import nonempty_path, output_path


def add_parser(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("tournament", help="duplicate tournament between agents")
    t.add_argument(
        "--agents",
        help="one per seat, comma separated: random, greedy, defensive, ppo (the shipped baseline), "
        "ppo:PATH.zip (a checkpoint), distilled (the network distilled from search), search or search:OPT=V+OPT=V "
        "(the search agent, README 'Search and belief'), wary, rllib:FOLDER (a policy of meld8 train --backend "
        "rllib: OUT/best or OUT), pkg.mod:Class, or cmd:COMMAND (a seat-protocol bot, docs/protocol.md; quote "
        "the whole list, and keep commas out of the command)",
    )
    t.add_argument(
        "--boards",
        "--deals",
        dest="boards",
        type=int,
        help="boards: game seeds, each played under every seating (default 100; --deals is the old name)",
    )
    t.add_argument(
        "--seed",
        type=int,
        help="seed of the board seeds (default 0; with a cmd: bot seated, drawn afresh and printed, so a bot playing "
        "from another account cannot know the deals in advance; --resume takes the log's)",
    )
    t.add_argument("--workers", type=int, help="worker processes (default 1)")
    t.add_argument(
        "--backend",
        default="local",
        choices=["local", "ray"],
        help="local worker processes, or Ray (the cluster in RAY_ADDRESS, else a local instance; default local)",
    )
    t.add_argument("--out", help="output folder (default results/tournament)")
    t.add_argument(
        "--resume",
        action="store_true",
        help="continue the log in --out (every logged game is re-created "
        "from its seed and actions first; an edited result is refused)",
    )
    t.add_argument("--rules", help="rule config: a YAML file, or a built-in name (default, two_player); default: "
                   "the standard 3-player rules")  # fmt: skip
    t.add_argument("--config", help="tournament YAML (keys: agents, boards, seed, workers, out, rules)")
    t.add_argument(
        "--trust-checkpoint",
        action="store_true",
        help="load checkpoint zips without meld8 metadata through SB3, which unpickles code stored in them "
        "(only for files from authors you trust; meld8's own checkpoints never need it)",
    )
    b = t.add_argument_group("external bots (cmd: agents)")
    b.add_argument("--bot-timeout", type=float, default=5.0, help="seconds per decision (default 5)")
    b.add_argument(
        "--fallback",
        default="greedy",
        choices=["greedy", "defensive", "random"],
        help="bot that plays a faulted seat for the rest of its game (default greedy)",
    )
    b.add_argument("--bot-log-dir", help="folder of the bots' stderr logs (default OUT/bots)")
    t.set_defaults(func=run)


def _default_seed(agents: list[str], settings: dict, resume: bool) -> tuple[int, bool]:
    """(the seed when none is given, whether it was drawn): 0, or with a ``cmd:`` bot seated a fresh one (with seed 0
    every board is public: a bot that plays from another account could know each deal before it is dealt), said
    with the results and kept in the log's header, whose seed ``--resume`` takes (a fresh one would not match it)."""
    import secrets

    from meld8_env.seat_process import PREFIX

    if not any(a.startswith(PREFIX) for a in agents):
        return 0, False
    log = Path(settings.get("out", "results/tournament")) / "games.jsonl"
    if resume and log.is_file():
        with contextlib.suppress(OSError, ValueError, RecursionError), log.open("rb") as f:
            head = json.loads(f.readline(1 << 20), object_pairs_hook=no_duplicate_keys)
            if isinstance(head, dict) and head.get("type") == "header":
                return check_seed(head.get("seed"), "the log's seed"), False
        # an unreadable header: the resume check says what is wrong with it
    return secrets.randbelow(MAX_SEED + 1), True


def run(args: argparse.Namespace) -> int:
    from meld8_env.agent_spec import names_checkpoint_file, split_agents
    from meld8_env.seat_process import BotOptions
    from training.tournament import TournamentConfig, format_table, run

    settings: dict = {}
    if args.config is not None:  # an empty --config is refused, not read as "no config"
        nonempty_path(args.config, "--config", "a tournament YAML (keys: agents, boards, seed, workers, out, rules)")
        from meld8_env.config_io import read_yaml_mapping

        settings = read_yaml_mapping(args.config, "tournament config", kind="tournament")
        if "deals" in settings:  # the old name of the key
            if "boards" in settings:
                raise ValueError(f"{args.config}: give boards or deals (its old name), not both")
            settings["boards"] = settings.pop("deals")
        known = {"agents", "boards", "seed", "workers", "out", "rules"}
        unknown = sorted(set(settings) - known, key=str)  # keys 1 and foo failed to sort ("'<' not supported")
        if unknown:
            raise ValueError(
                f"{args.config}: unknown key {short_repr(unknown[0])}; known keys: {', '.join(sorted(known))}"
            )
    for key in ("agents", "boards", "seed", "workers", "out", "rules"):
        value = getattr(args, key)
        if value is not None:
            settings[key] = value
    if "agents" not in settings:
        raise ValueError("name the agents: --agents greedy,defensive,random (or 'agents:' in --config)")
    agents = settings["agents"]
    if isinstance(agents, str):  # a path holding ',' was cut in two, and the count was blamed (red team, session 44)
        where = "--agents" if args.agents is not None else f"'agents' in {args.config}"
        agents = split_agents(agents, where, ", or list the agents in --config (agents: [...], a YAML list, takes "
                              "any path)")  # fmt: skip
    if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
        raise ValueError(
            f"agents must be a list of agent names (or one comma-separated string), got {short_repr(agents)}"
        )
    for key, hi in (("boards", 2**63), ("workers", 1024)):
        if key not in settings:
            continue
        value = settings[key]  # `workers: null` failed in a comparison, after the folder was made
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
            raise ValueError(f"{key} must be an integer 1..{hi:,}, got {short_repr(value)}")
    for key in ("out", "rules"):
        if key in settings and not isinstance(settings[key], str):
            raise ValueError(f"{key} must be a path or name, got {short_repr(settings[key])}")
    if "seed" in settings:
        seed, drawn = check_seed(settings["seed"], "seed"), False
    else:  # after out's check: a cmd: lineup's resume reads the seed from out's log
        seed, drawn = _default_seed(agents, settings, args.resume)
    # where each value came from, for the messages: the command line wins over the config
    source = {k: f"{k!r} in {args.config}" if args.config and getattr(args, k) is None and k in settings else f"--{k}"
              for k in ("out", "rules")}  # fmt: skip
    # checked here, before any agent loads: "" would be the current folder (results.json written into it), and a
    # file on the way would fail at mkdir with a bare OSError after the agents had started
    out = settings.get("out", "results/tournament")
    output_path(out, source["out"], "a folder for the tournament's outputs (default results/tournament)")
    if args.bot_log_dir is not None:
        output_path(args.bot_log_dir, "--bot-log-dir", "a folder for the bots' stderr logs (default OUT/bots)")
    bot_only = typed_options(args, "bot_timeout", "fallback", "bot_log_dir")
    if bot_only and not any(a.startswith("cmd:") for a in agents):  # accepted and ignored (red team, session 37)
        raise ValueError(f"{bot_only[0]} applies to cmd: bots, and no cmd: agent is seated")
    if args.trust_checkpoint and not any(names_checkpoint_file(a) for a in agents):  # accepted silently until s38
        raise ValueError(
            "--trust-checkpoint applies to checkpoint files (ppo:PATH.zip), and none is seated; leave it out"
        )
    cfg = TournamentConfig(
        agents=agents,
        boards=settings.get("boards", 100),
        seed=seed,
        workers=settings.get("workers", 1),
        out=out,
        resume=args.resume,
        backend=args.backend,
        trust_checkpoints=args.trust_checkpoint,
        rules=rules_from(settings.get("rules"), source["rules"]),
        bots=BotOptions(timeout=args.bot_timeout, fallback=args.fallback, log_dir=args.bot_log_dir),
    )
    res = run(cfg)
    print(format_table(res))
    print(f"written: {cfg.out}/results.json, games.csv, chart.png, games.jsonl")
    if drawn:
        print(f"a cmd: bot is seated and no --seed was given: the boards came from the fresh seed {seed} (pass --seed "
              f"{seed} to play them again; --resume takes it from the log)")  # fmt: skip
    return 0
