"""What a tournament shows and writes when it ends: the progress bar, ``games.csv``, ``chart.png`` and
the table in the terminal (``results.json`` itself comes from ``training.stats.summarize``)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from meld8_env.safe_text import printable
from training.stats import format_p

SHAKY_BELOW = 30  # board seeds below which a claim rests on too few paired samples


def progress(total: int, enabled: bool, unit: str = "board"):
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit=unit, disable=not enabled, dynamic_ncols=True)
    except ImportError:  # pragma: no cover

        class _Null:
            def update(self, n: int) -> None: ...

            def close(self) -> None: ...

        return _Null()


def write_games_csv(path: Path, boards: Sequence[dict], names: Sequence[str]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["board", "seed", "seating", "seat", "agent", "final_score", "placement", "wins", "tsumo",
                    "deal_ins", "calls", "win_han", "hands", "drawn_hands"])  # fmt: skip
        for e in boards:
            for k, g in enumerate(e["games"]):
                for seat, a in enumerate(g["seats"]):
                    w.writerow([e["board"], e["seed"], k, seat, names[a], g["final_scores"][seat],
                                g["placements"][seat], g["wins"][seat], g["tsumo"][seat], g["deal_ins"][seat],
                                g["calls"][seat], g["win_han"][seat], g["hands"], g["drawn_hands"]])  # fmt: skip


def write_chart(path: Path, res: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(res["agents"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    bottom = np.zeros(len(names))
    dist = np.array([res["agents"][n]["rank_distribution"] for n in names])
    for place in range(dist.shape[1]):
        ax1.bar(names, dist[:, place], bottom=bottom, label=f"{place + 1}")
        bottom += dist[:, place]
    ax1.set_title("rank distribution")
    ax1.legend(title="place")
    means = [res["agents"][n]["mean_score"] for n in names]
    err = [[m - res["agents"][n]["score_ci95"][0] for n, m in zip(names, means, strict=True)],
           [res["agents"][n]["score_ci95"][1] - m for n, m in zip(names, means, strict=True)]]  # fmt: skip
    ax2.bar(names, means, yerr=err, capsize=6)
    ax2.axhline(30_000, color="grey", lw=0.8)
    ax2.set_title(f"mean final score, 95% CI ({res['boards']} boards, {res['games']} games)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def format_table(res: dict) -> str:
    lines = [
        f"{res['boards']} boards, {res['games']} games (seed {res['seed']}), draw rate {res['draw_rate']:.1%}",
        f"{'agent':<14}{'place':>7}{'95% CI':>16}{'score':>9}{'95% CI':>20}{'win':>7}{'deal-in':>9}{'call':>7}"
        f"{'tsumo':>7}{'han':>6}{'rating':>8}",
    ]
    for name, a in sorted(res["agents"].items(), key=lambda kv: kv[1]["mean_placement"]):
        pci = "[{:.2f}, {:.2f}]".format(*a["placement_ci95"])
        sci = "[{:,.0f}, {:,.0f}]".format(*a["score_ci95"])
        lines.append(
            f"{name:<14}{a['mean_placement']:>7.3f}{pci:>16}{a['mean_score']:>9,.0f}{sci:>20}"
            f"{a['win_rate']:>7.1%}{a['deal_in_rate']:>9.1%}{a['call_rate']:>7.1%}{a['tsumo_share']:>7.0%}"
            f"{a['average_win_han']:>6.2f}{a['rating']['ordinal']:>8.1f}"
        )
    for p in res["pairwise"]:
        lines.append(f"  {p['a']} - {p['b']}: {p['mean_score_diff']:+,.0f} points/game ({format_p(p['p_value'])}): "
                     f"{p['verdict']}")  # fmt: skip
    for name, a in res["agents"].items():
        f = a.get("faults", {})
        if f.get("games"):
            kinds = ", ".join(f"{k} {n}" for k, n in f["by_kind"].items())
            lines.append(f"  faults: {name} in {f['games']} game(s) ({kinds}); the fallback played on in those seats")
    if res["boards"] < SHAKY_BELOW:
        lines.append(f"  note: only {res['boards']} board seeds; with fewer than {SHAKY_BELOW} the intervals and "
                     "p-values are shaky - play more boards before claiming a difference")  # fmt: skip
    return "\n".join(printable(line) for line in lines)  # agent names are the user's text (cmd:...): no escapes
