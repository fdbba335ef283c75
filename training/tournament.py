"""Duplicate tournaments: who is stronger, by how much, with confidence.

Every board seed is played under every distinct seating of the agents (6 for three different
agents, 3 rotations when two seats hold copies of one agent), so seat and card luck cancel.
Finished boards are appended to ``OUT/games.jsonl`` as they complete (each game with its seed and
its actions, so ``meld8 view OUT/games.jsonl --game K`` re-creates it) (flushed and fsynced; with
worker processes or Ray, as each task of ``boards_per_task`` boards returns; in one process, batches of 8
boards doubling up to 512, so a slow agent's first boards are kept early); a run
killed at any point continues with ``resume=True`` without losing or double-counting a game, and a
resumed log is re-created game by game first (a line whose results its actions do not give is
refused). At the end: ``results.json`` (training/stats.py), ``games.csv`` (one row per game and
seat), ``chart.png`` and a table in the terminal.

This module schedules the run; its parts live beside it, one concern each:

| module | concern |
|---|---|
| ``training.tournament_config`` | ``TournamentConfig``, ``seatings``, ``board_seed``, ``TournamentError`` |
| ``training.tournament_log`` | the log's schema, its reader and the self-check on resume |
| ``training.tournament_backends`` | where games are played: this process, a process pool, Ray actors |
| ``training.tournament_report`` | progress bar, ``games.csv``, ``chart.png``, the terminal table |
| ``training.run_folder`` | the output folder's lock (shared with the trainers) |
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from training import run_folder
from training.stats import summarize
from training.tournament_backends import (
    bounded,
    check_ray_installed,
    close_agents,
    init_worker,
    play_boards,
    pool_size,
    ray_results,
    worker_pool,
)
from training.tournament_config import TournamentConfig, TournamentError, board_seed, seatings
from training.tournament_log import (
    GAME_KEYS,
    LOG,
    PER_SEAT,
    append_entry,
    board_entry_error,
    first_line_check,
    read_log,
)
from training.tournament_report import SHAKY_BELOW, format_table, progress, write_chart, write_games_csv

__all__ = ["GAME_KEYS", "LOG", "PER_SEAT", "SHAKY_BELOW", "OutputLock", "TournamentConfig",
           "TournamentError", "board_entry_error", "board_seed", "format_table", "read_log", "run", "seatings",
           "write_chart", "write_games_csv"]  # fmt: skip


class OutputLock(run_folder.OutputLock):
    """The output folder's lock (``training.run_folder.OutputLock``), refusing with a TournamentError."""

    def __init__(self, out: Path) -> None:
        super().__init__(out, TournamentError)


