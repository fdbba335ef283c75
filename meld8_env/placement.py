"""Placement table: the expected final placement of every seat given the scores after a hand.

A search that scores its rollouts in raw points plays the same hand whether it leads by 40,000 in
the last round or trails by 2,000; players play for placement (R40). This table turns the end of a
hand into placement units, so the search folds when leading and pushes when trailing late.

Model (fitted by ``training/placement_fit.py`` on bot games, shipped as ``meld8_env/data/placement_*.json``
with a SHA-256 checksum):

- every hand that ends with a payment (a win or a chombo) moves the scores by one of the observed
  *dealer-relative* payment vectors of its round (entry 0 = the dealer, then clockwise), drawn with its
  observed frequency, independently of the scores (true for ``greedy`` / ``defensive``, which never read
  them);
- a drawn hand replays the round with no payment (R8, R39), so it changes nothing and is left out
  (the table assumes ``max_replays: null``, the default);
- the dealer of round r is ``(chiicha + r) % P`` (R8) and equal scores rank by seat order from the
  chiicha (R40).

The table is then exact dynamic programming over the remaining rounds on a grid of scores (steps of
``unit`` points, ``+-span`` units around the starting score, clipped at the edges):
``V[R] = placements of the final scores`` and ``V[r] = sum_o p_r(o) * V[r + 1](scores + o)``.

``PlacementTable.expected(scores (N, P), next_round (N,), chiicha (N,)) -> (N, P)`` float64: each seat's
expected final placement (1 = first) when round ``next_round`` is the next one to play (``rounds``: the game
is over and the placements are exact). Seats are absolute seat ids.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib.resources import files
from pathlib import Path

import numpy as np

from meld8_env.config_io import is_int
from meld8_env.rules import RuleConfig, largest_payment

FORMAT_VERSION = 1
SPAN = 100  # grid half-width in units: +-100,000 points around the start at the default 1,000-point unit


def payload_checksum(data: dict) -> str:
    """SHA-256 of the canonical JSON of ``data`` without its ``sha256`` field."""
    body = {k: v for k, v in data.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def shipped_path(rules: RuleConfig) -> Path:
    """Where the table fitted for these rules is shipped (package data)."""
    return Path(str(files("meld8_env") / "data" / f"placement_{rules.rules_hash[:12]}.json"))


def load_outcomes(path: Path | str, rules: RuleConfig) -> dict:
    """The fitted outcome data at ``path``, checked: format, checksum and that it was fitted under ``rules``."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(
            f"no placement table for these rules at {path}: build it with "
            "python -m training.placement_fit --rules RULES (rules hash " + rules.rules_hash[:12] + ")"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: placement table is not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
        raise ValueError(f"{path}: not a placement table of format {FORMAT_VERSION}")
    if data.get("sha256") != payload_checksum(data):
        raise ValueError(f"{path}: placement table checksum mismatch (file edited or truncated); rebuild it")
    if data.get("rules_hash") != rules.rules_hash:
        raise ValueError(f"{path}: placement table was fitted for other rules ({data.get('rules_hash')!r})")
    problem = outcomes_problem(data, rules)
    if problem:
        raise ValueError(f"{path}: placement table {problem}")
    return data


def outcomes_problem(data: dict, rules: RuleConfig) -> str:
    """What is wrong with the outcome data's shape ('' when nothing): a positive integer ``unit``, and per round
    of ``rules`` a list of rows with an integer ``count`` >= 0 and ``payments``, one integer per seat within the
    largest payment a hand can make (``rules.largest_payment``, so the grid lookups stay in range)."""
    unit, rounds, P = data.get("unit"), data.get("rounds"), rules.num_players
    if not is_int(unit) or not 0 < unit <= rules.starting_score:
        return f"field 'unit' must be an integer 1..{rules.starting_score}, got {unit!r:.40}"
    if not isinstance(rounds, list) or len(rounds) != rules.rounds:
        return f"field 'rounds' must be a list of {rules.rounds} rounds (the rules' rounds)"
    top = largest_payment(rules)  # what one hand moves a seat by at most (rules.score_bound adds it per round)
    for r, rows in enumerate(rounds):
        if not isinstance(rows, list):
            return f"round {r} must be a list of outcome rows"
        for k, row in enumerate(rows):
            ok = isinstance(row, dict) and is_int(row.get("count")) and row["count"] >= 0
            pay = row.get("payments") if isinstance(row, dict) else None
            ok = ok and isinstance(pay, list) and len(pay) == P and all(is_int(x) and abs(x) <= top for x in pay)
            if not ok:
                return f"round {r} row {k} must be {{count: int >= 0, payments: {P} integers within +-{top}}}"
    return ""


