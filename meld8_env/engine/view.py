"""A read-only view of one fast-engine game with the attribute names of ``reference.Game``, so the
renderer, replays and tests read either engine the same way."""

from __future__ import annotations

import dataclasses

import numpy as np

from meld8_env.codes import Phase
from meld8_env.rules import RuleConfig


@dataclasses.dataclass(frozen=True)
class ClaimView:
    card: int
    discarder: int


@dataclasses.dataclass(frozen=True)
class GameView:
    rules: RuleConfig
    P: int
    hands: list[int]
    melds: list[int]
    discards: list[list]
    scores: list[int]
    calls_used: list[int]
    round: int
    replays: int
    dealer: int
    phase: int
    acting_seat: int
    drawn: int
    dora_indicator: int
    wall_left: int
    claim: ClaimView | None
    final_scores: list[int] | None
    placements: list[int] | None

    @property
    def over(self) -> bool:
        return self.phase == Phase.OVER


def view_of(row: np.void, rules: RuleConfig) -> GameView:
    P = rules.num_players
    discards = []
    for p in range(P):
        n, called = int(row["ndisc"][p]), int(row["called"][p])
        discards.append([[int(row["discards"][p][i]), bool(called >> i & 1)] for i in range(n)])
    phase = int(row["phase"])
    over = phase == Phase.OVER
    return GameView(
        rules=rules,
        P=P,
        hands=[int(x) for x in row["hands"][:P]],
        melds=[int(x) for x in row["melds"][:P]],
        discards=discards,
        scores=[int(x) for x in row["scores"][:P]],
        calls_used=[int(x) for x in row["calls_used"][:P]],
        round=int(row["round"]),
        replays=int(row["replays"]),
        dealer=(int(row["chiicha"]) + int(row["round"])) % P,
        phase=phase,
        acting_seat=int(row["acting"]),
        drawn=int(row["drawn"]),
        dora_indicator=int(row["dora_ind"]),
        wall_left=max(0, int(row["wall_end"]) - int(row["wall_pos"])),
        claim=ClaimView(int(row["claim_card"]), int(row["claim_discarder"])) if phase == Phase.CLAIM else None,
        final_scores=[int(x) for x in row["final_scores"][:P]] if over else None,
        placements=[int(x) for x in row["placements"][:P]] if over else None,
    )