def run(cfg: TournamentConfig) -> dict:
    """Play (or resume) the tournament and write its outputs; returns results.json's content."""
    from agents.registry import load_agent
    from meld8_env.agent import plays_streams, records_refusal, wants_records

    if cfg.boards < 1:
        raise TournamentError(f"boards must be >= 1, got {cfg.boards}")
    if cfg.backend not in ("local", "ray"):
        raise TournamentError(f"backend must be 'local' or 'ray', got {cfg.backend!r}")
    if cfg.backend == "ray":
        check_ray_installed()
    if not 2 <= len(cfg.agents) <= 3 or len(cfg.agents) != cfg.rules.num_players:
        raise TournamentError(f"give one agent per seat: {cfg.rules.num_players} agents, got {len(cfg.agents)}")
    out = Path(cfg.out)
    if out.exists() and not out.is_dir():  # before any agent: a cmd: bot's log folder would be made under it
        raise TournamentError(f"--out {out} is a file: give a folder for the tournament's outputs")
    for name in OUTPUTS:  # a FIFO hung the run in open(), /dev/zero said Errno 22, a link is written through
        path = out / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise TournamentError(
                f"{path} is not a regular file (a link, FIFO or device): move it or choose another --out"
            )
        if path.exists() and not os.access(path, os.W_OK):  # found after every game was played (red team, s37)
            raise TournamentError(f"{path} is not writable: make it writable or choose another --out")
    _check_folder_use(cfg, out)
    # fail fast with a clear error, the seat-protocol bots last: starting one writes its log under OUT/bots, which
    # must not happen when another agent's name is wrong, nor when the log a resume continues is refused
    specs = list(dict.fromkeys(cfg.agents))
    bots = [spec for spec in specs if spec.startswith("cmd:")]
    streaming = set(bots)  # the agents that may fault: the outside bots, and a plug-in that plays the protocol

    def load_check(spec: str) -> None:
        agent = load_agent(spec, cfg.rules, trust=cfg.trust_checkpoints, bots=cfg.bot_options())
        if plays_streams(agent):
            streaming.add(spec)
        if hasattr(agent, "close"):
            agent.close()
        if wants_records(agent):  # refused before the output folder is touched, not at its first decision
            raise TournamentError(records_refusal(spec, "a tournament"))

    for spec in specs:
        if spec not in bots:
            load_check(spec)
    checked = _resume_check(cfg, out, streaming) if cfg.resume else None  # before any bot writes its log
    for spec in bots:
        load_check(spec)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # the command line checks this first (meld8_env.paths.output_path); run() is public
        why = exc.strerror
        raise TournamentError(f"--out {out}: cannot create the folder ({why}); give one you can write to") from None
    with OutputLock(out):
        try:
            return _run_locked(cfg, out, checked, streaming)
        except KeyboardInterrupt:  # Ctrl-C: the one line says what was kept and how to go on (as training's does)
            raise KeyboardInterrupt(_interrupted(cfg, out / LOG)) from None


def _log_stamp(log: Path) -> tuple[int, ...] | None:
    """What tells whether a log changed between two looks (None: no log, or an empty one); the change time too, so
    a rewrite of the same size within one tick of a coarse clock is seen."""
    try:
        st = log.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if st.st_size else None


def _resume_check(cfg: TournamentConfig, out: Path, streaming: set[str]) -> tuple | None:
    """(the log's stamp, :func:`read_log` of it) for a resume, read before the folder's lock is taken and before a
    ``cmd:`` bot writes its log, so a refused resume leaves nothing behind (red team, session 47: a log whose third
    line was edited gained a .lock); None when there is no log to read. A folder another run holds is refused
    first, without reading its log (which may take a while, and which that run is still writing)."""
    if holder := run_folder.lock_holder(out):
        raise TournamentError(
            f"{out} is in use by {holder}; wait for it to finish or choose another output folder (--out / out)"
        )  # OutputLock's words: the same refusal, found earlier
    stamp = _log_stamp(out / LOG)
    return None if stamp is None else (stamp, read_log(out / LOG, cfg, streaming))


def _interrupted(cfg: TournamentConfig, log: Path) -> str:
    """What a Ctrl-C left: the boards in the log (each fsynced as it completed) and the command that continues."""
    try:
        with open(log, "rb") as f:
            logged = sum(1 for line in f if line.startswith(b'{"type":"board"'))
    except OSError:
        logged = 0
    if not logged:
        return f"no board was logged in {log}; run the command again to start over"
    if logged >= cfg.boards:  # stopped while writing the results: the log is whole
        return f"all {cfg.boards} boards are logged in {log}; run the command with --resume to write the results"
    return f"{logged} of {cfg.boards} boards logged in {log}; run the command with --resume to play the rest"


#: what a tournament writes in its folder (checked to be regular files, or absent, before anything runs)
OUTPUTS = (LOG, "results.json", "games.csv", "chart.png")


