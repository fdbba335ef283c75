"""Random-legal self-play statistics on the fast engine (``meld8 simulate``).

Every seat plays a uniformly random legal action. Reported per deal: draw rate, Ron/Tsumo split,
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
from meld8_env.scoring import score_masks
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
        st = v.engine.state
        ended = dict(zip(v.ended_index.tolist(), v.ended_states, strict=True))
        res = st["result"].copy()
        for i, row in ended.items():
            res[i] = row["result"]
        for i in np.flatnonzero((res > 0) & active):
            kind = ("", "ron", "tsumo", "draw", "chombo")[int(res[i])]
            kinds[kind] += 1
            if kind in ("ron", "tsumo"):
                row = ended.get(int(i), st[i])
                r = score_masks(
                    int(row["win_hand"]), int(row["win_meld"]), int(row["win_card"]),
                    tsumo=kind == "tsumo", min_han=int(row["win_min_han"]), dealer=bool(row["win_flags"] & 2),
                    dora=int(row["win_dora"]), first_draw=bool(row["win_flags"] & 4),
                    last_card=bool(row["win_flags"] & 8), rules=rules,
                )  # fmt: skip
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
    deals = sum(kinds.values())
    wins = kinds["ron"] + kinds["tsumo"]
    return {
        "games": done,
        "deals": deals,
        "agent_steps": steps,
        "seconds": round(time.perf_counter() - t0, 3),
        "draw_rate": kinds["draw"] / deals if deals else 0.0,
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
        f"{stats['games']} games, {stats['deals']} deals, {stats['agent_steps']:,} agent steps in {stats['seconds']} s",
        f"draw rate        {stats['draw_rate']:.1%}",
        f"wins             {stats['ron']} ron / {stats['tsumo']} tsumo (ron share {stats['ron_share']:.1%})",
        f"average win      {stats['average_han']:.2f} han, {stats['average_points']:,.0f} points",
        f"chombo           {stats['chombo']}",
        "win forms        " + ", ".join(f"{k} {n}" for k, n in stats["win_forms"].items()),
        "yaku (per win)   " + ", ".join(f"{k} {f:.1%}" for k, f in stats["yaku_frequency"].items()),
    ]
    return "\n".join(lines)
