"""``meld8 view``: step through a replay or a tournament game in the browser (the web extra)."""

from __future__ import annotations

import argparse

from meld8_app.cli.common import GAME_FILE, game_file
from meld8_app.cli.play import add_server_options, check_server, require_web, server_limits


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view", help="watch a replay or a tournament game in your browser")
    p.add_argument("file", help=GAME_FILE)
    p.add_argument("--game", type=int, help="game K (0-based) of a tournament log")
    add_server_options(p)
    p.set_defaults(func=run)


def viewer_data(path: str, game: int | None) -> tuple[dict, dict]:
    """(the replay document, what the page needs: frames, the hands' results, names, title)."""
    from meld8_app.web.session import pack_frames, replay_frames
    from meld8_env.replay import open_game
    from meld8_env.rules import RuleConfig

    doc = open_game(path, game)
    rules = RuleConfig.from_dict(doc["rules"])
    frames, results = pack_frames(replay_frames(rules, doc["seed"], doc["actions"], doc["names"]))
    return doc, {"frames": frames, "results": results, "names": doc["names"], "title": doc["title"]}


def run(args: argparse.Namespace) -> int:
    require_web()
    game_file(args.file)
    check_server(args)
    _, data = viewer_data(args.file, args.game)
    from meld8_app.web.app import create_app, serve

    serve(lambda **guard: create_app("view", replay=data, **guard), args.host, args.port, not args.no_browser,
          **server_limits(args))  # fmt: skip
    return 0
