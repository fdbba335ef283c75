"""Random-legal self-play statistics on the fast engine (``meld8 simulate``).

Every seat plays a uniformly random legal action. Reported per hand (one deal of cards: a round or
a replay of it): draw rate, Ron/Tsumo split,
chombo (penalty mode only), average han and points of wins, win forms and yaku frequencies (each
win re-scored by the Python scorer from the hand the engine kept).
"""

from __future__ import annotations

import collections
import sys
import time
from typing import Any

import numpy as np

from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector


def simulate(games: int, seed: int = 0, rules: RuleConfig | None = None, batch: int = 256, progress: bool = True):
    rules = rules or RuleConfig()
    batch = max(1, min(batch, games))
    v = Meld8Vector(batch, rules=rules, seed=seed)
    v.reset()
    done = 0
    steps = 0
    kinds = collections.Counter()
    forms = collections.Counter()
    yaku = collections.Counter()
    han, points = [], []
    started = batch
    active = np.ones(batch, bool)  # slots whose current game is one we count
    t0 = time.perf_counter()
    while done < games:
        v.step(v.sample_actions())
        steps += int(active.sum())
        for h in v.hand_outcomes():
            if not active[h.game]:
                continue
            kinds[h.kind.label] += 1
            if h.is_win:
                r = h.score()
                forms[r.form] += 1
                yaku.update(y for y, _ in r.yaku)
                han.append(r.han)
                points.append(r.points)
        for i in np.flatnonzero(v.terminated & active):
            done += 1
            if started < games:
                started += 1
            else:
                active[i] = False
        if progress and sys.stderr.isatty():
            rate = done / max(time.perf_counter() - t0, 1e-9)
            print(f"\r{done}/{games} games ({rate:,.1f}/s)", end="", file=sys.stderr)
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    hands = sum(kinds.values())
    wins = kinds["ron"] + kinds["tsumo"]
    return {
        "games": done,
        "hands": hands,
        "agent_steps": steps,
        "seconds": round(time.perf_counter() - t0, 3),
        "draw_rate": kinds["draw"] / hands if hands else 0.0,
        "ron": kinds["ron"],
        "tsumo": kinds["tsumo"],
        "chombo": kinds["chombo"],
        "ron_share": kinds["ron"] / wins if wins else 0.0,
        "average_han": float(np.mean(han)) if han else 0.0,
        "average_points": float(np.mean(points)) if points else 0.0,
        "win_forms": dict(forms.most_common()),
        "yaku_frequency": {k: n / wins for k, n in yaku.most_common()} if wins else {},
    }


def format_report(stats: dict[str, Any]) -> str:
    lines = [
        f"{stats['games']} games, {stats['hands']} hands, {stats['agent_steps']:,} agent steps in {stats['seconds']} s",
        f"draw rate        {stats['draw_rate']:.1%}",
        f"wins             {stats['ron']} ron / {stats['tsumo']} tsumo (ron share {stats['ron_share']:.1%})",
        f"average win      {stats['average_han']:.2f} han, {stats['average_points']:,.0f} points",
        f"chombo           {stats['chombo']}",
        "win forms        " + ", ".join(f"{k} {n}" for k, n in stats["win_forms"].items()),
        "yaku (per win)   " + ", ".join(f"{k} {f:.1%}" for k, f in stats["yaku_frequency"].items()),
    ]
    return "\n".join(lines)
