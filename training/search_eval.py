"""Duplicate games for agents that read information sets (the search agent), with decision timing.

``play_duplicate(specs, boards, seed, rules)`` plays every seating of each board seed (the same boards as
``meld8 tournament``: ``training.tournament.board_seed``) in one ``FastBatch``; an agent with
``wants_infoset = True`` gets ``act_batch(obs, masks, infosets=...)`` built from the engine records by
``agents.search_backend.infoset_of`` (the seat's view only), and the diagnostics ``search:cheat=1`` and
``agents.oracle:OracleAgent`` (``wants_records = True``) also get the true records. Returns per-game
placements and the time each agent spent per decision.

This is the evaluation harness of docs/search.md (the cheating ceiling cannot run through ``meld8
tournament``, whose table never hands an agent the true record). ``python -m training.search_eval
--agents search,defensive,greedy --boards 50 --seed 9 [--out results.json]`` prints the summary table.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agents import search_backend as sb
from agents.registry import load_agent
from meld8_env.agent import wants_records
from meld8_env.codes import Phase
from meld8_env.engine.fast import FastBatch
from meld8_env.rules import RuleConfig
from training.run_folder import write_atomic
from training.tournament import board_seed, seatings
from training.tournament_report import progress as progress_bar


def play_duplicate(
    specs: Sequence[str],
    boards: int,
    seed: int,
    rules: RuleConfig | None = None,
    board_offset: int = 0,
    progress: bool = False,
) -> dict:
    """Play ``boards`` boards (every seating) and return placements (games, P) per seat, seatings (games, P)
    as agent indices, decisions and seconds per agent. ``board_offset``: play boards board_offset.. of the seed (the
    same deals as ``meld8 tournament``'s boards of those indices). ``progress``: a bar of the games over on stderr
    (the games advance in lockstep, so it moves mostly near the end)."""
    rules = rules or RuleConfig()
    P = rules.num_players
    agents = [load_agent(s, rules, seed + i) for i, s in enumerate(specs)]
    seats_list = seatings(list(specs))
    seats = np.array([s for _ in range(boards) for s in seats_list], np.int64)
    seeds = np.array([board_seed(seed, board_offset + b) for b in range(boards) for _ in seats_list], np.uint64)
    n = len(seeds)
    fb = FastBatch(n, rules)
    fb.reset(seeds)
    decisions = np.zeros(len(agents), np.int64)
    seconds = np.zeros(len(agents))
    bar, done = progress_bar(n, progress, unit="game"), 0
    while not fb.over.all():
        obs, masks = fb.observe()
        acting = fb.acting.astype(np.int64)
        live = fb.phase != int(Phase.OVER)
        who = np.where(live, seats[np.arange(n), np.clip(acting, 0, P - 1)], -1)
        acts = np.full(n, -1, np.int64)
        for k, agent in enumerate(agents):
            rows = np.flatnonzero(who == k)
            if rows.size == 0:
                continue
            t0 = time.perf_counter()
            cheat = wants_records(agent)
            if getattr(agent, "wants_infoset", False) or cheat:
                recs = fb.snapshot(rows)
                infos = [sb.infoset_of(recs[j], int(acting[r]), rules) for j, r in enumerate(rows.tolist())]
                extra = {"records": recs} if cheat else {}  # the table's call otherwise: information sets only
                acts[rows] = agent.act_batch(obs[rows], masks[rows], infosets=infos, **extra)
            else:
                acts[rows] = agent.act_batch(obs[rows], masks[rows])
            seconds[k] += time.perf_counter() - t0
            decisions[k] += rows.size
        bad = fb.step(acts)
        if bad.any():
            g = int(np.flatnonzero(bad)[0])
            raise RuntimeError(f"game {g}: {fb.illegal_message(g, int(acts[g]))}")
        over = int(fb.over.sum())
        bar.update(over - done)
        done = over
    bar.close()
    placements = fb.state["placements"][:, :P].astype(np.int64)
    return {"placements": placements, "seats": seats, "decisions": decisions, "seconds": seconds, "agents": list(specs)}


def agent_placements(result: dict, k: int) -> np.ndarray:
    """Placement of agent ``k`` in every game (its first seat when it holds several)."""
    seats, pl = result["seats"], result["placements"]
    first = np.argmax(seats == k, axis=1)
    return pl[np.arange(len(pl)), first]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", required=True, help="comma-separated specs, one per seat")
    ap.add_argument("--boards", type=int, default=20)
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument(
        "--board-offset", type=int, default=0, help="play boards offset..offset+boards-1 of the seed (0: the first)"
    )
    ap.add_argument("--rules", default=None)
    ap.add_argument("--out", default=None, help="write the summary as JSON here")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    args = ap.parse_args(argv)
    rules = RuleConfig.load(args.rules)
    specs = args.agents.split(",")
    if len(specs) != rules.num_players:
        ap.error(f"give one agent per seat: {rules.num_players}, got {len(specs)}")
    if args.boards < 1 or args.board_offset < 0:
        ap.error(f"--boards must be >= 1 and --board-offset >= 0, got {args.boards} and {args.board_offset}")
    out = Path(args.out) if args.out else None
    if out is not None and (out.is_dir() or not out.parent.is_dir()):  # checked before minutes of games, not after
        ap.error(f"--out {args.out}: give a file path in an existing folder")
    t0 = time.time()
    res = play_duplicate(specs, args.boards, args.seed, rules, args.board_offset, progress=not args.no_progress)
    summary = {"agents": specs, "boards": args.boards, "board_offset": args.board_offset, "seed": args.seed,
               "games": len(res["seats"]), "wall_s": time.time() - t0, "rows": []}  # fmt: skip
    print("| agent | mean placement | 95% CI | games | decisions | ms/decision |")
    print("|---|---|---|---|---|---|")
    for k, spec in enumerate(dict.fromkeys(specs)):
        k = specs.index(spec)
        pl = agent_placements(res, k)
        mean, half = float(pl.mean()), 1.96 * float(pl.std(ddof=1)) / np.sqrt(len(pl))
        ms = 1000 * res["seconds"][k] / max(1, res["decisions"][k])
        ci = f"[{mean - half:.3f}, {mean + half:.3f}]"
        print(f"| {spec} | {mean:.3f} | {ci} | {len(pl)} | {res['decisions'][k]} | {ms:.2f} |")
        # per board (its seatings in order; boards board_offset.. of the seed), for pairing with another run on the same
        # boards (bench/paired_logs.py)
        boards = pl.reshape(args.boards, -1).mean(axis=1).round(6).tolist()
        summary["rows"].append({"agent": spec, "mean": mean, "ci95": [mean - half, mean + half], "games": len(pl),
                                "decisions": int(res["decisions"][k]), "ms_per_decision": ms,
                                "board_means": boards})  # fmt: skip
    if out is not None:
        write_atomic(out, json.dumps(summary, indent=1))  # a kill leaves the old file or the whole new one


if __name__ == "__main__":
    main()
