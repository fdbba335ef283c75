"""``meld8 play``: play a game in the browser against any agents (the web extra)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from meld8_app.cli.common import rules_from
from meld8_env.engine.seeding import MAX_SEED, check_seed
from meld8_env.paths import output_path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play against agents in your browser (pip install 'meld8[web]')")
    p.add_argument("--agents", default=None,
                   help="the other seats, comma separated: random, greedy, defensive, wary, ppo, distilled, "
                   "search (search:OPT=V+OPT=V), ppo:PATH.zip, rllib:FOLDER, pkg.mod:Class or cmd:COMMAND; one name "
                   "fills every seat "
                   "(default ppo,defensive; greedy,defensive without the train extra)")  # fmt: skip
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    p.add_argument("--rules", help="rule config YAML or built-in name")
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the first game, the next ones follow it (default: a fresh random seed per game)",
    )
    p.add_argument("--replays", default="replays", help="folder where finished games are saved (default replays/)")
    add_server_options(p)
    p.set_defaults(func=run)


def add_server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8008, help="port (default 8008)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser; print the address")
    p.add_argument("--limit-concurrency", type=int, default=None,
                   help="open connections, a request's own counted, past which a request is answered 503 (8..65535; "
                   "default 64: room for many tabs; meld8_app.web.app.LIMIT_CONCURRENCY)")  # fmt: skip


def check_server(args: argparse.Namespace) -> None:
    """--host, --port and --limit-concurrency, checked before anything is served (a bad one is one line, exit 2)."""
    import ipaddress

    from meld8_app.web.app import check_limit_concurrency  # the web extra: every caller has required it

    if args.limit_concurrency is not None:
        check_limit_concurrency(args.limit_concurrency, "--limit-concurrency")
    if isinstance(args.port, bool) or not 1 <= args.port <= 65535:
        raise ValueError(f"--port must be 1..65535, got {args.port}")
    if args.host != "localhost":
        try:
            address = ipaddress.ip_address(args.host)
        except ValueError:
            raise ValueError(
                f"--host must be an IP address or localhost (default 127.0.0.1), got {args.host!r}"
            ) from None
        if address.is_unspecified:  # every page was refused: its Host is an address, never 0.0.0.0 (session 46)
            raise ValueError(
                f"--host {args.host} listens on every address, but the table answers only the address it was "
                "given (its guard against DNS rebinding): give this machine's address on the network its players "
                "use, e.g. --host 192.168.1.20"
            )
    check_port_free(args.host, args.port)


def server_limits(args: argparse.Namespace) -> dict:
    """``serve``'s keyword for --limit-concurrency when it was given (else serve's default holds)."""
    return {} if args.limit_concurrency is None else {"limit_concurrency": args.limit_concurrency}


def check_port_free(host: str, port: int) -> None:
    """One meld8 line, before "the table is at ...", when another program already listens on the port."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: TIME_WAIT is no conflict
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ValueError(f"port {port} on {host} is in use ({exc.strerror}): stop the other program or choose "
                             "another --port") from None  # fmt: skip


def has_policies() -> bool:
    """Whether the ``ppo`` agent can load here (the train extra: torch and sb3-contrib)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "sb3_contrib"))


def default_agent(wanted: str | None, fallback: str) -> str:
    """``wanted`` when given; else ``ppo`` if it can load here, else ``fallback`` (and say so)."""
    if wanted is not None:
        return wanted
    if has_policies():
        return "ppo"
    import sys

    print(f"meld8: the ppo agent needs the train extra (pip install torch==2.13.0 'meld8[train]'); using {fallback}",
          file=sys.stderr)  # fmt: skip
    return fallback


def require_web() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ValueError(
            f"the browser table needs the web extra: pip install 'meld8[web]' (missing: {exc.name})"
        ) from None


def run(args: argparse.Namespace) -> int:
    import random

    from meld8_env.agent_spec import split_agents

    require_web()
    # "" would be the current folder, and an existing file failed at mkdir as a bare "[Errno 17] File exists"
    replays = output_path(args.replays, "--replays", "a folder for the finished games' replays (default replays/)")
    check_server(args)
    rules = rules_from(args.rules)
    if not 0 <= args.seat < rules.num_players:
        raise ValueError(f"--seat must be 0..{rules.num_players - 1}, got {args.seat}")
    spec = args.agents if args.agents is not None else default_agent(None, "greedy") + ",defensive"
    agents = split_agents(spec, "--agents")  # a path holding ',' is refused as such (red team, session 44)
    first = check_seed(args.seed, "seed") if args.seed is not None else random.SystemRandom().randrange(2**31)
    from meld8_app.web.app import create_app, serve
    from meld8_app.web.session import LiveGame

    # with --seed the games are first, first + 1, ... (reproducible, the user chose them); without it every game's
    # seed is drawn fresh: a revealed seed (shown once a game is over) must not give away the next game's cards
    games = given_seeds(first) if args.seed is not None else _fresh_seeds(first)
    # fail fast, before serving: bad agents or seat (a CHEATING records agent is refused by LiveGame), and an agent
    # that raised before your first move (the page would get a game whose seat the fallback already plays)
    probe = LiveGame(agents, args.seat, rules, first, None)
    probe.close()
    if probe.failures:
        seat, spec, why = probe.failures[0]
        raise ValueError(f"agent {spec!r} (seat {seat}) failed at its first decision: {why}; fix it or choose "
                         "another --agents")  # fmt: skip
    # after every check (nothing is written before), before serving: a folder that cannot be written fails now
    try:
        replays.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--replays {replays}: cannot create the folder ({exc.strerror or exc}); give a folder "
                         "you can write to") from None  # fmt: skip

    def new_game() -> LiveGame:
        return LiveGame(agents, args.seat, rules, next(games), replays)

    serve(lambda **guard: create_app("play", new_game=new_game, **guard), args.host, args.port, not args.no_browser,
          **server_limits(args))  # fmt: skip
    return 0


def given_seeds(first: int) -> Iterator[int]:
    """``first``, ``first + 1``, ... wrapping to 0 past 2**63 as a batch does (the game after ``--seed 2**63`` could
    not start, and the page's advice to fix the seed could not be followed: red team, session 37)."""
    return ((first + k) % (MAX_SEED + 1) for k in range(2**31))


def _fresh_seeds(first: int):
    """``first``, then a seed from the system's random source per game."""
    import random

    rng = random.SystemRandom()
    yield first
    while True:
        yield rng.randrange(2**31)
