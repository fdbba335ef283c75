"""bench/paired_logs.py and bench/tournament_log_summary.py read tournament logs plain or gzip-compressed
(docs/search_runs keeps the newer logs as ``.jsonl.gz``) and refuse a file that is not a log in one line."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from meld8_env.rules import RuleConfig
from training.tournament import TournamentConfig, run

BENCH = Path(__file__).resolve().parent.parent / "bench"
FAST = RuleConfig(rounds=2, min_yaku_han=(1, 1), max_replays=1)


def _bench(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, cwd=BENCH)


def _log(tmp_path: Path, agents: list[str], name: str) -> Path:
    out = tmp_path / name
    run(TournamentConfig(agents, boards=4, seed=3, out=str(out), rules=FAST, progress=False))
    return out / "games.jsonl"


def test_gzipped_logs_read_as_the_plain_ones(tmp_path):
    a = _log(tmp_path, ["greedy", "defensive", "random"], "a")
    b = _log(tmp_path, ["defensive", "greedy", "random"], "b")  # the same boards, the lineup listed in another order
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(a.read_bytes()))
    unnamed = tmp_path / "a_packed.jsonl"  # compressed under a plain name: told by its first bytes
    unnamed.write_bytes(gz.read_bytes())
    assert (
        _bench("tournament_log_summary.py", str(unnamed)).stdout == _bench("tournament_log_summary.py", str(a)).stdout
    )
    plain = _bench("tournament_log_summary.py", str(a))
    packed = _bench("tournament_log_summary.py", str(gz))
    assert plain.returncode == 0 and packed.stdout == plain.stdout and "4 boards, 24 games" in plain.stdout
    # greedy against itself on the same boards: no difference; the gz log pairs like the plain one
    same = _bench("paired_logs.py", str(gz), "greedy", str(a), "greedy")
    assert same.returncode == 0 and "A - B: +0.000 [+0.000, +0.000]" in same.stdout
    cross = _bench("paired_logs.py", str(gz), "greedy", str(b), "greedy")
    assert cross.returncode == 0 and cross.stdout == _bench("paired_logs.py", str(a), "greedy", str(b), "greedy").stdout
    assert "4 shared boards" in cross.stdout


def test_a_file_that_is_not_a_log_is_refused_in_one_line(tmp_path):
    junk = tmp_path / "junk.jsonl.gz"
    junk.write_bytes(b"not gzip at all")
    for script, args in (
        ("tournament_log_summary.py", [str(junk)]),
        ("paired_logs.py", [str(junk), "greedy", str(junk), "greedy"]),
    ):
        res = _bench(script, *args)
        assert res.returncode != 0 and "not a readable tournament log" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
    binary = tmp_path / "games.jsonl"  # neither gzip nor text, under a plain log's name
    binary.write_bytes(bytes(range(128, 256)))
    res = _bench("tournament_log_summary.py", str(binary))
    assert res.returncode != 0 and "not a readable tournament log" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    text = tmp_path / "noheader.jsonl"
    text.write_text('{"type": "board"}\n')
    res = _bench("tournament_log_summary.py", str(text))
    assert res.returncode != 0 and res.stderr.strip() == f"{text}: not a tournament games.jsonl (no header line)"


def test_paired_logs_pool_the_boards_of_several_pairs(tmp_path):
    """Pairs played on different seeds pool their boards: the pooled difference is the mean over every board of
    every pair (not the mean of the pairs' means), with an interval over all of them."""
    import re

    def log(agents: list[str], name: str, seed: int) -> Path:
        out = tmp_path / name
        run(TournamentConfig(agents, boards=3 if seed == 3 else 5, seed=seed, out=str(out), rules=FAST, progress=False))
        return out / "games.jsonl"

    pairs = [
        (log(["greedy", "defensive", "random"], "a3", 3), log(["random", "defensive", "greedy"], "b3", 3)),
        (log(["greedy", "defensive", "random"], "a4", 4), log(["random", "defensive", "greedy"], "b4", 4)),
    ]
    args = [x for a, b in pairs for x in (str(a), "greedy", str(b), "random")]
    res = _bench("paired_logs.py", *args)
    assert res.returncode == 0, res.stderr
    assert "pooled over 2 pairs: 8 boards" in res.stdout
    diffs = [float(m) for m in re.findall(r"A - B: ([+-]\d\.\d+)", res.stdout)]
    assert len(diffs) == 3  # one line per pair, then the pooled one
    # 3 and 5 boards: the pooled mean weighs boards, not pairs
    assert abs(diffs[2] - (3 * diffs[0] + 5 * diffs[1]) / 8) < 0.002
    bad = _bench("paired_logs.py", str(pairs[0][0]), "greedy", str(pairs[0][1]))
    assert bad.returncode != 0 and bad.stderr.strip().endswith("four arguments per pair: got 3 arguments")
    # a pair whose boards are not the same deals is refused, naming the logs
    mixed = _bench("paired_logs.py", str(pairs[0][0]), "greedy", str(pairs[1][1]), "random")
    assert mixed.returncode != 0 and "not the same boards" in mixed.stderr
    assert str(pairs[0][0]) in mixed.stderr and str(pairs[1][1]) in mixed.stderr
    # the same pair twice would count its boards twice: refused
    twice = _bench("paired_logs.py", *args[:4], *args[:4])
    assert twice.returncode != 0 and "share deal seed" in twice.stderr


def test_summary_pools_the_boards_of_one_lineup_on_several_seeds(tmp_path):
    """Logs of one lineup on different seeds pool their boards (mean over every board, not over the logs);
    another lineup, or a board counted twice, is refused in one line; --as names a lineup spelled differently."""
    import re

    def log(agents: list[str], name: str, seed: int, boards: int) -> Path:
        out = tmp_path / name
        run(TournamentConfig(agents, boards=boards, seed=seed, out=str(out), rules=FAST, progress=False))
        return out / "games.jsonl"

    a = log(["greedy", "defensive", "random"], "a", 3, 3)
    b = log(["greedy", "defensive", "random"], "b", 4, 5)
    res = _bench("tournament_log_summary.py", str(a), str(b))
    assert res.returncode == 0, res.stderr
    assert "pooled over 2 logs: 8 boards, 48 games" in res.stdout
    greedy = [float(m) for m in re.findall(r"^greedy\s+(\d\.\d+)", res.stdout, re.M)]
    assert len(greedy) == 3  # one line per log, then the pooled one
    assert abs(greedy[2] - (3 * greedy[0] + 5 * greedy[1]) / 8) < 0.002  # boards weigh, not logs
    other = log(["defensive", "greedy", "random"], "c", 5, 2)
    bad = _bench("tournament_log_summary.py", str(a), str(other))
    assert bad.returncode != 0 and "pool logs of one lineup" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    twice = _bench("tournament_log_summary.py", str(a), str(a))
    assert twice.returncode != 0 and "each board may count once" in twice.stderr
    named = _bench("tournament_log_summary.py", "--as", "x,y,z", str(a), str(other))
    assert named.returncode == 0, named.stderr
    assert "pooled over 2 logs: 5 boards" in named.stdout and re.search(r"^x\s+\d\.\d+", named.stdout, re.M)


def test_tournament_throughput_compares_bot_decisions_with_random_play_in_one_run():
    """bench/tournament_throughput.py prints issue 20's comparison from its own run: the tournament's bot decisions
    per second (every logged action) against meld8 simulate's random-play steps per second, and their ratio."""
    out = _bench("tournament_throughput.py", "--boards", "1", "--repeats", "1", "--simulate-games", "8")
    assert out.returncode == 0, out.stderr
    rows = {}
    for line in out.stdout.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 2 and cells[1].replace(",", "").replace(".", "").isdigit():
            rows[cells[0]] = float(cells[1].replace(",", ""))
    steps = rows["meld8 simulate random-play steps (1 thread, 8 games)"]
    for threads in (1, 2):
        decisions = rows[f"bot decisions in the batched tournament, {threads} thread(s)"]
        assert decisions > 0 and steps > 0
        ratio = rows[f"tournament decisions / simulate steps, {threads} thread(s)"]
        assert abs(ratio - decisions / steps) < 0.002, (ratio, decisions, steps)  # the rows are printed rounded
    bad = _bench("tournament_throughput.py", "--simulate-games", "0")
    assert bad.returncode != 0 and "must be at least 1" in bad.stderr


def test_rollout_instructions_tournament_workload_counts_every_logged_action():
    """bench/rollout_instructions.py --tournament BOARDS runs tournament_throughput.py's lineup (what valgrind counts
    with --inner) and reports its bot decisions: every action the games logged. A bad size is refused in one line."""
    out = _bench("rollout_instructions.py", "--inner", "--tournament", "1")
    assert out.returncode == 0, out.stderr
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        from tournament_throughput import actions_of, play_lineup
    finally:
        sys.path.pop(0)
    recs, _ = play_lineup(1, 512, 0, threads=1)
    assert len(recs) == 6 and out.stdout.split() == ["decisions", str(actions_of(recs))]
    bad = _bench("rollout_instructions.py", "--tournament", "0")
    assert bad.returncode != 0 and "--tournament must be at least 1, got 0" in bad.stderr
    for extra in (("--table", "1"), ("--records", "5"), ("--until", "game")):
        bad = _bench("rollout_instructions.py", "--tournament", "2", *extra)
        assert bad.returncode != 0 and "without --table, --records or --until" in bad.stderr


def test_rollout_instructions_table_modes_count_the_same_hands():
    """--table per-discard (one distance call per discard, the unit of the one pass's target) and --table 0 (the
    one pass) run on the same draw-phase hands and discards, so their instruction counts divide."""
    outs = [_bench("rollout_instructions.py", "--inner", "--records", "60", "--table", m) for m in ("0", "per-discard")]
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    words = [o.stdout.split() for o in outs]
    assert words[0] == words[1] and words[0][0] == "hands" and int(words[0][3]) > int(words[0][1]) > 0, words
    bad = _bench("rollout_instructions.py", "--table", "3")
    assert bad.returncode != 0 and "invalid choice: '3'" in bad.stderr


HEADER = '{"type": "header", "agents": ["a", "b", "c"], "seed": 1}'
GAME = '{"seats": [0, 1, 2], "placements": [1, 2, 3]}'
HOSTILE = {  # red team, session 35: each ended in a traceback, a hang, or a number no log can hold
    "agents a string": ('{"type": "header", "agents": "abc", "seed": 1}\n', "agents must be a list of 2 or 3"),
    "header a list": ("[1, 2]\n", "no header line"),
    "board without games": (HEADER + '\n{"type": "board", "board": 0, "seed": 5, "games": []}\n', "line 2: a board"),
    "two placements": (
        HEADER + '\n{"type": "board", "board": 0, "seed": 5, "games": [{"seats": [0, 1, 2], "placements": [1, 2]}]}\n',
        "line 2: a board",
    ),
    "seat 9": (
        HEADER + '\n{"type": "board", "board": 0, "seed": 5, "games": [{"seats": [0, 1, 9], '
        '"placements": [1, 2, 3]}]}\n',
        "line 2: a board",
    ),
    "nested deeply": ("[" * 100_000 + "]" * 100_000 + "\n", "line 1 is not a JSON line: RecursionError"),
}


def test_hostile_logs_are_refused_in_one_line(tmp_path):
    import os

    for name, (text, says) in HOSTILE.items():
        f = tmp_path / f"{name}.jsonl"
        f.write_text(text)
        scripts = [("tournament_log_summary.py", [str(f)])]
        if name in ("seat 9", "nested deeply"):  # paired_logs reads logs with the same function
            scripts.append(("paired_logs.py", [str(f), "a", str(f), "a"]))
        for script, args in scripts:
            res = _bench(script, *args)
            assert res.returncode == 1 and says in res.stderr and len(res.stderr.strip().splitlines()) == 1, (name, res)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # it hung, waiting for a writer
    for p in (fifo, tmp_path):
        res = _bench("tournament_log_summary.py", str(p))
        assert res.returncode == 1 and "not a replay or tournament log file (a folder or device)" in res.stderr
    esc = tmp_path / "esc.jsonl"
    board = '{"type": "board", "board": %d, "seed": %d, "games": [' + GAME + "]}"
    esc.write_text(HEADER.replace('"a"', '"\\u001b[31mRED"') + "\n" + board % (0, 5) + "\n" + board % (1, 6) + "\n")
    res = _bench("tournament_log_summary.py", str(esc))
    assert res.returncode == 0 and "\x1b" not in res.stdout and "\\x1b[31mRED" in res.stdout


def test_a_hostile_search_eval_summary_is_refused_in_one_line(tmp_path):
    for body, says in (
        ('{"seed": 1e400, "rows": [{"agent": "a", "board_means": [1.5, 2]}]}', "OverflowError"),
        ('{"seed": 1, "rows": [{"agent": "a", "board_means": [1.5, "x"]}]}', "ValueError"),
        ('{"seed": 1, "rows": [{"agent": "a", "board_means": [1.5, 7]}]}', "a board mean outside 1..3"),
    ):
        f = tmp_path / "s.json"
        f.write_text(body)
        res = _bench("paired_logs.py", str(f), "a", str(f), "a")
        assert res.returncode == 1 and says in res.stderr and len(res.stderr.strip().splitlines()) == 1, res


def test_summary_outcomes_are_the_tournaments_own_rates(tmp_path):
    """``--outcomes``: per agent, wins / deal-ins / calls per hand, Tsumo share, han per win and the share of games
    in each place counted from the log are the rates the tournament itself wrote to results.json; a log without
    those counts is refused in one line."""
    import json
    import re

    log = _log(tmp_path, ["greedy", "defensive", "random"], "a")
    res = _bench("tournament_log_summary.py", "--outcomes", str(log))
    assert res.returncode == 0, res.stderr
    results = json.loads((log.parent / "results.json").read_text())["agents"]
    keys = ("win_rate", "deal_in_rate", "call_rate", "tsumo_share", "average_win_han")
    for name, stats in results.items():
        row = re.search(rf"^\| {name} \|(.+)\|$", res.stdout, re.M)
        assert row, res.stdout
        cells = row.group(1).split("|")
        for key, value in zip(keys, [float(x) for x in cells[:-1]], strict=True):
            assert abs(value - stats[key]) <= 6e-4, (name, key, value, stats[key])
        shares = [float(x) for x in cells[-1].split("/")]
        assert np.allclose(shares, stats["rank_distribution"], atol=6e-4), (name, shares)
    lines = log.read_text().splitlines()
    board = json.loads(lines[1])
    del board["games"][0]["win_han"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(board)]) + "\n")
    res = _bench("tournament_log_summary.py", "--outcomes", str(bad))
    assert res.returncode != 0 and "--outcomes needs each game's hands" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "argv, says",
    [
        (["search_speed.py", "--spec", "serach"], "search_speed.py: error: unknown agent 'serach'"),
        (["search_speed.py", "--states", "0"], "argument --states: must be an integer >= 1, got 0"),
        (["seated_speed.py", "serach,greedy,greedy"], "seated_speed.py: error: unknown agent 'serach'"),
        (["hand_eval.py", "--n", "0"], "argument --n: must be an integer >= 1, got 0"),
        (["env_throughput.py", "--seconds", "-1"], "must be a number of seconds > 0, got -1"),
    ],
)
def test_bench_scripts_refuse_bad_arguments_in_one_line(argv, says):
    """Helper walkthrough, session 46: these were tracebacks (an IndexError, an AgentLoadError) or rows of zeros."""
    done = _bench(*argv)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr[-1500:]
