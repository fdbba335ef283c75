"""Duplicate tournaments: scheduling, statistics on hand-made results, crash + resume, clear errors."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from process_kit import gone

from meld8_app.cli import main
from meld8_env.rules import RuleConfig
from training.stats import summarize
from training.tournament import TournamentConfig, TournamentError, run, seatings

FAST = RuleConfig(rounds=2, min_yaku_han=(1, 1), max_replays=1)


def test_seatings_cover_every_permutation_once():
    assert len(seatings(["greedy", "defensive", "random"])) == 6
    assert len(seatings(["greedy", "random", "random"])) == 3  # rotations when two seats hold copies
    assert len(seatings(["random", "random", "random"])) == 1


def test_every_board_played_under_every_seating(tmp_path):
    res = run(TournamentConfig(["greedy", "defensive", "random"], boards=4, seed=1, out=str(tmp_path), rules=FAST,
                               progress=False))  # fmt: skip
    lines = [json.loads(x) for x in (tmp_path / "games.jsonl").read_text().splitlines()]
    boards = [x for x in lines if x["type"] == "board"]
    assert sorted(d["board"] for d in boards) == [0, 1, 2, 3]
    for d in boards:
        assert sorted(tuple(g["seats"]) for g in d["games"]) == seatings(["greedy", "defensive", "random"])
        assert len({g["seed"] for g in d["games"]}) == 1
    assert res["games"] == 24 and set(res["agents"]) == {"greedy", "defensive", "random"}
    assert (tmp_path / "chart.png").stat().st_size > 0
    assert len((tmp_path / "games.csv").read_text().splitlines()) == 1 + 24 * 3


def _game(seats, places, scores, wins=(0, 0, 0), deal_ins=(0, 0, 0)):
    return {"seats": list(seats), "placements": list(places), "final_scores": list(scores), "hands": 4,
            "drawn_hands": 1, "wins": list(wins), "tsumo": [0, 0, 0], "deal_ins": list(deal_ins), "calls": [1, 0, 0],
            "win_han": [w * 3 for w in wins]}  # fmt: skip


def test_statistics_on_hand_made_results():
    names = ["A", "B", "C"]
    boards = [
        {
            "board": 0,
            "games": [_game((0, 1, 2), (1, 2, 3), (50_000, 30_000, 10_000), wins=(2, 1, 0), deal_ins=(0, 1, 2))],
        },
        {"board": 1, "games": [_game((1, 2, 0), (2, 3, 1), (30_000, 0, 60_000), wins=(1, 0, 2), deal_ins=(1, 2, 0))]},
    ]
    res = summarize(boards, names, 3, seed=5)
    a, c = res["agents"]["A"], res["agents"]["C"]
    assert a["mean_placement"] == 1.0 and a["rank_distribution"] == [1.0, 0.0, 0.0]
    assert a["mean_score"] == 55_000 and a["score_ci95"][0] < 55_000 < a["score_ci95"][1]
    assert a["win_rate"] == 4 / 8 and c["deal_in_rate"] == 4 / 8 and a["call_rate"] == 1 / 8
    assert a["average_win_han"] == 3.0
    assert res["boards"] == 2 and res["games"] == 2 and res["draw_rate"] == 2 / 8
    assert a["rating"]["mu"] > res["agents"]["B"]["rating"]["mu"] > c["rating"]["mu"]
    pair = next(p for p in res["pairwise"] if {p["a"], p["b"]} == {"A", "C"})
    # two boards are too few to claim a difference (Student's t, 1 degree of freedom: p = 0.126)
    assert pair["mean_score_diff"] == 50_000 and pair["verdict"] == "no significant difference"
    assert 0.1 < pair["p_value"] < 0.15


def test_the_printed_table_escapes_control_characters_in_agent_names():
    """An agent's name is the user's text (a cmd: spec can hold anything): the table cannot retitle a terminal."""
    from training.tournament_report import format_table

    names = ["A\x1b]0;TITLE\x07", "B", "C\u202e"]
    boards = [{"board": 0, "games": [_game((0, 1, 2), (1, 2, 3), (50_000, 30_000, 10_000), wins=(2, 1, 0),
                                            deal_ins=(0, 1, 2))]}]  # fmt: skip
    text = format_table(summarize(boards, names, 3, seed=5))
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "A\\x1b]0;TITLE\\x07" in text and text.count("\n") >= 4


def _results(path):
    res = json.loads((path / "results.json").read_text())
    return {n: (a["mean_score"], a["mean_placement"], a["games"]) for n, a in res["agents"].items()}, res["games"]


def test_kill_9_then_resume_loses_and_duplicates_nothing(tmp_path):
    # enough boards that the kill lands mid-way: a lineup of built-in bots plays whole games in C, and its boards
    # reach the log in bursts, one per slice of 256 games (~43 boards; training.arena)
    clean, crashed = tmp_path / "clean", tmp_path / "crashed"
    n_boards = 600
    base = ["--agents", "greedy,defensive,random", "--boards", str(n_boards), "--seed", "3"]
    assert main(["tournament", *base, "--out", str(clean)]) == 0
    rules = tmp_path / "rules.yaml"
    rules.write_text("")
    cmd = [sys.executable, "-m", "meld8_app.cli", "tournament", *base, "--out", str(crashed)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = crashed / "games.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not log.exists() or log.read_text().count("\n") < 4):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    lines_at_kill = log.read_text().count("\n")
    assert 4 <= lines_at_kill < n_boards + 1, "the run was not interrupted mid-way"
    with open(log, "a") as f:
        f.write('{"type": "board", "board": 99, "gam')  # a torn last write
    assert main(["tournament", *base, "--out", str(crashed), "--resume"]) == 0
    assert _results(crashed) == _results(clean)
    boards = [json.loads(x)["board"] for x in log.read_text().splitlines()[1:]]
    assert sorted(boards) == list(range(n_boards))


def test_log_of_another_run_or_corrupt_middle_is_an_error(tmp_path):
    cfg = TournamentConfig(
        ["greedy", "random", "random"], boards=2, seed=1, out=str(tmp_path), rules=FAST, progress=False
    )
    run(cfg)
    with pytest.raises(TournamentError, match="exists: add --resume"):
        run(cfg)
    other = TournamentConfig(["greedy", "random", "random"], boards=2, seed=2, out=str(tmp_path), rules=FAST,
                             resume=True, progress=False)  # fmt: skip
    with pytest.raises(TournamentError, match="belongs to another tournament"):
        run(other)
    log = tmp_path / "games.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join([lines[0], "{broken", *lines[1:]]) + "\n")
    with pytest.raises(TournamentError, match="line 2 is not JSON"):
        run(TournamentConfig(**{**cfg.__dict__, "resume": True}))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agents", "greedy,wizard,random"], "unknown agent 'wizard'"),
        (["--agents", "greedy,random"], "give one agent per seat: 3 agents, got 2"),
        (["--config", "missing.yaml"], "tournament config not found"),
    ],
)
def test_cli_errors(tmp_path, capsys, argv, message):
    assert main(["tournament", *argv, "--boards", "1", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_bad_yaml(tmp_path, capsys):
    bad = tmp_path / "t.yaml"
    bad.write_text("agents: [greedy\n")
    assert main(["tournament", "--config", str(bad)]) == 2
    assert "not valid YAML" in capsys.readouterr().err
    bad.write_text("agents: [greedy, random, random]\nplayers: 3\n")
    assert main(["tournament", "--config", str(bad)]) == 2
    assert "unknown key 'players'" in capsys.readouterr().err
    bad.write_text("agents: [greedy, random, random]\nboards: 2\ndeals: 3\n")  # it said: unknown key 'deals'
    assert main(["tournament", "--config", str(bad)]) == 2
    assert f"{bad}: give boards or deals (its old name), not both" in capsys.readouterr().err


def test_ray_backend_equals_local_backend(tmp_path):
    """A local Ray instance plays the same boards and gives the same results as local workers."""
    pytest.importorskip("ray") if os.environ.get("CI") != "true" else None  # CI installs ray: must run there
    common = dict(agents=["greedy", "defensive", "random"], boards=6, seed=11, rules=FAST, progress=False,
                  boards_per_task=2, workers=2)  # fmt: skip
    local = run(TournamentConfig(out=str(tmp_path / "local"), backend="local", **common))
    remote = run(TournamentConfig(out=str(tmp_path / "ray"), backend="ray", **common))
    assert local == remote


def _force_python_bots(monkeypatch):
    """The Python twins of the built-in bots (the evaluator stays C, so this runs in seconds)."""
    import agents.greedy
    import agents.random_agent

    monkeypatch.setattr(agents.greedy, "c_bots_enabled", lambda: False)
    monkeypatch.setattr(agents.random_agent, "c_bots_enabled", lambda: False)


def test_c_bots_and_python_twins_give_identical_results_json(tmp_path, monkeypatch):
    """Issue 20: a tournament of greedy/defensive/random gives the same results.json with either bot
    backend (the C bots are exact twins of agents/)."""
    rules = tmp_path / "rules.yaml"
    rules.write_text("rounds: 2\nmin_yaku_han: [1, 1]\nmax_replays: 1\n")
    base = ["--agents", "greedy,defensive,random", "--boards", "3", "--seed", "5", "--rules", str(rules)]
    assert main(["tournament", *base, "--out", str(tmp_path / "c")]) == 0
    _force_python_bots(monkeypatch)
    assert main(["tournament", *base, "--out", str(tmp_path / "py")]) == 0
    assert (tmp_path / "c" / "results.json").read_bytes() == (tmp_path / "py" / "results.json").read_bytes()


@pytest.mark.slow
def test_meld8_backend_python_tournament_equals_c(tmp_path):
    """The whole command under MELD8_BACKEND=python (Python evaluator and bots) gives the same results.json."""
    rules = tmp_path / "rules.yaml"
    rules.write_text("rounds: 1\nmin_yaku_han: [1]\nmax_replays: 0\n")
    base = ["tournament", "--agents", "greedy,defensive,random", "--boards", "1", "--seed", "2", "--rules", str(rules)]
    for backend in ("c", "python"):
        env = {**os.environ, "MELD8_BACKEND": backend}
        subprocess.run([sys.executable, "-m", "meld8_app.cli", *base, "--out", str(tmp_path / backend)], env=env,
                       check=True, capture_output=True)  # fmt: skip
    assert (tmp_path / "c" / "results.json").read_bytes() == (tmp_path / "python" / "results.json").read_bytes()


def _pool_workers(pid: int) -> list[int]:
    """The multiprocessing workers among a process's children (not its resource tracker)."""
    from pathlib import Path

    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(k) for k in (task / "children").read_text().split()]
    return [k for k in kids if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()]


