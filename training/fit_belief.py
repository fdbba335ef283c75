"""Fit the belief sampler's status table (``meld8_env/data/belief_table.json``) on bot self-play.

Usage: python training/fit_belief.py [--games 240] [--seed 2026] [--out meld8_env/data/belief_table.json]

For every decision state of ``greedy``/``defensive`` games (``training.bot_states``), 3p and 2p, and every
opponent j of the acting seat: the key ``meld8_env.belief.status_key(infoset, j)`` (cards left in the live
wall, has called, discards made; all public) and the oracle label "j is ready" (its waits, R33, are not
empty and none is in its own discards) read from the true record. The file holds the counts
(ready, total) per key, the command that made them and the sha256 of the tables (checked on load).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from meld8_env.belief import DISCARD_BUCKETS, WALL_BUCKETS, status_key, table_checksum
from meld8_env.hands import waits_batch
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from training.bot_states import play_bot_states


def true_ready(records: np.ndarray, seat: np.ndarray, P: int) -> np.ndarray:
    """(N,) bool: seat ``seat`` of each record is ready (waits non-empty, none in its own discards)."""
    i = np.arange(len(records))
    waits = waits_batch(records["hands"][i, seat].copy(), records["melds"][i, seat].copy())
    disc = np.zeros(len(records), np.uint64)
    for k in range(records["discards"].shape[2]):
        c = records["discards"][i, seat, k].astype(np.int64)
        used = (k < records["ndisc"][i, seat]) & ~((records["called"][i, seat] >> np.uint32(k)) & 1).astype(bool)
        disc[used] |= np.uint64(1) << c[used].astype(np.uint64)
    return (waits != 0) & ((waits & disc) == 0)


def fit(rules: RuleConfig, games: int, seed: int) -> tuple[list, int]:
    P = rules.num_players
    counts = np.zeros((WALL_BUCKETS, 2, DISCARD_BUCKETS, 2), np.int64)
    states = play_bot_states(rules, games, seed)
    for k in range(1, P):
        opp = ((states["acting"].astype(np.int64) + k) % P).astype(np.int64)
        label = true_ready(states, opp, P)
        for r, j, y in zip(states, opp.tolist(), label.tolist(), strict=True):
            key = status_key(infoset(r, int(r["acting"]), rules), j)
            counts[key][0] += y
            counts[key][1] += 1
    return counts.tolist(), len(states)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=240)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", type=Path, default=Path("meld8_env/data/belief_table.json"))
    a = ap.parse_args()
    tables, sizes = {}, {}
    for key, rules in (("3p", RuleConfig()), ("2p", RuleConfig.two_player())):
        tables[key], sizes[key] = fit(rules, a.games, a.seed)
    data = {
        "about": "P(ready) counts [ready, total] by (wall_left // 4, has called, discards // 3); meld8_env.belief",
        "command": f"python training/fit_belief.py --games {a.games} --seed {a.seed}",
        "states": sizes,
        "tables": tables,
        "sha256": table_checksum(tables),
    }
    # one line per table row keeps the file small and diffable
    text = json.dumps({k: v for k, v in data.items() if k != "tables"}, indent=1)[:-2]
    rows = ",\n".join(f'  "{k}": {json.dumps(v, separators=(",", ":"))}' for k, v in tables.items())
    a.out.write_text(text + ',\n "tables": {\n' + rows + "\n }\n}\n")
    print(f"wrote {a.out}: {sizes} decision states")


if __name__ == "__main__":
    main()
