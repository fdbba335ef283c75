"""Play many games at once with a given agent in each seat (the engine of tournaments and evaluation).

``play(agents, seats, seeds, rules)``: game g is seeded ``seeds[g]`` and seat s is played by
``agents[seats[g, s]]``. All games run in one ``Meld8Vector``; at every step each agent gets the rows
where it must act in one ``act_batch`` call (one forward pass for a policy). Returns one
:class:`GameRecord` per game with final scores, placements and per-seat deal statistics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector

RON, TSUMO, DRAW, CHOMBO = 1, 2, 3, 4


@dataclasses.dataclass
class GameRecord:
    seed: int
    seats: list[int]  # agent index in each seat
    final_scores: list[int] = dataclasses.field(default_factory=list)
    placements: list[int] = dataclasses.field(default_factory=list)
    deals: int = 0
    draws: int = 0
    wins: list[int] = dataclasses.field(default_factory=list)  # per seat
    tsumo: list[int] = dataclasses.field(default_factory=list)
    deal_ins: list[int] = dataclasses.field(default_factory=list)
    calls: list[int] = dataclasses.field(default_factory=list)
    win_han: list[int] = dataclasses.field(default_factory=list)  # summed over wins

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def play(
    agents: Sequence,
    seats: np.ndarray,
    seeds: Sequence[int],
    rules: RuleConfig | None = None,
    batch: int = 256,
    on_game=None,
) -> list[GameRecord]:
    """Play every (seed, seating) game; ``on_game(index, record)`` is called as each one finishes."""
    rules = rules or RuleConfig()
    P = rules.num_players
    seats = np.asarray(seats, dtype=np.int64)
    n = len(seeds)
    if seats.shape != (n, P):
        raise ValueError(f"seats must have shape ({n}, {P}), got {seats.shape}")
    for a in agents:
        if hasattr(a, "setup"):
            a.setup(rules)
    records: list[GameRecord | None] = [None] * n
    queue = list(range(n))
    width = min(batch, n)
    v = Meld8Vector(width, rules=rules, seed=0, autoreset=False)
    slot_game = np.full(width, -1, np.int64)

    def start(slots: np.ndarray) -> None:
        for s in slots:
            if queue:
                g = queue.pop(0)
                slot_game[s] = g
                records[g] = GameRecord(int(seeds[g]), seats[g].tolist(), wins=[0] * P, tsumo=[0] * P,
                                        deal_ins=[0] * P, calls=[0] * P, win_han=[0] * P)  # fmt: skip
                v.seeds[s] = np.uint64(seeds[g])
            else:
                slot_game[s] = -1
        live = slots[slot_game[slots] >= 0]
        if live.size:
            v.engine.reset_games(live, v.seeds[live])

    v.reset(seed=0)
    start(np.arange(width))
    v._observe()
    while (slot_game >= 0).any():
        st = v.engine.state
        calls_before = st["calls_used"][:, :P].copy()
        deals_before = st["deals"].copy()
        acts = np.zeros(width, np.int64)
        live = slot_game >= 0
        seat_now = v.current_seat.astype(np.int64)
        agent_now = np.where(live, seats[np.maximum(slot_game, 0), np.clip(seat_now, 0, P - 1)], -1)
        for k, agent in enumerate(agents):
            rows = np.flatnonzero(agent_now == k)
            if rows.size:
                acts[rows] = agent.act_batch(v.observation[rows], v.action_mask[rows])
        v.step(acts)
        st = v.engine.state
        same_deal = st["deals"] == deals_before
        new_calls = (st["calls_used"][:, :P] > calls_before) & same_deal[:, None]
        for s in np.flatnonzero(live):
            rec = records[slot_game[s]]
            for p in np.flatnonzero(new_calls[s]):
                rec.calls[p] += 1
            res = int(st["result"][s])
            if res:
                rec.deals += 1
                if res == DRAW:
                    rec.draws += 1
                elif res in (RON, TSUMO):
                    w = int(st["win_seat"][s])
                    rec.wins[w] += 1
                    rec.win_han[w] += int(st["win_han"][s])
                    if res == TSUMO:
                        rec.tsumo[w] += 1
                    else:
                        rec.deal_ins[int(st["lose_seat"][s])] += 1
            if st["phase"][s] == 3:
                rec.final_scores = st["final_scores"][s, :P].tolist()
                rec.placements = st["placements"][s, :P].tolist()
                if on_game is not None:
                    on_game(int(slot_game[s]), rec)
                start(np.array([s]))
        v._observe()
    return records  # type: ignore[return-value]
