"""A tournament log proves its own results (issue 22 §3): on ``--resume`` every logged game is re-created
from its seed and actions on the fast engine, and a line whose scores, placements or statistics differ, whose
actions were cut or swapped, or whose board does not cover each seating exactly once is refused with
one line naming the line, the board and the game."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest

from meld8_env.rules import RuleConfig
from training.tournament import TournamentConfig, TournamentError, run
from training.tournament_log import CHECKED, resimulate

FAST = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=0)
AGENTS = ["greedy", "defensive", "random"]


def _cfg(out, **kw) -> TournamentConfig:
    base = dict(agents=AGENTS, boards=4, seed=3, out=str(out), rules=FAST, progress=False, chart=False)
    return TournamentConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("played")
    results = run(_cfg(out))
    return results, (out / "games.jsonl").read_text().splitlines()


def _edit(lines: list[str], line: int, game: int, change) -> str:
    entry = json.loads(lines[line])
    change(entry["games"][game])
    return "\n".join([*lines[:line], json.dumps(entry), *lines[line + 1 :]]) + "\n"


def _resume(tmp_path, text: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "games.jsonl").write_text(text)
    return run(_cfg(tmp_path, resume=True))


def test_every_logged_game_re_creates_its_result_on_the_fast_engine(played):
    """The checker agrees with the arena on every game of a real 3-player tournament (24 games)."""
    _, lines = played
    games = [g for line in lines[1:] for g in json.loads(line)["games"]]
    acts = [list(base64.b64decode(g["actions"])) for g in games]
    import numpy as np

    got = resimulate(FAST, [g["seed"] for g in games], [np.array(a, np.int64) for a in acts])
    assert len(got) == len(games) == 24
    for g, res in zip(games, got, strict=True):
        assert res == {k: g[k] for k in CHECKED}  # results and every statistic, as the arena counted them


def test_an_untouched_log_resumes_to_the_same_results(played, tmp_path):
    results, lines = played
    assert _resume(tmp_path, "\n".join(lines[:3]) + "\n") == results  # two boards logged, two to play


def _rotate_scores(g: dict) -> None:
    g["final_scores"] = g["final_scores"][1:] + g["final_scores"][:1]


def _swap_placements(g: dict) -> None:
    g["placements"] = g["placements"][::-1]


def _add_points(g: dict) -> None:
    g["final_scores"][0] += 1000
    g["final_scores"][1] -= 1000


def _cut_actions(g: dict) -> None:
    g["actions"] = base64.b64encode(base64.b64decode(g["actions"])[:-3]).decode()


def _extend_actions(g: dict) -> None:
    g["actions"] = base64.b64encode(base64.b64decode(g["actions"]) + b"\x00").decode()


def _move_wins(g: dict) -> None:  # red team: edited statistics changed results.json's win rates on resume
    w = g["wins"]
    g["wins"] = w[1:] + w[:1] if len(set(w)) > 1 else [w[0] + 1, *w[1:]]


def _more_hands(g: dict) -> None:
    g["hands"] += 10**30  # every win rate read 0.0 % after resume


EDITS = {
    "scores rotated": (_rotate_scores, "its actions give final scores"),
    "placements swapped": (_swap_placements, "its actions give final scores"),
    "points moved": (_add_points, "its actions give final scores"),
    "actions cut short": (_cut_actions, "not over after its"),
    "an action appended": (_extend_actions, "ends at action"),
    "wins moved": (_move_wins, "its actions give wins "),
    "hands added": (_more_hands, "its actions give hands "),
    "calls added": (lambda g: g["calls"].__setitem__(0, g["calls"][0] + 1), "its actions give calls "),
    "han added": (lambda g: g["win_han"].__setitem__(1, g["win_han"][1] + 2), "its actions give win_han "),
}


@pytest.mark.parametrize("case", list(EDITS))
@pytest.mark.parametrize("line, game", [(1, 0), (3, 5)])
def test_an_edited_result_is_refused_naming_line_board_and_game(played, tmp_path, case, line, game):
    _, lines = played
    change, says = EDITS[case]
    board = json.loads(lines[line])["board"]
    with pytest.raises(TournamentError, match=rf"line {line + 1}: board {board}, game {game}: .*{says}") as exc:
        _resume(tmp_path, _edit(lines, line, game, change))
    assert "\n" not in str(exc.value)


def test_a_game_with_another_games_actions_is_refused(played, tmp_path):
    _, lines = played
    other = json.loads(lines[2])["games"][0]["actions"]
    with pytest.raises(TournamentError, match=r"line 2: board \d+, game 1"):
        _resume(tmp_path, _edit(lines, 1, 1, lambda g: g.update(actions=other)))


@pytest.mark.parametrize("seats", [[0, 0, 0], [1, 1, 2], [2, 1, 0]])
def test_a_board_must_cover_each_seating_exactly_once(played, tmp_path, seats):
    """Seats set to 0,0,0 (one agent's results counted three times), or a seating repeated."""
    _, lines = played
    with pytest.raises(TournamentError, match=r"line 2: board \d+: game 0 has seats .*each seating exactly once"):
        _resume(tmp_path, _edit(lines, 1, 0, lambda g: g.update(seats=seats)))


def test_a_game_without_actions_cannot_prove_its_result(played, tmp_path):
    _, lines = played
    with pytest.raises(TournamentError, match="holds no actions"):
        _resume(tmp_path, _edit(lines, 2, 3, lambda g: g.pop("actions")))


def test_resume_with_other_agents_names_the_logs_agents_in_one_short_line(played, tmp_path):
    _, lines = played
    (tmp_path / "games.jsonl").write_text("\n".join(lines) + "\n")
    rules = tmp_path / "fast.yaml"
    rules.write_text(json.dumps(FAST.to_dict()))
    p = subprocess.run(
        [sys.executable, "-m", "meld8_app", "tournament", "--agents", "random,random,greedy", "--boards", "4",
         "--seed", "3", "--rules", str(rules), "--out", str(tmp_path), "--resume"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "--agents greedy,defensive,random" in p.stderr and len(p.stderr) < 300 and "rules_hash" not in p.stderr
