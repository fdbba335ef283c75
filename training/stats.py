"""Tournament statistics from game records (pure functions; no engine needed).

Boards are the unit of pairing: every board is played under every seating, so an agent's mean over the
games of one board removes seat and card luck, and confidence intervals use the spread of those
per-board means (95%, Student's t over boards). Two seats holding the same agent are one entry.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def t_two_sided_p(t: float, df: int) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom (exact at every sample size)."""
    x = df / (df + t * t)
    a, b = df / 2.0, 0.5
    if x <= 0.0:
        return 0.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return min(1.0, math.exp(ln) * _betacf(a, b, x) / a)
    return min(1.0, 1.0 - math.exp(ln) * _betacf(b, a, 1.0 - x) / b)


def t_quantile(p_two_sided: float, df: int) -> float:
    """The t value whose two-sided tail probability is ``p_two_sided`` (bisection)."""
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_two_sided_p(mid, df) > p_two_sided else (lo, mid)
    return (lo + hi) / 2


def _ci(values: Sequence[float]) -> tuple[float, list[float]]:
    """Mean and 95% confidence interval from Student's t over the per-game means."""
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean()) if arr.size else 0.0
    if arr.size < 2:
        return mean, [mean, mean]
    half = t_quantile(0.05, arr.size - 1) * float(arr.std(ddof=1)) / math.sqrt(arr.size)
    return mean, [mean - half, mean + half]


def _p_two_sided(diffs: Sequence[float]) -> float:
    """Paired t-test of mean(diffs) = 0 over games (Student's t: honest at small n; no normal shortcut)."""
    arr = np.asarray(diffs, dtype=float)
    if arr.size < 2:
        return 1.0
    sd = float(arr.std(ddof=1))
    if sd == 0:
        return 0.0 if arr.mean() != 0 else 1.0
    return t_two_sided_p(float(arr.mean()) / (sd / math.sqrt(arr.size)), arr.size - 1)


def format_p(p: float) -> str:
    """``p = 0.0123``; below double precision's range ``p < 1e-300`` (never ``p = 0``)."""
    return "p < 1e-300" if p < 1e-300 else f"p = {p:.3g}"


def summarize(boards: Iterable[dict], names: Sequence[str], num_players: int, seed: int) -> dict:
    """``boards``: logged board entries ``{"board", "seed", "games": [GameRecord dicts]}``;
    ``names``: the agent spec of each index used in ``seats``."""
    unique = list(dict.fromkeys(names))
    per_board: dict[str, list[tuple[float, float]]] = defaultdict(list)  # (mean placement, mean score)
    placements: dict[str, list[int]] = defaultdict(list)
    totals = {n: defaultdict(int) for n in unique}
    games = draws = all_hands = 0
    pair_diffs: dict[tuple[str, str], list[float]] = defaultdict(list)
    rating = _Ratings(unique)
    n_boards = 0
    for entry in boards:
        n_boards += 1
        board_scores: dict[str, list[float]] = defaultdict(list)
        board_places: dict[str, list[int]] = defaultdict(list)
        for g in entry["games"]:
            games += 1
            draws += g["drawn_hands"]
            all_hands += g["hands"]
            seat_names = [names[a] for a in g["seats"]]
            for seat, name in enumerate(seat_names):
                board_scores[name].append(g["final_scores"][seat])
                board_places[name].append(g["placements"][seat])
                placements[name].append(g["placements"][seat])
                t = totals[name]
                t["seat_hands"] += g["hands"]
                t["wins"] += g["wins"][seat]
                t["tsumo"] += g["tsumo"][seat]
                t["deal_ins"] += g["deal_ins"][seat]
                t["calls"] += g["calls"][seat]
                t["han"] += g["win_han"][seat]
            for f in g.get("faults", ()):  # an external bot's fault: counted against the seat's agent
                totals[seat_names[f["seat"]]]["fault:" + f["kind"]] += 1
            for seat in {f["seat"] for f in g.get("faults", ())}:
                totals[seat_names[seat]]["faulted_games"] += 1
            rating.rate(seat_names, g["placements"])
        for name in board_scores:
            per_board[name].append((float(np.mean(board_places[name])), float(np.mean(board_scores[name]))))
        for a in board_scores:
            for b in board_scores:
                if a < b:
                    pair_diffs[(a, b)].append(float(np.mean(board_scores[a]) - np.mean(board_scores[b])))
    agents = {}
    for name in unique:
        rows = per_board.get(name, [])
        mp, mp_ci = _ci([r[0] for r in rows])
        # a placement lies in 1..P: a t interval of a few boards reached past both ends ("1.500 [0.26, 2.74]" with two
        # players, a user, session 45)
        mp_ci = [max(mp_ci[0], 1.0), min(mp_ci[1], float(num_players))]
        ms, ms_ci = _ci([r[1] for r in rows])
        t = totals[name]
        seat_hands = max(t["seat_hands"], 1)
        wins = t["wins"]
        dist = np.bincount(np.asarray(placements[name], dtype=int), minlength=num_players + 1)[1:]
        agents[name] = {
            "mean_placement": mp,
            "placement_ci95": mp_ci,
            "mean_score": ms,
            "score_ci95": ms_ci,
            "rank_distribution": (dist / max(dist.sum(), 1)).tolist(),
            "win_rate": wins / seat_hands,
            "deal_in_rate": t["deal_ins"] / seat_hands,
            "call_rate": t["calls"] / seat_hands,
            "tsumo_share": t["tsumo"] / wins if wins else 0.0,
            "average_win_han": t["han"] / wins if wins else 0.0,
            "rating": rating.of(name),
            "games": len(placements[name]),
            "faults": {
                "games": t["faulted_games"],
                "by_kind": {k.removeprefix("fault:"): v for k, v in sorted(t.items()) if k.startswith("fault:")},
            },
        }
    pairwise = []
    for (a, b), diffs in sorted(pair_diffs.items()):
        mean, ci = _ci(diffs)
        p = _p_two_sided(diffs)
        better, worse = (a, b) if mean >= 0 else (b, a)
        pairwise.append(
            {"a": a, "b": b, "mean_score_diff": mean, "ci95": ci, "p_value": p,
             "verdict": f"{better} beats {worse}" if p < 0.05 else "no significant difference"}
        )  # fmt: skip
    return {
        "agents": agents,
        "pairwise": pairwise,
        "boards": n_boards,
        "games": games,
        "seed": seed,
        "draw_rate": draws / all_hands if all_hands else 0.0,
    }


class _Ratings:
    """Multi-player Plackett-Luce ratings (openskill); two seats of one agent share its rating."""

    def __init__(self, names: Sequence[str]) -> None:
        from openskill.models import PlackettLuce

        self.model = PlackettLuce()
        self.r = {n: self.model.rating(name=n) for n in names}

    def rate(self, seat_names: Sequence[str], placements: Sequence[int]) -> None:
        teams = [[self.model.rating(mu=self.r[n].mu, sigma=self.r[n].sigma, name=n)] for n in seat_names]
        new = self.model.rate(teams, ranks=list(placements))
        updates: dict[str, list] = defaultdict(list)
        for n, team in zip(seat_names, new, strict=True):
            updates[n].append(team[0])
        for n, rs in updates.items():
            self.r[n] = self.model.rating(
                mu=float(np.mean([x.mu for x in rs])), sigma=float(np.mean([x.sigma for x in rs])), name=n
            )

    def of(self, name: str) -> dict[str, float]:
        r = self.r[name]
        return {"mu": r.mu, "sigma": r.sigma, "ordinal": r.mu - 3 * r.sigma}
