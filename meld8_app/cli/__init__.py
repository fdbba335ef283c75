"""The ``meld8`` command line: one module per command (``meld8_app/cli/<command>.py``), each with
``add_parser(sub)`` and ``run(args)``; a command imports what it needs only when it runs.

Bad input exits with code 2 and one line on stderr naming the problem; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from meld8_env.cards import CardError
from meld8_env.rules import RuleConfigError
from meld8_env.safe_text import one_line

COMMANDS = ("score", "waits", "distance", "simulate", "tournament", "train", "replay", "play", "view", "review")


class StoreOnce(argparse.Action):
    """argparse's ``store``, refusing a second value for the same option: ``--boards 1 --deals 2`` or ``--agents``
    twice kept the last silently (red team, session 37), where a key given twice is refused in every file."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        given = namespace.__dict__.setdefault("given_options", {})  # dest -> the option string that set it
        if self.dest in given:
            first = given[self.dest]
            again = "given twice" if first == option_string else f"repeats {first} (another name of it)"
            parser.error(f"{option_string} {again}: give it once")
        given[self.dest] = option_string
        setattr(namespace, self.dest, values)


def typed_options(args: argparse.Namespace, *dests: str) -> list[str]:
    """The option strings the user typed for ``dests`` (recorded by :class:`StoreOnce`), in ``dests``' order: a
    command refuses options that do nothing in the mode it runs in."""
    given = getattr(args, "given_options", {})
    return [given[d] for d in dests if d in given]


class OneLineParser(argparse.ArgumentParser):
    """argparse with one-line errors (``meld8 CMD: error: ...``, exit 2) instead of a usage block, and options
    given once (:class:`StoreOnce`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)  # the default action, before any argument is added
        self.register("action", "store", StoreOnce)

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from meld8_env import __version__

    p = OneLineParser(prog="meld8", description="Meld8 rules engine tools (cards in R4 notation).")
    p.add_argument("--version", action="version", version=f"meld8 {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for name in COMMANDS:
        importlib.import_module(f"meld8_app.cli.{name}").add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # ``meld8 replay ... | head``: the reader has all it wanted; end quietly
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's flush at exit must not raise again
        return 0
    except (CardError, RuleConfigError, ValueError, OSError) as exc:
        print(f"meld8 {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except (TypeError, OverflowError) as exc:  # a value of the wrong kind that a check did not name
        print(f"meld8 {args.command}: error: bad value: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # training saves a checkpoint first and says where
        print(f"meld8 {args.command}: interrupted{': ' + str(exc) if str(exc) else ''}", file=sys.stderr)
        return 128 + int(getattr(exc, "signum", 2))  # 130 for Ctrl-C, 143 for a SIGTERM a trainer saved on


def _one_line(exc: BaseException) -> str:
    """The error as one bounded line, control characters escaped: messages quote files, bots and pages."""
    return one_line(str(exc))


if __name__ == "__main__":
    sys.exit(main())
