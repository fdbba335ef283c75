"""A tournament folder tampered with between runs (red team, session 47): ``--resume`` and the viewers agree on
what a log is, a refused resume leaves the folder as it was (not even its lock), and results with no log behind
them are never overwritten.

Each case edits a real tournament's log (greedy / defensive / random, and a ``cmd:`` bot for the faults) and
runs the resume or the viewer as a user would."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from meld8_env.replay import ReplayError, load_replay, open_game
from meld8_env.rules import RuleConfig
from training.tournament import TournamentConfig, TournamentError, run

FAST = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=0)
AGENTS = ["greedy", "defensive", "random"]


def _cfg(out: Path, **kw) -> TournamentConfig:
    base = dict(agents=AGENTS, boards=3, seed=3, out=str(out), rules=FAST, progress=False, chart=False)
    return TournamentConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("played")
    run(_cfg(out))
    return out


def _copy(played: Path, to: Path) -> Path:
    to.mkdir()
    for f in played.iterdir():
        if f.is_file() and f.name != ".lock":
            (to / f.name).write_bytes(f.read_bytes())
    return to


def _lines(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / "games.jsonl").read_text().splitlines()]


def _write(folder: Path, lines: list[dict]) -> None:
    (folder / "games.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def _state(folder: Path) -> dict[str, str]:
    return {
        str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest() if f.is_file() else "folder"
        for f in sorted(folder.rglob("*"))
    }  # a cmd: bot's log under bots/ too (review, session 47)


def _refused(folder: Path, match: str, **kw) -> None:
    """The resume is refused with ``match`` and the folder is byte for byte as it was, its lock (or its absence)
    included."""
    before = _state(folder)
    with pytest.raises(TournamentError, match=match):
        run(_cfg(folder, resume=True, **kw))
    assert _state(folder) == before


def test_rules_edited_under_an_unchanged_rules_hash_are_refused_by_resume_and_viewers(played, tmp_path):
    folder = _copy(played, tmp_path / "t")
    lines = _lines(folder)
    lines[0]["rules"]["wall_limit"] = 3  # rules_hash untouched: the resume went on, every replay then diverged
    _write(folder, lines)
    _refused(folder, r"line 1: its rules are not the rules its rules_hash names \(the header was edited\)")
    with pytest.raises(ReplayError, match=r"line 1 \(the header\): its rules do not give its rules_hash"):
        open_game(folder / "games.jsonl", 0)


def test_a_key_given_twice_is_refused_by_resume_as_by_the_viewers(played, tmp_path):
    folder = _copy(played, tmp_path / "t")
    text = (folder / "games.jsonl").read_text().splitlines()
    text[1] = text[1][:-1] + ',"board":0}'  # json keeps the last: the resume proved a line `meld8 replay` refuses
    (folder / "games.jsonl").write_text("\n".join(text) + "\n")
    _refused(folder, r"line 2: the key 'board' is given twice in one object; refusing to resume")
    with pytest.raises(ReplayError, match="line 2: the key 'board' is given twice"):
        open_game(folder / "games.jsonl", 0)


def test_a_log_refused_past_its_first_line_leaves_no_lock(played, tmp_path):
    folder = _copy(played, tmp_path / "t")
    lines = _lines(folder)
    lines[2]["games"][0]["final_scores"][0] += 1000
    lines[2]["games"][0]["final_scores"][1] -= 1000
    _write(folder, lines)
    _refused(folder, r"line 3: board \d, game 0: its actions give final scores")


def test_results_with_an_emptied_log_are_not_overwritten(played, tmp_path):
    folder = _copy(played, tmp_path / "t")
    (folder / "games.jsonl").write_text("")
    _refused(folder, r"games.jsonl is empty but .* holds results.json, games.csv: those results have no log",
             agents=["defensive", "defensive", "random"], seed=9)  # fmt: skip
    (folder / "results.json").unlink()  # an empty log and nothing else: a resume starts the tournament
    (folder / "games.csv").unlink()
    assert run(_cfg(folder, resume=True))["boards"] == 3


def test_a_fault_is_accepted_only_on_an_outside_bots_seat_and_once_a_game(played, tmp_path):
    folder = _copy(played, tmp_path / "t")
    lines = _lines(folder)
    game = lines[1]["games"][0]  # seating 0: greedy sits at seat 0
    assert AGENTS[game["seats"][0]] == "greedy"
    game["faults"] = [{"seat": 0, "kind": "timeout", "detail": "no answer in 5 s"}]
    _write(folder, lines)
    _refused(folder, r"line 2: board \d: game 0 records a fault of seat 0, whose agent 'greedy' does not play through")

    bot = f"cmd:{sys.executable} examples/bots/python_bot.py"
    out = tmp_path / "bots"
    run(_cfg(out, agents=[bot, "greedy", "random"], boards=1))
    lines = _lines(out)
    seat = lines[1]["games"][0]["seats"].index(0)  # the bot's seat in the first game
    fault = {"seat": seat, "kind": "timeout", "detail": "no answer in 5 s"}
    lines[1]["games"][0]["faults"] = [fault, fault]
    _write(out, lines)
    _refused(out, "records two faults of one seat", agents=[bot, "greedy", "random"], boards=1)
    lines[1]["games"][0]["faults"] = [{**fault, "detail": 5}]
    _write(out, lines)
    _refused(out, "a game record has malformed faults", agents=[bot, "greedy", "random"], boards=1)
    lines[1]["games"][0]["faults"] = [fault]  # a bot's own fault cannot be re-created, only who could have faulted
    _write(out, lines)
    assert run(_cfg(out, agents=[bot, "greedy", "random"], boards=1, resume=True))["boards"] == 1


def test_a_plug_in_agent_that_plays_through_the_seat_protocol_may_fault(tmp_path):
    """Not only cmd: bots: any agent with ``plays_streams`` records faults, and a resume of its log is no forgery
    (review, session 47: such a log was refused)."""
    bot = f"cmd:{sys.executable} examples/bots/python_bot.py"
    out = tmp_path / "plug"
    run(_cfg(out, agents=[bot, "greedy", "random"], boards=1))
    lines = _lines(out)
    seat = lines[1]["games"][0]["seats"].index(0)
    lines[1]["games"][0]["faults"] = [{"seat": seat, "kind": "timeout", "detail": "no answer in 5 s"}]
    _write(out, lines)
    from training.tournament_log import board_entry_error

    header = _cfg(out, agents=["plug.in:Bot", "greedy", "random"], boards=1)
    assert "does not play through" in board_entry_error(lines[1], header, 6)
    assert board_entry_error(lines[1], header, 6, streaming={"plug.in:Bot"}) is None


def test_the_viewers_show_the_whole_lines_of_a_log_torn_by_a_crash(played, tmp_path):
    data = (played / "games.jsonl").read_bytes()
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(data[:-300])  # the last board cut mid-line, as a crash during its write leaves it
    assert open_game(torn, 0)["title"].endswith("game 0 (board 0, seating 0)")
    with pytest.raises(ReplayError, match=r"of 12 games \(its last line, cut short by an interrupted write, is left "
                                          r"out\): choose one with --game 0..11"):  # fmt: skip
        open_game(torn)
    with pytest.raises(ReplayError, match=r"--game must be 0..11 \(its last line"):
        open_game(torn, 12)
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(data[:-300] + b"\n")  # a whole line that is not JSON is no tear: still refused
    with pytest.raises(ReplayError, match="line 4 is not JSON"):
        open_game(whole, 0)


def test_a_replay_that_diverges_names_its_file(played, tmp_path):
    from meld8_env.replay import _checksum

    doc = {k: v for k, v in open_game(played / "games.jsonl", 0).items() if k not in ("names", "title", "agent_seeds")}
    n = len(doc["actions"])
    doc["actions"] = [*doc["actions"], doc["actions"][-1]]  # one action after the game's end, checksum made again
    doc["checksum"] = _checksum({k: v for k, v in doc.items() if k != "checksum"})
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReplayError, match=rf"^{path}: replay diverges at action {n}"):
        load_replay(path)
