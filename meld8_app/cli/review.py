"""``meld8 review``: each decision of one seat next to a reference agent's (browser, text or JSON)."""

from __future__ import annotations

import argparse

from meld8_app.cli import typed_options
from meld8_app.cli.common import GAME_FILE, game_file
from meld8_app.cli.play import add_server_options, check_server, require_web, server_limits


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="review one seat's decisions in a replay against a reference agent")
    p.add_argument("file", help=GAME_FILE)
    p.add_argument("--seat", type=int, required=True, help="the seat to review")
    p.add_argument("--game", type=int, help="game K (0-based) of a tournament log")
    p.add_argument("--agent", default=None,
                   help="reference agent spec (default ppo, the shipped baseline; greedy without the train "
                   "extra)")  # fmt: skip
    p.add_argument("--threshold", type=float, default=None,
                   help="flag a decision when the reference prefers its choice by more than this: a probability "
                   "for a policy (default 0.5), expected placements for a search's values (default 0.05)")  # fmt: skip
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the review as JSON (for scripts)")
    out.add_argument("--text", action="store_true", help="print the review as text")
    add_server_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from meld8_app.cli.view import viewer_data
    from meld8_app.web.review import format_review, review
    from meld8_env.rules import RuleConfig

    game_file(args.file)
    if args.threshold is not None and not 0 <= args.threshold <= 1:  # also refuses nan
        raise ValueError(f"--threshold must be 0..1 (probability, or placements for a search), got {args.threshold}")
    if args.agent is not None and args.agent.strip().startswith("cmd:"):  # refused before a bot is started
        raise ValueError(
            "--agent: a seat-protocol bot (cmd:) cannot be the reference: review asks the reference about each "
            "decision of a finished game; give a built-in agent or a checkpoint (greedy, ppo, ppo:PATH.zip, search)"
        )
    if args.agent is not None:
        refuse_cheating(args.agent)
    if not args.json and not args.text:
        require_web()
        check_server(args)
    else:  # --port 99999 was accepted and ignored with --json (red team, session 37)
        server = typed_options(args, "port", "host", "limit_concurrency")
        if server:
            raise ValueError(f"{server[0]} sets the browser page, which --{'json' if args.json else 'text'} replaces")
    doc, data = viewer_data(args.file, args.game)
    rules = RuleConfig.from_dict(doc["rules"])
    from meld8_app.cli.play import default_agent

    agent = default_agent(args.agent, "greedy")
    # a tournament log's seat reviewed by the agent that played it: seeded as it played (seeds audit, session 35: a
    # seeded agent such as search disagreed with a third of its own moves)
    own = doc.get("agent_seeds") and 0 <= args.seat < len(doc["names"]) and doc["names"][args.seat] == agent
    seed = doc["agent_seeds"][args.seat] if own else 0
    rev = review(rules, doc["seed"], doc["actions"], args.seat, agent, args.threshold, agent_seed=seed)
    if args.json:
        print(json.dumps(rev, indent=1))
        return 0
    if args.text:
        print(format_review(rev))
        return 0
    from meld8_app.web.app import create_app, serve

    app = lambda **guard: create_app("review", replay=data, review=rev, **guard)  # noqa: E731
    serve(app, args.host, args.port, not args.no_browser, **server_limits(args))
    return 0


def refuse_cheating(spec: str) -> None:
    """ValueError, in the words ``meld8 tournament`` uses, when ``spec`` is a CHEATING search diagnostic
    (``search:cheat=1``, ``ron=truth|status``): a review never hands out the true records, and such a reference
    was refused only at its first decision, after the replay was read and re-simulated, in words about
    ``act_batch`` (red team, session 48). Read from the options alone: no network is loaded twice."""
    name, colon, options = spec.partition(":")
    if name != "search" or not colon:
        return
    from agents.search import cheats
    from meld8_env.agent import records_refusal

    try:
        cheating = cheats(options)
    except ValueError:
        return  # a bad option: loading the agent names it in its own words
    if cheating:
        raise ValueError(records_refusal(spec, "a review"))
