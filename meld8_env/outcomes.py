"""Typed outcomes of engine steps: how each hand was settled and how each game ended.

After every ``Meld8Vector.step`` the batch reports, for each game that just finished a hand, a
:class:`HandOutcome` (result, winner, discarder, han, points, yaku, and the **payment of every seat**:
who paid whom how much), and for each game that just ended a :class:`GameOutcome` (final scores with
placement points, placements). They are built from the engine's own record of the step, so every
face (arena, simulate, the seat protocol's settlement events, a table's ledger) reads one source.

Payments are the seats' point changes from the hand (zero-sum, R38/R41): Ron - the discarder pays the
winner; Tsumo - each other seat pays its share (R38; with two players the opponent pays all); chombo -
the offender pays each other seat (R41); draw - nothing (R39).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from meld8_env.cards import format_cards, from_mask
from meld8_env.codes import Phase, Result, WinFlag
from meld8_env.rules import RuleConfig
from meld8_env.scoring import score_masks


@dataclasses.dataclass(frozen=True)
class HandOutcome:
    """One settled hand of game ``game`` (index in its batch)."""

    game: int
    hand: int  # 1-based number of the deal within the game (replays count)
    round: int  # 0-based round of the hand
    kind: Result
    winner: int  # -1 unless Ron / Tsumo
    discarder: int  # Ron: the seat that dealt in; chombo: the offender; else -1
    han: int
    points: int  # the value of the win (0 without a win)
    payments: tuple[int, ...]  # point change of each seat
    win_hand: int = 0  # the winner's concealed cards with the winning card (53-bit mask)
    win_meld: int = 0
    win_card: int = -1
    flags: WinFlag = WinFlag(0)
    dora: int = -1
    min_han: int = 0
    rules: RuleConfig = dataclasses.field(default_factory=RuleConfig, compare=False, repr=False)

    @property
    def is_win(self) -> bool:
        return self.kind in (Result.RON, Result.TSUMO)

    def transfers(self) -> list[tuple[int, int, int]]:
        """(payer, receiver, points) for every payment of this hand."""
        out = []
        if self.is_win:
            for p, d in enumerate(self.payments):
                if d < 0:
                    out.append((p, self.winner, -d))
        elif self.kind == Result.CHOMBO:
            for p, d in enumerate(self.payments):
                if d > 0:
                    out.append((self.discarder, p, d))
        return out

    def score(self):
        """The scorer's full reading of the win (yaku with han, form, groups), or None without a win."""
        return _score(self, self.rules) if self.is_win else None

    @property
    def yaku(self) -> list[tuple[str, int]]:
        """(yaku, han) of the win ([] without a win)."""
        res = self.score()
        return list(res.yaku) if res is not None else []

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "hand": self.hand,
            "round": self.round,
            "result": self.kind.label,
            "winner": self.winner,
            "discarder": self.discarder,
            "han": self.han,
            "points": self.points,
            "payments": list(self.payments),
            "transfers": [{"from": a, "to": b, "points": n} for a, b, n in self.transfers()],
        }
        if self.is_win:
            out["win_hand"] = format_cards(from_mask(self.win_hand))
            out["win_meld"] = format_cards(from_mask(self.win_meld))
            out["win_card"] = format_cards([self.win_card])
            out["yaku"] = [[name, han] for name, han in self.yaku]
        return out


@functools.lru_cache(maxsize=4096)
def _score(o: HandOutcome, rules: RuleConfig):  # rules is part of the key: outcomes compare without it
    return score_masks(
        o.win_hand, o.win_meld, o.win_card,
        tsumo=o.kind == Result.TSUMO, min_han=o.min_han, dealer=bool(o.flags & WinFlag.DEALER), dora=o.dora,
        first_draw=bool(o.flags & WinFlag.FIRST_DRAW), last_card=bool(o.flags & WinFlag.LAST_CARD), rules=rules,
    )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class GameOutcome:
    """A finished game: final scores include placement points (R40); placements are 1-based."""

    game: int
    seed: int
    final_scores: tuple[int, ...]
    placements: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "final_scores": list(self.final_scores), "placements": list(self.placements)}


def hand_outcomes(index: np.ndarray, rows: np.ndarray, rules: RuleConfig) -> list[HandOutcome]:
    """Outcomes of the engine records ``rows`` (games ``index``) whose last step ended a hand."""
    P = rules.num_players
    if len(index) != len(rows):
        raise ValueError(f"hand_outcomes: {len(index)} game indices for {len(rows)} records")
    ended = np.flatnonzero(rows["result"] != int(Result.NONE)) if len(rows) else np.zeros(0, np.int64)
    if not ended.size:
        return []
    r = rows[ended]  # each field read once for every ended hand: a record's fields one by one cost far more
    games = np.asarray(index)[ended].tolist()
    cols = {k: r[k].tolist() for k in ("result", "deals", "phase", "hand_round", "win_seat", "lose_seat", "win_han",
                                       "win_points", "win_hand", "win_meld", "win_card", "win_flags", "win_dora",
                                       "win_min_han")}  # fmt: skip
    deltas = r["deltas"][:, :P].tolist()
    out = []
    for i, g in enumerate(games):
        kind = Result(cols["result"][i])
        win = kind in (Result.RON, Result.TSUMO)
        out.append(
            HandOutcome(
                game=g,
                hand=cols["deals"][i] - (0 if cols["phase"][i] == Phase.OVER else 1),  # a new deal unless over
                round=cols["hand_round"][i],
                kind=kind,
                winner=cols["win_seat"][i] if win else -1,
                discarder=cols["lose_seat"][i] if kind in (Result.RON, Result.CHOMBO) else -1,
                han=cols["win_han"][i] if win else 0,
                points=cols["win_points"][i] if win else 0,
                payments=tuple(deltas[i]),
                win_hand=cols["win_hand"][i] if win else 0,
                win_meld=cols["win_meld"][i] if win else 0,
                win_card=cols["win_card"][i] if win else -1,
                flags=WinFlag(cols["win_flags"][i]) if win else WinFlag(0),
                dora=cols["win_dora"][i] if win else -1,
                min_han=cols["win_min_han"][i] if win else 0,
                rules=rules,
            )
        )
    return out


def game_outcomes(index: np.ndarray, seeds: np.ndarray, rows: np.ndarray, rules: RuleConfig) -> list[GameOutcome]:
    P = rules.num_players
    return [
        GameOutcome(
            game=g,
            seed=int(seed),
            final_scores=tuple(int(x) for x in row["final_scores"][:P]),
            placements=tuple(int(x) for x in row["placements"][:P]),
        )
        for g, seed, row in zip(index.tolist(), seeds.tolist(), rows, strict=True)
    ]
