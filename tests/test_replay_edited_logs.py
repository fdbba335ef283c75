"""Hand-edited logs and replays (issue 22 §3, second bullet): ``meld8 replay`` / ``view`` /
``review --game`` answer every edit with one line naming the line and the field, never a traceback.

Each case edits one thing in a real tournament log (or replay) and runs the command in process
through ``meld8_app.cli.main``, as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meld8_env.replay import ReplayError, open_game


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    from training.tournament import TournamentConfig, run

    out = tmp_path_factory.mktemp("t")
    run(TournamentConfig(agents=["greedy", "defensive", "random"], boards=1, out=str(out / "t"), progress=False,
                         chart=False))  # fmt: skip
    return out / "t" / "games.jsonl"


def _edit(log: Path, tmp: Path, change) -> Path:
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    change(lines[0], lines[1])
    out = tmp / "edited.jsonl"
    out.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return out


def _game(header, board):
    return board["games"][0]


EDITS = {
    "missing seed": (lambda h, b: _game(h, b).pop("seed"), "line 2", "'seed'"),
    "missing seats": (lambda h, b: _game(h, b).pop("seats"), "line 2", "'seats'"),
    "missing final_scores": (lambda h, b: _game(h, b).pop("final_scores"), "line 2", "'final_scores'"),
    "missing placements": (lambda h, b: _game(h, b).pop("placements"), "line 2", "'placements'"),
    "seats name agent 7": (lambda h, b: _game(h, b).update(seats=[0, 1, 7]), "line 2", "names agent 7"),
    "seats not numbers": (lambda h, b: _game(h, b).update(seats=["a", 1, 2]), "line 2", "'seats'"),
    "seats too few": (lambda h, b: _game(h, b).update(seats=[0, 1]), "line 2", "'seats'"),
    "header with too few agents": (lambda h, b: h.update(agents=["greedy"]), "line 2", "header lists 1 agents"),
    "header agents not a list": (lambda h, b: h.update(agents="greedy"), "line 1", "'agents'"),
    "header rules not a mapping": (lambda h, b: h.update(rules=[1, 2]), "line 1", "'rules'"),
    "header rules bad option": (lambda h, b: h["rules"].update(rounds=-3), "line 1", "'rules'"),
    "actions not base64": (lambda h, b: _game(h, b).update(actions="!!"), "line 2", "'actions'"),
    "actions cut short": (lambda h, b: _game(h, b).update(actions="AAA="), "line 2", "'actions'"),
    "scores edited": (lambda h, b: _game(h, b).update(final_scores=[1, 2, 3]), "line 2", "'final_scores'"),
    "seed a string": (lambda h, b: _game(h, b).update(seed="12"), "line 2", "'seed'"),
    "board id missing": (lambda h, b: b.pop("board"), "line 2", "'board'"),
    "games not a list": (lambda h, b: b.update(games={"a": 1}), "line 2", "'games'"),
    "game not an object": (lambda h, b: b["games"].__setitem__(0, 5), "line 2", "object"),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edited_log_is_one_line_naming_line_and_field(log, tmp_path, name, capsys):
    from meld8_app.cli import main

    change, line, field = EDITS[name]
    edited = _edit(log, tmp_path, change)
    with pytest.raises(ReplayError) as err:
        open_game(edited, 0)
    assert line in str(err.value) and field in str(err.value), str(err.value)
    for argv in (["replay", str(edited), "--game", "0"], ["review", str(edited), "--game", "0", "--seat", "0",
                                                             "--agent", "greedy", "--text"]):  # fmt: skip
        assert main(argv) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in lines[0] and field in lines[0], lines


def test_view_names_the_field_too(log, tmp_path, capsys):
    from meld8_app.cli import main

    edited = _edit(log, tmp_path, lambda h, b: _game(h, b).pop("seats"))
    assert main(["view", str(edited), "--game", "0", "--no-browser"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 2" in err[0] and "'seats'" in err[0]


def test_an_honest_log_still_opens(log):
    doc = open_game(log, 0)
    assert doc["names"] and doc["actions"]


def test_game_of_a_file_that_is_no_log_and_no_replay_says_so_and_names_the_log_beside_it(log):
    """Helper walkthrough, session 46: ``--game 2`` on a tournament's results.json or games.csv said "is a single
    replay"; it names what the file is not, why, and the log beside it."""
    for name in ("results.json", "games.csv"):
        with pytest.raises(ReplayError) as err:
            open_game(log.with_name(name), 2)
        said = str(err.value)
        assert said.startswith(f"{log.with_name(name)} is no tournament log (games.jsonl, whose games --game picks)")
        assert said.endswith(f"; the tournament's log beside it is {log}") and "single replay" not in said