def _check_folder_use(cfg: TournamentConfig, out: Path) -> None:
    """Refuse a folder whose files a run would overwrite or misread (red team, session 37): a new tournament where
    another one's results lie (once its games.jsonl was gzipped, its results.json was silently replaced), one in a
    training run's folder, and ``--resume`` where no log is (a mistyped --out started a new tournament)."""
    log = out / LOG
    if cfg.resume:
        if not log.exists():
            raise TournamentError(f"--resume: {out} holds no {LOG} to continue; drop --resume to start a tournament")
        first_line_check(log, cfg)  # another tournament's log: refused before the lock is written
        if not log.stat().st_size and (kept := [name for name in OUTPUTS[1:] if (out / name).exists()]):
            # results with no log behind them: a resume would replace them with the results of its own games (red
            # team, session 47: an emptied games.jsonl let another tournament's results.json be overwritten)
            raise TournamentError(
                f"--resume: {log} is empty but {out} holds {', '.join(kept)}: those results have no log to continue; "
                "move them or choose another --out"
            )
        return
    if log.exists() and log.stat().st_size:  # as _run_locked refuses it under the lock, but before writing the lock
        raise TournamentError(f"{log} exists: add --resume to continue it, or choose another --out")
    if found := run_folder.run_markers(out):
        raise TournamentError(
            f"--out {out} holds a training run ({', '.join(found[:3])}): choose another folder for the tournament"
        )
    if not log.exists() or not log.stat().st_size:
        kept = [name for name in OUTPUTS[1:] if (out / name).exists()]
        if kept:
            raise TournamentError(
                f"--out {out} holds another tournament's {', '.join(kept)} without its {LOG}: move them or choose "
                "another --out"
            )


#: boards scheduled at a time in one process (a boards_per_task given is capped at it): memory is bounded by this,
#: not by the number of boards
LOCAL_CHUNK = 512
#: the first batch of a one-process run; each next one is twice as large, up to LOCAL_CHUNK. Every board of a
#: batch plays in lockstep and they end together, so one batch of all the boards logged nothing until its end: a
#: search tournament of 40 boards showed 0/40 for 84 of its 101 s, and a Ctrl-C kept nothing (session 46).
FIRST_CHUNK = 8


def _chunk_sizes(per_task: int | None) -> Iterator[int]:
    """Boards per task: ``per_task`` each time when given, else FIRST_CHUNK doubling up to LOCAL_CHUNK."""
    size = per_task or FIRST_CHUNK
    while True:
        yield size
        if per_task is None:
            size = min(2 * size, LOCAL_CHUNK)


def _tasks(
    cfg: TournamentConfig, finished: set[int], per_task: int | None
) -> Iterator[tuple[list[int], list[int], list[tuple[int, ...]]]]:
    """(board ids, seeds, seatings) tasks over the boards still to play, made lazily (``per_task`` None: the
    growing batches of :func:`_chunk_sizes`)."""
    seats = seatings(cfg.agents)
    sizes = _chunk_sizes(per_task)
    size = next(sizes)
    chunk: list[int] = []
    for d in range(cfg.boards):
        if d in finished:
            continue
        chunk.append(d)
        if len(chunk) == size:
            yield chunk, [board_seed(cfg.seed, x) for x in chunk], seats
            chunk, size = [], next(sizes)
    if chunk:
        yield chunk, [board_seed(cfg.seed, x) for x in chunk], seats


