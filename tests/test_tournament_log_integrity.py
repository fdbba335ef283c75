"""Tournament log integrity (hardening): a log cut at any byte, or holding junk, is either resumed to
exactly the results of an uninterrupted run or refused with one line naming the line - never a
traceback, never a board counted twice; two runs never append to one log."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tracemalloc

import pytest

from meld8_env.rules import RuleConfig
from training.tournament import TournamentConfig, TournamentError, run

TINY = RuleConfig.two_player(rounds=1, min_yaku_han=(1,), max_replays=0)


def _cfg(out, **kw) -> TournamentConfig:
    base = dict(agents=["greedy", "random"], boards=3, seed=5, out=str(out), rules=TINY, progress=False, chart=False)
    return TournamentConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean")
    results = run(_cfg(out))
    return results, (out / "games.jsonl").read_bytes()


def _resume(tmp_path, log_bytes: bytes):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "games.jsonl").write_bytes(log_bytes)
    return run(_cfg(tmp_path, resume=True))


def test_truncated_at_every_byte_offset_resumes_to_identical_results(finished, tmp_path, capsys):
    results, log = finished
    assert log.count(b"\n") == 4  # header + 3 boards
    for k in range(len(log) + 1):
        got = _resume(tmp_path / str(k), log[:k])
        assert got == results, f"cut at byte {k} of {len(log)}"
        relogged = (tmp_path / str(k) / "games.jsonl").read_text().splitlines()
        assert len(relogged) == 4 and sorted(json.loads(x)["board"] for x in relogged[1:]) == [0, 1, 2], k
    capsys.readouterr()


def _lines(log: bytes) -> list[bytes]:
    return log.rstrip(b"\n").split(b"\n")


JUNK = {
    "number": b"42",
    "empty object": b"{}",
    "list": b"[1, 2]",
    "string board id": None,  # built from a real line below
    "foreign seed": None,
    "missing games": None,
    "actions not base64": None,
    "a fault without a seat": None,
    "not JSON": b"{broken",
    # red team: these raised RecursionError / ValueError past the reader (a traceback), or read as a torn line
    "nested too deeply": b"[" * 100_000 + b"]" * 100_000,
    "an integer too long": b'{"type": "board", "board": ' + b"9" * 5000 + b"}",
    "not UTF-8": b'{"type": "board\xff"}',
    "null": b"null",
}


def _variants(log: bytes) -> dict[str, bytes]:
    header, d0, d1, d2 = _lines(log)
    e = json.loads(d1)
    out = {}
    for name, junk in JUNK.items():
        if junk is None:
            f = dict(e)
            if name == "string board id":
                f["board"] = str(f["board"])
            elif name == "foreign seed":
                f["seed"] += 1
            elif name == "actions not base64":
                f["games"] = [{**f["games"][0], "actions": "not base64!"}, *f["games"][1:]]
            elif name == "a fault without a seat":
                f["games"] = [{**f["games"][0], "faults": [{"kind": "crash"}]}, *f["games"][1:]]
            else:
                f.pop("games", None)
            junk = json.dumps(f).encode()
        out[f"{name} in the middle"] = b"\n".join([header, d0, junk, d2]) + b"\n"
    out["header is a list"] = b"\n".join([b"[1]", d0, d1, d2]) + b"\n"
    out["a board logged twice"] = b"\n".join([header, d0, d1, d0, d2]) + b"\n"
    out["two headers"] = b"\n".join([header, header, d0]) + b"\n"
    out["null as the last line"] = b"\n".join([header, d0, d1, b"null"]) + b"\n"  # a whole line: not torn
    # a write cut short never ends in its newline: a whole line of garbage at the end is foreign, not torn (red team,
    # session 42: it was dropped as an interrupted write and the run resumed)
    out["not JSON as the last whole line"] = b"\n".join([header, d0, d1, b"garbage{{"]) + b"\n"
    return out


CASES = [f"{name} in the middle" for name in JUNK] + [
    "header is a list",
    "a board logged twice",
    "two headers",
    "null as the last line",
    "not JSON as the last whole line",
]


def test_blank_lines_at_the_end_are_dropped_and_the_run_resumes(finished, tmp_path, capsys):
    """Blank lines after the last board (an editor's, not a torn write) are dropped with a message saying so."""
    results, log = finished
    assert _resume(tmp_path, log + b"\n\n") == results
    assert "blank lines from line 5 on; dropping them" in capsys.readouterr().err


@pytest.mark.parametrize("case", CASES)
def test_junk_lines_are_refused_with_the_line_number(finished, tmp_path, case):
    _, log = finished
    bad = _variants(log)[case]
    with pytest.raises(TournamentError, match=r"line \d+") as exc:
        _resume(tmp_path, bad)
    assert "\n" not in str(exc.value)


def test_junk_lines_are_one_line_errors_on_the_command_line(finished, tmp_path):
    _, log = finished
    (tmp_path / "games.jsonl").write_bytes(_variants(log)["a board logged twice"])
    rules = tmp_path / "tiny.yaml"
    rules.write_text(json.dumps(TINY.to_dict()))  # JSON is YAML
    p = subprocess.run(
        [sys.executable, "-m", "meld8_app", "tournament", "--agents", "greedy,random", "--boards", "3", "--seed", "5",
         "--rules", str(rules), "--out", str(tmp_path), "--resume"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "repeats board" in p.stderr and "Traceback" not in p.stderr and p.stderr.count("\n") == 1


def test_header_only_log_resumes_without_a_second_header(finished, tmp_path):
    results, log = finished
    assert _resume(tmp_path, _lines(log)[0] + b"\n") == results
    lines = (tmp_path / "games.jsonl").read_text().splitlines()
    assert sum(json.loads(x)["type"] == "header" for x in lines) == 1


def test_a_second_run_on_the_same_folder_is_refused_naming_the_holder(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from training.tournament import OutputLock;\n"
         f"lock = OutputLock(Path({str(tmp_path)!r})).__enter__(); print('locked', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(TournamentError, match=rf"in use by pid {holder.pid} on "):
            run(_cfg(tmp_path, resume=False))
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    run(_cfg(tmp_path, resume=False))  # the lock died with its holder


def test_scheduling_is_lazy_memory_does_not_grow_with_the_board_count(tmp_path):
    """Asking for 10^11 boards must not build 10^11 tasks before the first game (it was OOM-killed)."""
    from training import tournament

    tracemalloc.start()
    tasks = tournament._tasks(_cfg(tmp_path, boards=10**11), set(), tournament.LOCAL_CHUNK)
    first = next(tasks)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(first[0]) == tournament.LOCAL_CHUNK and peak < 5_000_000


def test_one_process_plays_growing_batches_so_the_first_boards_are_logged_early(tmp_path):
    """Session 46: one process played every board (up to 512) in one lockstep batch, so a search tournament of 40
    boards logged none for 84 of its 101 s and a Ctrl-C kept nothing. Batches now start at 8 boards and double;
    boards already logged are skipped; a given ``boards_per_task`` stays fixed."""
    from training import tournament

    sizes = [len(t[0]) for t in tournament._tasks(_cfg(tmp_path, boards=2000), set(), None)]
    assert sizes == [8, 16, 32, 64, 128, 256, 512, 512, 472]
    tasks = list(tournament._tasks(_cfg(tmp_path, boards=30), {0, 1, 9}, None))
    assert [t[0] for t in tasks] == [[2, 3, 4, 5, 6, 7, 8, 10], list(range(11, 27)), [27, 28, 29]]
    assert [len(t[0]) for t in tournament._tasks(_cfg(tmp_path, boards=20), set(), 6)] == [6, 6, 6, 2]


def test_a_one_process_run_plays_the_growing_batches_and_a_given_size_capped(tmp_path, monkeypatch):
    """The run itself, not only the schedule: the batch sizes its one process plays (review, session 46)."""
    from training import tournament

    sizes: list[int] = []
    real = tournament.play_boards

    def recording(task, on_board=None):
        sizes.append(len(task[0]))
        return real(task, on_board=on_board)

    monkeypatch.setattr(tournament, "play_boards", recording)
    run(_cfg(tmp_path, boards=30))
    assert sizes == [8, 16, 6]
    monkeypatch.setattr(tournament, "LOCAL_CHUNK", 4)
    sizes.clear()
    run(_cfg(tmp_path / "b", boards=10, boards_per_task=5))
    assert sizes == [4, 4, 2]


def test_a_ctrl_c_before_any_board_says_to_start_over(tmp_path):
    from training import tournament

    cfg = _cfg(tmp_path, boards=10)
    said = tournament._interrupted(cfg, tmp_path / "none.jsonl")
    assert said == f"no board was logged in {tmp_path / 'none.jsonl'}; run the command again to start over"


def test_a_game_padded_with_a_million_actions_is_refused_in_a_batch_of_its_own(finished, tmp_path):
    """Red team, session 35: the resume check re-created every 4,096 games in one table of (games, longest game)
    actions, so one game padded with a million actions in a 3 MB log asked for 30 GiB. Batches are now bounded in
    cells too (training.tournament_log.CHECK_CELLS), and the padded game is refused where its game ends."""
    import base64

    from training.tournament_log import CHECK_BATCH, CHECK_CELLS, result_batches

    _, log = finished
    header, *boards = _lines(log)
    entry = json.loads(boards[-1])
    game = entry["games"][0]
    natural = len(base64.b64decode(game["actions"]))
    game["actions"] = base64.b64encode(base64.b64decode(game["actions"]) + bytes(1_000_000)).decode()
    padded = header + b"\n" + b"\n".join([*boards[:-1], json.dumps(entry).encode()]) + b"\n"
    tracemalloc.start()
    try:
        with pytest.raises(
            TournamentError, match=rf"ends at action {natural - 1}, before its last \({natural + 999_999}\)"
        ):
            _resume(tmp_path, padded)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak  # the old single batch peaked at 60 MB here
    # the batches themselves: many short games and a few long ones never make a table above the bound
    short, long_ = {"actions": "A" * 400}, {"actions": "A" * 4_000_000}
    games = [(0, 0, short)] * 5000 + [(1, 0, long_)] + [(2, 0, short)] * 3000 + [(3, 0, long_)] * 2
    batches = result_batches(games)
    assert [g for b in batches for g in b] == games  # in order, none lost
    for b in batches:
        width = max(len(g[2]["actions"]) * 3 // 4 + 1 for g in b)
        assert len(b) <= CHECK_BATCH and (len(b) == 1 or len(b) * width <= CHECK_CELLS)


@pytest.mark.parametrize(
    "name, kind",
    [("games.jsonl", "fifo"), ("games.jsonl", "link to /dev/zero"), ("games.jsonl", "link to a log"),
     ("results.json", "fifo"), ("chart.png", "link to a log")],
)  # fmt: skip
def test_an_output_that_is_not_a_regular_file_is_refused_before_anything_runs(finished, tmp_path, name, kind):
    """Red team, session 35: a FIFO at OUT/games.jsonl (or results.json, written at the end) hung the tournament in
    open() for good, a link to /dev/zero said only "[Errno 22] Invalid argument"; a link may point anywhere the run
    would then write to."""
    import os

    out = tmp_path / "t"
    out.mkdir()
    if kind == "fifo":
        os.mkfifo(out / name)
    else:
        target = tmp_path / "elsewhere.jsonl"
        target.write_bytes(finished[1])
        os.symlink("/dev/zero" if "zero" in kind else target, out / name)
    for resume in (False, True):
        with pytest.raises(TournamentError, match=rf"{name} is not a regular file \(a link, FIFO or device\)"):
            run(_cfg(out, resume=resume))
    assert sorted(p.name for p in out.iterdir()) == [name]  # nothing written beside it