def _cpu_seconds(pid: int) -> float:
    from pathlib import Path

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the parent-death signal is Linux's")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["kill", "kill -9"])
def test_no_worker_outlives_a_killed_tournament(tmp_path, sig):
    """A tournament's worker processes end with it when it is killed. They used to play on, their boards lost,
    until their task was done and its result had nowhere to go: with a search seated, a task of 128 boards is
    minutes of both cores (session 41)."""
    agents = "search:worlds=16+extend=0,greedy,defensive"
    cmd = [sys.executable, "-m", "meld8_app.cli", "tournament", "--agents", agents,
           "--boards", "100000", "--workers", "2", "--out", str(tmp_path / "t")]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until both workers are playing (each has spent a second of CPU)
            workers = _pool_workers(proc.pid)
            if len(workers) == 2 and all(_cpu_seconds(w) >= 1.0 for w in workers):
                break
            time.sleep(0.05)
        assert len(workers) == 2 and all(_cpu_seconds(w) >= 1.0 for w in workers), "the workers never started"
    finally:
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
    assert all(gone(w, wait=20) for w in workers), "a worker outlived its tournament"


def _start(tmp_path, boards: int, **popen) -> subprocess.Popen:
    """A bots-only tournament on two workers in its own process group, SIGINT at its default (as in a terminal)."""
    cmd = [sys.executable, "-m", "meld8_app.cli", "tournament", "--agents", "greedy,defensive,random",
           "--boards", str(boards), "--seed", "5", "--workers", "2", "--out", str(tmp_path / "t")]  # fmt: skip
    err = open(tmp_path / "stderr.txt", "w")  # a file, not a pipe nobody reads while the run goes on
    default_sigint = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)  # noqa: E731
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                            preexec_fn=default_sigint)  # fmt: skip