class PlacementTable:
    """Expected final placements from fitted per-round payment distributions (module docstring)."""

    def __init__(self, outcomes: dict, rules: RuleConfig, span: int = SPAN) -> None:
        self.rules = rules
        self.P, self.R = rules.num_players, rules.rounds
        self.unit = int(outcomes["unit"])
        self.start = rules.starting_score
        self.total = self.start * self.P
        self.span = span
        self.G = 2 * span + 1
        per_round = outcomes["rounds"]
        if len(per_round) != self.R:
            raise ValueError(f"placement table has {len(per_round)} rounds, the rules have {self.R}")
        self.table = self._solve(per_round)

    # -- building ---------------------------------------------------------------------------------
    def _grid_scores(self) -> np.ndarray:
        """(G**(P-1), P) scores of every grid cell, chiicha-relative seats; the last seat takes the rest."""
        P, G = self.P, self.G
        axes = np.indices((G,) * (P - 1)).reshape(P - 1, -1).T  # (cells, P-1)
        first = self.start + (axes - self.span) * self.unit
        last = self.total - first.sum(axis=1, keepdims=True)
        return np.concatenate([first, last], axis=1).astype(np.int64)

    def _final_placements(self, scores: np.ndarray) -> np.ndarray:
        """(cells, P) placements of chiicha-relative seats: by score, ties to the lower seat (R40)."""
        P = self.P
        seat = np.arange(P)
        # key: higher score first, then lower chiicha-relative seat
        better = (scores[:, None, :] > scores[:, :, None]) | (
            (scores[:, None, :] == scores[:, :, None]) & (seat[None, None, :] < seat[None, :, None])
        )
        return 1 + better.sum(axis=2).astype(np.float64)

    def _cell(self, first: np.ndarray) -> np.ndarray:
        """Flat grid index of scores of the first P-1 chiicha-relative seats (clipped to the grid)."""
        # np.minimum / np.maximum, not np.clip: the same integers, without np.clip's per-call overhead (the
        # search asks this twice per decision)
        u = np.minimum(
            np.maximum(np.rint((first - self.start) / self.unit).astype(np.int64) + self.span, 0), self.G - 1
        )
        flat = np.zeros(u.shape[:-1], np.int64)
        for k in range(self.P - 1):
            flat = flat * self.G + u[..., k]
        return flat

    def _solve(self, per_round: list[list[dict]]) -> np.ndarray:
        """(R + 1, cells, P) float32 expected placement of chiicha-relative seats."""
        P = self.P
        scores = self._grid_scores()
        table = np.zeros((self.R + 1, len(scores), P), np.float64)
        table[self.R] = self._final_placements(scores)
        for r in range(self.R - 1, -1, -1):
            rows = per_round[r]
            counts = np.array([row["count"] for row in rows], np.float64)
            if counts.sum() <= 0:
                table[r] = table[r + 1]
                continue
            prob = counts / counts.sum()
            dealer = r % P  # chiicha-relative dealer of round r (R8)
            acc = np.zeros_like(table[r])
            for p, row in zip(prob, rows, strict=True):
                pay = np.roll(np.asarray(row["payments"], np.int64), dealer)  # dealer-relative -> chiicha-relative
                acc += p * table[r + 1][self._cell((scores + pay)[:, : P - 1])]
            table[r] = acc
        return table.astype(np.float32)

    # -- lookups ----------------------------------------------------------------------------------
    def expected(self, scores: np.ndarray, next_round: np.ndarray, chiicha: np.ndarray) -> np.ndarray:
        """(N, P) expected final placement of every (absolute) seat; module docstring."""
        scores = np.asarray(scores, np.int64).reshape(-1, self.P)
        n = len(scores)
        r = np.minimum(np.maximum(np.asarray(next_round, np.int64).reshape(n), 0), self.R)
        c = np.asarray(chiicha, np.int64).reshape(n)
        rel = (c[:, None] + np.arange(self.P)[None, :]) % self.P  # chiicha-relative seat j is absolute rel[:, j]
        row = np.arange(n)[:, None]
        vals_rel = self.table[r, self._cell(scores[row, rel[:, : self.P - 1]])].astype(np.float64)
        out = np.empty_like(vals_rel)
        out[row, rel] = vals_rel
        return out


@functools.cache
def shipped_table(rules: RuleConfig) -> PlacementTable:
    """The shipped table for ``rules`` (one per process; ValueError in one line when none is shipped)."""
    path = shipped_path(rules)
    return PlacementTable(load_outcomes(path, rules), rules)