@pytest.mark.parametrize(
    "content, says",
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),  # red team: a RecursionError traceback
        (b'{"format": ' + b"9" * 5000 + b"}", "Exceeds the limit"),  # a Python-internal error naming no file
        (b'{"format": "\xff"}', "not UTF-8 text"),
    ],
)
def test_a_hostile_replay_file_is_one_line_naming_the_file(tmp_path, content, says):
    f = tmp_path / "r.json"
    f.write_bytes(content)
    with pytest.raises(ReplayError, match=says) as err:
        open_game(f)
    assert str(f) in str(err.value) and "\n" not in str(err.value) and len(str(err.value)) < 300


def test_a_folder_or_device_is_not_read_as_a_replay(tmp_path):
    for p in (tmp_path, Path("/dev/zero")):  # /dev/zero was read as one endless line until memory ran out
        if p.exists():
            with pytest.raises(ReplayError, match="a folder or device"):
                open_game(p)


def test_a_replay_naming_the_wrong_number_of_seats_is_refused(tmp_path):
    # red team: a short 'names' list was silently replaced by "seat N"
    from meld8_env.protocol import GameStreams
    from meld8_env.replay import save_replay
    from meld8_env.rules import RuleConfig

    rules = RuleConfig(max_replays=1)
    g = GameStreams(rules, seed=1)
    while (p := g.pending()) is not None:
        g.step(p[1]["actions"][0]["id"])
    f = tmp_path / "r.json"
    save_replay(f, rules, 1, g.answers)
    doc = json.loads(f.read_text())
    assert open_game(f)["names"] == ["seat 0", "seat 1", "seat 2"]  # no names kept: the seats are named
    f.write_text(json.dumps({**doc, "names": ["only one"]}))
    with pytest.raises(ReplayError, match="field 'names' names 1 seats, the game has 3"):
        open_game(f)


def test_a_gzip_log_opens_and_a_damaged_one_says_so(log, tmp_path):
    """The project keeps its logs gzip-compressed (docs/search_runs/*.jsonl.gz): `--game K` said the file was a
    single replay, and without it "not UTF-8 text" (red team, session 35)."""
    import gzip

    packed = tmp_path / "games.jsonl.gz"
    packed.write_bytes(gzip.compress(log.read_bytes()))
    assert open_game(packed, 2)["actions"] == open_game(log, 2)["actions"]
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[:200])
    with pytest.raises(ReplayError, match=f"{cut}: a damaged gzip file"):
        open_game(cut, 0)


def test_a_replay_with_a_key_twice_or_nested_past_what_json_can_write_is_refused(tmp_path):
    """json keeps the last of two equal keys, so a replay could carry a second seed a reader keeping the first
    would play; and ~990 levels read but cannot be written back for the checksum (a RecursionError traceback)."""
    f = tmp_path / "r.json"
    f.write_text('{"format": "meld8-replay", "seed": 7, "seed": 42}')
    with pytest.raises(ReplayError, match=r"r\.json: not a meld8 replay \(the key 'seed' is given twice in one object"):
        open_game(f)
    doc = {"format": "meld8-replay", "version": "0.1.0", "rules": {}, "rules_hash": "x", "seed": 1, "actions": [],
           "result": {"final_scores": [], "placements": [], "deals": 0}, "checksum": "x"}  # fmt: skip
    for depth in (985, 990, 995):  # around the depth json.loads reads and json.dumps cannot write
        f.write_text(json.dumps(doc)[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}")
        with pytest.raises(ReplayError) as err:
            open_game(f)
        assert str(f) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "body, says",
    [
        # one board line listing millions of games: 3.4 GB for a 33 KB gzip before (red team, session 36)
        (b'{"type": "board", "board": 0, "games": [' + b"0," * (3 << 20) + b"0]}\n", "longer than 4 MB"),
        (b'{"type": "board", "board": 0, "games": [' + b"0," * 10 + b"0]}\n", "must list 1..6 games"),
        (b'{"type": "board", "board": 0, "games": [0]}\n', "a game must be an object"),
        # lines that are no boards: 98 s of CPU for 64 MiB of them before; now the first is refused
        (b"1\n" * (1 << 20), "line 2 is not a board"),
        # more games than any log holds, in few bytes (review, session 36); a board given twice
        (b'{"type": "board", "board": 0, "games": [{}, {}, {}, {}, {}, {}]}\n' * 200_000, "more than 1,000,000 games"),
        (b'{"type": "board", "board": 3, "games": [{}]}\n' * 2, "board 3 is logged twice"),
    ],
)
def test_a_hostile_log_is_refused_at_its_first_bad_line(log, tmp_path, body, says):
    """Red team, session 36: every line of a log was parsed, and every listed game kept, before any was checked."""
    import gzip

    bad = tmp_path / "bomb.jsonl.gz"
    bad.write_bytes(gzip.compress(log.read_bytes().split(b"\n", 1)[0] + b"\n" + body))
    with pytest.raises(ReplayError, match=says):
        open_game(bad, 0)
