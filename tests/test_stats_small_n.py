"""Tournament statistics are honest at small n: Student's t (not the normal approximation) for
p-values and intervals, ``p < 1e-300`` instead of ``p = 0``, and a warning under 30 board seeds."""

from __future__ import annotations

import math

import pytest

from training.stats import _ci, _p_two_sided, format_p, t_quantile, t_two_sided_p


@pytest.mark.parametrize(
    "t, df, p",  # textbook two-sided critical values
    [(12.706, 1, 0.05), (2.776, 4, 0.05), (4.604, 4, 0.01), (2.228, 10, 0.05), (2.042, 30, 0.05), (1.960, 10**6, 0.05)],
)
def test_student_t_tail_matches_the_tables(t, df, p):
    assert t_two_sided_p(t, df) == pytest.approx(p, rel=2e-3)
    assert t_quantile(p, df) == pytest.approx(t, rel=1e-3)


def test_five_boards_are_not_called_certain():
    diffs = [60_000, 80_000, 90_000, 70_000, 100_000]  # what a 5-board table gave p = 1.3e-58 for
    normal = math.erfc(abs(sum(diffs) / 5) / (((sum((d - 80_000) ** 2 for d in diffs) / 4) ** 0.5) / 5**0.5) / 2**0.5)
    assert _p_two_sided(diffs) > 1e-4 and normal < 1e-20  # t: 3.5e-4; the normal shortcut claimed 1e-29
    mean, (lo, hi) = _ci(diffs)
    assert hi - lo > 2 * 1.96 * 15_811 / 5**0.5  # wider than the normal interval


def test_tiny_p_values_are_printed_as_a_bound():
    assert format_p(0.0) == "p < 1e-300" and format_p(1e-320) == "p < 1e-300"
    assert format_p(0.0123) == "p = 0.0123"


def test_small_tournaments_warn(tmp_path, capsys):
    from meld8_app.cli import main

    assert main(["tournament", "--agents", "greedy,random,random", "--boards", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "only 3 board seeds" in out and "p = 0 " not in out


def test_a_placement_interval_stays_within_the_places(tmp_path):
    """Two players, three boards: the t interval of the mean placement read [0.26, 2.74]; a place is 1..P."""
    import json

    from meld8_app.cli import main

    out = tmp_path / "t"
    rc = main(
        ["tournament", "--agents", "greedy,defensive", "--rules", "two_player", "--boards", "3", "--out", str(out)]
    )
    assert rc == 0
    for name, row in json.loads((out / "results.json").read_text())["agents"].items():
        lo, hi = row["placement_ci95"]
        assert 1.0 <= lo <= row["mean_placement"] <= hi <= 2.0, (name, row)
