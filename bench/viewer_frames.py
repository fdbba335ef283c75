"""The replay viewer's preparation: seconds to build a game's frames and the JSON the page is sent.

Usage: ``python bench/viewer_frames.py [--seed 3] [--rounds 3] [--unshared]``

Workload: one long 3-player game (every seat plays the legal action at index ``len(actions) % n``, a poor
player's game: many drawn hands), its frames built by ``meld8_app.web.session.replay_frames`` and packed by
``pack_frames`` as ``meld8 view`` does. Rows (markdown, ``bench/ab.py`` reads them): actions, hands (results),
frames, the median seconds over ``--rounds`` builds, and the bytes of JSON sent (packed; and the frames as they
were sent before each hand's results travelled once). ``--unshared`` builds the frames with ``merge`` copying
every finished result into each frame, as before session 32 (the baseline of the same run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import meld8_app.web.session as session  # noqa: E402
from meld8_env.protocol import GameStreams  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402


def long_game(rules: RuleConfig, seed: int) -> list[int]:
    """The actions of one game in which each seat plays the legal action at index len(actions) % n."""
    g = GameStreams(rules, seed=seed)
    while (p := g.pending()) is not None:
        acts = p[1]["actions"]
        g.step(acts[len(g.answers) % len(acts)]["id"])
    return list(g.answers)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--unshared", action="store_true", help="merge without sharing finished results (the baseline)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    rules = RuleConfig()
    actions = long_game(rules, args.seed)
    if args.unshared:
        merge = session.merge
        session.merge = lambda views, done=None: merge(views, None)
    times = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        frames = session.replay_frames(rules, args.seed, actions)
        packed, results = session.pack_frames(frames)
        times.append(time.perf_counter() - t0)
    print("| row | value |")
    print("|---|---:|")
    print(f"| actions | {len(actions):,} |")
    print(f"| hands (results) | {len(results):,} |")
    print(f"| frames | {len(frames):,} |")
    print(f"| seconds to build and pack (median of {args.rounds}) | {statistics.median(times):.2f} |")
    print(f"| JSON sent, bytes | {len(json.dumps({'frames': packed, 'results': results})):,} |")
    print(f"| JSON of the frames with their results inside, bytes | {len(json.dumps(frames)):,} |")


if __name__ == "__main__":
    main()