def _logged_boards(tmp_path) -> int:
    log = tmp_path / "t" / "games.jsonl"
    return max(0, log.read_bytes().count(b"\n") - 1) if log.exists() else 0


def _until_playing(proc: subprocess.Popen, tmp_path) -> list[int]:
    """The workers, once the first board is logged (polled with a deadline)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _pool_workers(proc.pid)
        if len(workers) == 2 and _logged_boards(tmp_path) >= 1:
            return workers
        time.sleep(0.01)
    raise AssertionError("the tournament never logged a board on two workers")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_worker_ends_the_tournament_in_one_line_and_its_log_resumes(tmp_path):
    """A worker killed mid-run (kill -9, or out of memory) used to leave the tournament waiting for its result for
    ever (red team, session 42); now the tournament ends at once with one line, the other worker goes too, and
    ``--resume`` completes the log."""
    proc = _start(tmp_path, 20_000)
    try:
        workers = _until_playing(proc, tmp_path)
        os.kill(workers[0], signal.SIGKILL)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = (tmp_path / "stderr.txt").read_text().strip().splitlines()
    assert rc == 2 and "a worker process ended without its result" in err[-1] and "--resume" in err[-1], err[-3:]
    assert "Traceback" not in "\n".join(err)
    assert all(gone(w, wait=20) for w in workers), "a worker outlived the failed tournament"
    logged = _logged_boards(tmp_path)
    assert 1 <= logged < 20_000
    res = run(TournamentConfig(["greedy", "defensive", "random"], boards=logged + 3, seed=5, out=str(tmp_path / "t"),
                               resume=True, progress=False, chart=False))  # fmt: skip
    assert res["games"] == (logged + 3) * 6


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_ends_a_tournament_and_its_workers_at_once_in_one_line(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group. With two workers it could hang the tournament (a worker
    stopped mid-write) or print the workers' tracebacks (red team, session 42): now the workers ignore it, and the
    tournament ends them and says one line."""
    proc = _start(tmp_path, 20_000)
    try:
        workers = _until_playing(proc, tmp_path)
        os.killpg(proc.pid, signal.SIGINT)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = (tmp_path / "stderr.txt").read_text()
    last = err.strip().splitlines()[-1]
    logged = _logged_boards(tmp_path)  # the line counts the boards in the log, and says how to go on (session 46)
    said = f"meld8 tournament: interrupted: {logged} of 20000 boards logged in {tmp_path / 't' / 'games.jsonl'}; "
    assert rc == 130 and last == said + "run the command with --resume to play the rest", err[-500:]
    assert "Traceback" not in err
    assert all(gone(w, wait=20) for w in workers), "a worker outlived the interrupted tournament"