def _run_locked(
    cfg: TournamentConfig, out: Path, checked: tuple | None = None, streaming: set[str] | None = None
) -> dict:
    """The tournament under the folder's lock; ``checked``: :func:`_resume_check` as read before the lock, used
    when the log has not changed since (else it is read again); ``streaming``: the agents that may fault."""
    log = out / LOG
    header = cfg.log_header()
    done: list[dict] = []
    has_header = False
    if log.exists() and log.stat().st_size:
        if not cfg.resume:
            raise TournamentError(f"{log} exists: add --resume to continue it, or choose another --out")
        stamp = _log_stamp(log)
        done, valid, has_header = checked[1] if checked and checked[0] == stamp else read_log(log, cfg, streaming)
        with open(log, "r+b") as f:
            f.truncate(valid)
        beyond = sum(1 for e in done if e["board"] >= cfg.boards)
        if beyond:  # kept, not counted: a resume with fewer --boards said nothing of them (red team, session 42)
            print(f"{log}: {beyond} logged boards at or above --boards {cfg.boards} stay in the log, out of the "
                  "results", file=sys.stderr)  # fmt: skip
    finished = {e["board"] for e in done}
    n_todo = cfg.boards - sum(1 for d in finished if d < cfg.boards)
    per_task: int | None
    if cfg.workers <= 1 and cfg.backend == "local":
        # None: growing batches, so boards are logged (and kept) from early on
        per_task = None if cfg.boards_per_task is None else min(cfg.boards_per_task, LOCAL_CHUNK)
    else:
        per_task = cfg.boards_per_task or min(128, max(8, cfg.boards // (4 * max(cfg.workers, 1))))
    tasks = _tasks(cfg, finished, per_task)
    init_args = (cfg.agents, cfg.rules.to_dict(), cfg.seed, cfg.trust_checkpoints, cfg.bot_options())
    if done and cfg.progress:  # a resume: how much of the log there is (a finished one drew an empty bar, no word)
        left = f"playing the other {n_todo}" if n_todo else "the results are made again from the log"
        print(f"{log}: {cfg.boards - n_todo} of {cfg.boards} boards logged; {left}", file=sys.stderr)
    bar = progress(n_todo, cfg.progress and n_todo > 0)
    if cfg.has_bots():  # its header holds the seed, so every deal: no other account may read it (0600)
        os.close(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        os.chmod(log, 0o600)
    with open(log, "a") as f:
        # the header goes in with the first board: a run that fails before any board is played (an agent that raises
        # at its first decision, Ctrl-C) leaves an empty log, which a plain rerun starts afresh (a header-only log
        # made the rerun ask for --resume: red team, session 37)
        def log_entry(entry: dict) -> None:
            nonlocal has_header
            try:
                if not has_header:
                    append_entry(f, header)
                    has_header = True
                append_entry(f, entry)
            except OSError as exc:  # a full disk or a file size limit said only "[Errno 27] File too large"
                raise TournamentError(
                    f"{log}: cannot write ({exc.strerror}); the boards logged before are kept: make room, then "
                    "rerun with --resume"
                ) from None
            done.append(entry)

        pool = None
        finished_cleanly = False
        try:  # the bar is closed and the workers ended before the command's one line (a Ctrl-C at the start too)
            if cfg.backend == "ray":
                results = ray_results(tasks, init_args, max(cfg.workers, 1))
            elif cfg.workers <= 1:  # batches of _chunk_sizes; each board is logged the moment it completes
                init_worker(*init_args)

                def log_board(entry: dict) -> None:
                    log_entry(entry)
                    bar.update(1)

                try:
                    for task in tasks:
                        play_boards(task, on_board=log_board)
                finally:
                    close_agents()
                results = iter(())
            else:
                # no boards left (a --resume of a finished log): no worker to start
                pool = worker_pool(pool_size(cfg.workers, n_todo, per_task), init_args) if n_todo else None
                results = bounded(pool, tasks, 2 * cfg.workers) if pool is not None else iter(())
            for entries in results:
                for e in entries:
                    log_entry(e)
                bar.update(len(entries))
            if pool is not None:
                pool.close()
            finished_cleanly = True
        finally:
            bar.close()
            if pool is not None and not finished_cleanly:  # interrupted, or a worker died: end the others now
                pool.kill()
    done = sorted((e for e in done if e["board"] < cfg.boards), key=lambda e: e["board"])
    results_doc = summarize(done, cfg.agents, cfg.rules.num_players, cfg.seed)
    (out / "results.json").write_text(json.dumps(results_doc, indent=1))
    write_games_csv(out / "games.csv", done, cfg.agents)
    if cfg.chart:
        try:
            write_chart(out / "chart.png", results_doc)
        except ImportError:
            print("matplotlib not installed: no chart.png", file=sys.stderr)
    return results_doc