def test_refused_runs_leave_the_folder_as_they_found_it(tmp_path, capsys):
    """Nothing is written before every check has passed: a new run over a log, or a --resume of another seed's log,
    is refused before the folder's lock is written (red team, session 42); a lock that cannot be opened is named in
    one line; a resume with fewer --boards says what it leaves out of the results."""
    rules = RuleConfig(rounds=2, min_yaku_han=(1, 1), max_replays=1)
    out = tmp_path / "t"
    base = dict(agents=["greedy", "defensive", "random"], seed=9, out=str(out), rules=rules, progress=False,
                chart=False)  # fmt: skip
    run(TournamentConfig(boards=4, **base))
    (out / ".lock").unlink()
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(TournamentError, match="exists: add --resume"):
        run(TournamentConfig(boards=4, **base))
    with pytest.raises(TournamentError, match="line 1: "):
        run(TournamentConfig(boards=4, resume=True, **{**base, "seed": 8}))
    assert sorted(p.name for p in out.iterdir()) == before
    res = run(TournamentConfig(boards=2, resume=True, **base))
    assert res["games"] == 2 * 6
    assert "2 logged boards at or above --boards 2 stay in the log, out of the results" in capsys.readouterr().err
    (out / ".lock").unlink()
    (out / ".lock").mkdir()
    with pytest.raises(TournamentError, match=r"\.lock: cannot open the folder's lock \(Is a directory\)"):
        run(TournamentConfig(boards=4, resume=True, **base))
