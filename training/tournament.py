"""Duplicate tournaments: who is stronger, by how much, with confidence.

Every board seed is played under every distinct seating of the agents (6 for three different
agents, 3 rotations when two seats hold copies of one agent), so seat and card luck cancel.
Finished boards are appended to ``OUT/games.jsonl`` as they complete (each game with its seed and
its actions, so ``meld8 view OUT/games.jsonl --game K`` re-creates it) (flushed and fsynced; with
worker processes or Ray, as each task of ``boards_per_task`` boards returns); a run
killed at any point continues with ``resume=True`` without losing or double-counting a game. At the
end: ``results.json`` (training/stats.py), ``games.csv`` (one row per game and seat), ``chart.png``
and a table in the terminal.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from meld8_env.engine.seeding import Stream
from meld8_env.rules import RuleConfig
from meld8_env.seat_process import FAULT_KINDS, PREFIX, BotOptions
from training.stats import format_p, summarize

SHAKY_BELOW = 30  # board seeds below which a claim rests on too few paired samples

LOG = "games.jsonl"


class TournamentError(ValueError):
    """A tournament that cannot run as asked (bad agents, a log from another run, ...)."""


@dataclasses.dataclass
class TournamentConfig:
    agents: list[str]
    boards: int = 100
    seed: int = 0
    workers: int = 1
    out: str = "results/tournament"
    resume: bool = False
    backend: str = "local"  # or "ray": the same tasks on a Ray cluster (RAY_ADDRESS) or a local Ray instance
    rules: RuleConfig = dataclasses.field(default_factory=RuleConfig)
    boards_per_task: int | None = None
    """boards per task with workers / Ray; None: boards / (4 x workers), within 8..128 - larger tasks
    batch more games per engine step (an external bot answers a whole batch per round trip; measured in
    bench/protocol_throughput.py), smaller ones return sooner"""
    progress: bool = True
    chart: bool = True
    trust_checkpoints: bool = False  # let SB3 unpickle foreign checkpoint zips (runs code stored in them)
    bots: BotOptions | None = None  # how cmd: agents run (default: BotOptions() with logs in OUT/bots)

    def bot_options(self) -> BotOptions:
        opts = self.bots or BotOptions()
        if opts.log_dir is None:
            opts = dataclasses.replace(opts, log_dir=str(Path(self.out) / "bots"))
        return opts

    def has_bots(self) -> bool:
        return any(a.startswith(PREFIX) for a in self.agents)

    def header(self) -> dict:
        head = {"type": "header", "agents": self.agents, "seed": self.seed, "rules_hash": self.rules.rules_hash}
        if self.has_bots():  # the fallback plays faulted seats: a resumed run must use the same one
            head["fallback"] = self.bot_options().fallback
        return head

    def log_header(self) -> dict:
        """The log's first line: :meth:`header` (what a resumed run must match) plus the rules in full,
        so any game of the log can be re-created (``meld8 view games.jsonl --game K``)."""
        return {**self.header(), "rules": self.rules.to_dict()}


def seatings(agents: Sequence[str]) -> list[tuple[int, ...]]:
    """Distinct seatings as index tuples into ``agents`` (copies of one spec are interchangeable)."""
    canon = [agents.index(a) for a in agents]
    return sorted(set(itertools.permutations(canon)))


def board_seed(seed: int, board: int) -> int:
    return Stream(seed, board + 1).next() >> 2


# -- the log --------------------------------------------------------------------------------------
GAME_KEYS = ("seed", "seats", "final_scores", "placements", "hands", "drawn_hands", "wins", "tsumo", "deal_ins",
             "calls", "win_han")  # fmt: skip
PER_SEAT = ("seats", "final_scores", "placements", "wins", "tsumo", "deal_ins", "calls", "win_han")


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _actions_ok(text: object) -> bool:
    import base64
    import binascii

    if not isinstance(text, str):
        return False
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return max(raw, default=0) < 64


def board_entry_error(obj: object, cfg: TournamentConfig, n_seatings: int) -> str | None:
    """Why a logged line is not a board entry of this tournament, or None."""
    if not isinstance(obj, dict) or obj.get("type") != "board":
        return "not a board entry"
    board, games = obj.get("board"), obj.get("games")
    if not _is_int(board) or board < 0:
        return f"board id {board!r} is not an integer >= 0"
    if obj.get("seed") != board_seed(cfg.seed, board):
        return f"board {board} has seed {obj.get('seed')!r}, this tournament's is {board_seed(cfg.seed, board)}"
    if not isinstance(games, list) or len(games) != n_seatings:
        return f"board {board} should hold {n_seatings} games (one per seating)"
    P = cfg.rules.num_players
    for g in games:
        if not isinstance(g, dict) or any(k not in g for k in GAME_KEYS):
            return f"board {board}: a game record lacks fields"
        if any(not isinstance(g[k], list) or len(g[k]) != P or not all(map(_is_int, g[k])) for k in PER_SEAT):
            return f"board {board}: a game record has malformed per-seat fields"
        if not all(0 <= a < len(cfg.agents) for a in g["seats"]) or sorted(g["placements"]) != list(range(1, P + 1)):
            return f"board {board}: a game record has impossible seats or placements"
        if "actions" in g and not _actions_ok(g["actions"]):
            return f"board {board}: a game record has malformed actions (base64 of action ids 0..63)"
        faults = g.get("faults", [])
        if not isinstance(faults, list) or not all(
            isinstance(f, dict) and _is_int(f.get("seat")) and 0 <= f["seat"] < P and f.get("kind") in FAULT_KINDS
            for f in faults
        ):
            return f"board {board}: a game record has malformed faults"
    return None


def read_log(path: Path, cfg: TournamentConfig) -> tuple[list[dict], int, bool]:
    """(logged boards, byte length of the valid part, whether that part holds the header).

    A torn last line (a crash during a write: no newline, or not JSON) is reported and dropped, and so
    is a torn header. Anything else that is not this tournament's header followed by distinct board
    entries - a log of another run, a corrupt or foreign line, a board logged twice - is refused with a
    TournamentError naming the line: resuming never double-counts and never guesses."""
    raw = path.read_bytes()
    header, n_seatings = cfg.header(), len(seatings(cfg.agents))
    lines = raw.split(b"\n")
    entries: list[dict] = []
    first_line: dict[int, int] = {}
    good_end = pos = 0
    has_header = False
    for i, line in enumerate(lines):
        end = pos + len(line) + 1
        last = i == len(lines) - 1  # the text after the final newline (empty when the file ends cleanly)
        if last and not line:
            break
        try:
            obj = json.loads(line) if not last else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            obj = None
        if obj is None and (last or all(not rest for rest in lines[i + 1 :])):
            print(f"{path}: line {i + 1} is incomplete (interrupted write); dropping it", file=sys.stderr)
            break
        where = f"{path}: line {i + 1}"
        if obj is None:
            raise TournamentError(f"{where} is not JSON; refusing to resume (fix or move the file)")
        if i == 0:
            if not isinstance(obj, dict) or obj.get("type") != "header":
                raise TournamentError(f"{where} is not a tournament header; refusing to resume")
            if {k: obj.get(k) for k in header} != header:
                raise TournamentError(
                    f"{where}: the log belongs to another tournament ({obj}); use another --out or the same settings"
                )
            has_header = True
        else:
            err = board_entry_error(obj, cfg, n_seatings)
            if err:
                raise TournamentError(f"{where}: {err}; refusing to resume (fix or move the file)")
            board = obj["board"]
            if board in first_line:
                raise TournamentError(
                    f"{where} repeats board {board} (first logged on line {first_line[board]}); "
                    "refusing to count it twice"
                )
            first_line[board] = i + 1
            entries.append(obj)
        pos = good_end = end
    return entries, good_end, has_header


class OutputLock:
    """An exclusive lock on an output folder (``OUT/.lock``, flock) for a tournament or an RLlib
    training run: a second run that would append to the same logs is refused, naming the holder.
    Released when the process exits."""

    def __init__(self, out: Path) -> None:
        self.path = out / ".lock"
        self.f = None

    def __enter__(self) -> OutputLock:
        import fcntl
        import socket

        f = open(self.path, "a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            f.close()
            raise TournamentError(
                f"{self.path.parent} is in use by {holder}; wait for it to finish or choose another output "
                "folder (--out / out)"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()} on {socket.gethostname()}")
        f.flush()
        self.f = f
        return self

    def __exit__(self, *exc) -> None:
        if self.f is not None:
            self.f.close()


def _append(f, obj: dict) -> None:
    f.write(json.dumps(obj, separators=(",", ":")) + "\n")
    f.flush()
    os.fsync(f.fileno())


# -- running --------------------------------------------------------------------------------------
_WORKER: dict = {}


def _init_worker(
    specs: list[str], rules_dict: dict, seed: int, trust: bool = False, bots: BotOptions | None = None
) -> None:
    from agents.registry import load_agent

    rules = RuleConfig.from_dict(rules_dict)
    for agent in _WORKER.get("agents", ()):  # a worker set up again (one process, several runs)
        if hasattr(agent, "close"):
            agent.close()
    _WORKER["agents"] = [load_agent(s, rules, seed + i, trust, bots) for i, s in enumerate(specs)]
    _WORKER["rules"] = rules


def _play_boards(task: tuple[list[int], list[int], list[tuple[int, ...]]], on_board=None) -> list[dict]:
    """Play every seating of each board in one batch; ``on_board(entry)`` fires as each board completes."""
    from training.arena import play

    board_ids, seeds, seats = task
    n_seat = len(seats)
    all_seats = np.array([s for _ in board_ids for s in seats])
    all_seeds = [sd for sd in seeds for _ in range(n_seat)]
    games: dict[int, dict[int, dict]] = {k: {} for k in range(len(board_ids))}
    out = []

    def finished(index: int, record) -> None:
        k = index // n_seat
        games[k][index % n_seat] = record.to_json()
        if len(games[k]) == n_seat:  # every seating of this board is done
            entry = {
                "type": "board",
                "board": board_ids[k],
                "seed": seeds[k],
                "games": [games[k][i] for i in range(n_seat)],
            }
            out.append(entry)
            if on_board is not None:
                on_board(entry)

    play(_WORKER["agents"], all_seats, all_seeds, _WORKER["rules"], on_game=finished)
    return out


def run(cfg: TournamentConfig) -> dict:
    """Play (or resume) the tournament and write its outputs; returns results.json's content."""
    from agents.registry import load_agent

    if cfg.boards < 1:
        raise TournamentError(f"boards must be >= 1, got {cfg.boards}")
    if cfg.backend not in ("local", "ray"):
        raise TournamentError(f"backend must be 'local' or 'ray', got {cfg.backend!r}")
    if not 2 <= len(cfg.agents) <= 3 or len(cfg.agents) != cfg.rules.num_players:
        raise TournamentError(f"give one agent per seat: {cfg.rules.num_players} agents, got {len(cfg.agents)}")
    for spec in dict.fromkeys(cfg.agents):  # fail fast with a clear error
        agent = load_agent(spec, cfg.rules, trust=cfg.trust_checkpoints, bots=cfg.bot_options())
        if hasattr(agent, "close"):
            agent.close()
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    with OutputLock(out):
        return _run_locked(cfg, out)


#: boards scheduled at a time in one process: memory is bounded by this, not by the number of boards
LOCAL_CHUNK = 512


def _tasks(cfg: TournamentConfig, finished: set[int], per_task: int):
    """(board ids, seeds, seatings) tasks over the boards still to play, made lazily."""
    seats = seatings(cfg.agents)
    chunk: list[int] = []
    for d in range(cfg.boards):
        if d in finished:
            continue
        chunk.append(d)
        if len(chunk) == per_task:
            yield chunk, [board_seed(cfg.seed, x) for x in chunk], seats
            chunk = []
    if chunk:
        yield chunk, [board_seed(cfg.seed, x) for x in chunk], seats


def _run_locked(cfg: TournamentConfig, out: Path) -> dict:
    log = out / LOG
    header = cfg.log_header()
    done: list[dict] = []
    has_header = False
    if log.exists() and log.stat().st_size:
        if not cfg.resume:
            raise TournamentError(f"{log} exists: add --resume to continue it, or choose another --out")
        done, valid, has_header = read_log(log, cfg)
        with open(log, "r+b") as f:
            f.truncate(valid)
    finished = {e["board"] for e in done}
    n_todo = cfg.boards - sum(1 for d in finished if d < cfg.boards)
    if cfg.workers <= 1 and cfg.backend == "local":
        per_task = LOCAL_CHUNK
    else:
        per_task = cfg.boards_per_task or min(128, max(8, cfg.boards // (4 * max(cfg.workers, 1))))
    tasks = _tasks(cfg, finished, per_task)
    init_args = (cfg.agents, cfg.rules.to_dict(), cfg.seed, cfg.trust_checkpoints, cfg.bot_options())
    bar = _progress(n_todo, cfg.progress)
    with open(log, "a") as f:
        if not has_header:
            _append(f, header)
        pool = None
        if cfg.backend == "ray":
            results = _ray_results(tasks, init_args, max(cfg.workers, 1))
        elif cfg.workers <= 1:  # one batch of every game; each board is logged the moment it completes
            _init_worker(*init_args)

            def log_board(entry: dict) -> None:
                _append(f, entry)
                done.append(entry)
                bar.update(1)

            try:
                for task in tasks:
                    _play_boards(task, on_board=log_board)
            finally:
                for agent in _WORKER.pop("agents", ()):
                    if hasattr(agent, "close"):
                        agent.close()
            results = iter(())
        else:
            import multiprocessing as mp

            # spawn, not fork: a parent that has loaded a torch policy must not be forked (deadlocks)
            pool = mp.get_context("spawn").Pool(cfg.workers, initializer=_init_worker, initargs=init_args)
            results = _bounded(pool, tasks, 2 * cfg.workers)
        try:
            for entries in results:
                for e in entries:
                    _append(f, e)
                    done.append(e)
                bar.update(len(entries))
            if pool is not None:  # workers that finish leave by themselves: their bots get bye (agents.external)
                pool.close()
                pool.join()
        finally:
            bar.close()
            if pool is not None:
                pool.terminate()
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


def _bounded(pool, tasks, in_flight: int):
    """Results of ``_play_boards`` over ``tasks`` with at most ``in_flight`` tasks submitted at a time
    (Pool.imap would read every task up front: memory would grow with the number of boards)."""
    from collections import deque

    pending: deque = deque()
    for task in tasks:
        pending.append(pool.apply_async(_play_boards, (task,)))
        if len(pending) >= in_flight:
            yield pending.popleft().get()
    while pending:
        yield pending.popleft().get()


def _ray_results(tasks, init_args: tuple, workers: int):
    """Run the tasks on Ray actors (each loads the agents once); yield results as they finish."""
    try:
        import ray
    except ImportError:
        raise TournamentError("--backend ray needs Ray: pip install 'meld8[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:  # joins the cluster named by RAY_ADDRESS, else starts a local instance
        ray.init(num_cpus=None if "RAY_ADDRESS" in os.environ else workers, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)  # fmt: skip

    @ray.remote
    class _Worker:
        def __init__(self, *args) -> None:
            _init_worker(*args)

        def play(self, task):
            return _play_boards(task)

    actors = [_Worker.remote(*init_args) for _ in range(workers)]
    queue = iter(tasks)  # read lazily: one task per idle actor
    pending = {}
    for actor in actors:
        task = next(queue, None)
        if task is not None:
            pending[actor.play.remote(task)] = actor
    try:
        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            actor = pending.pop(ref)
            task = next(queue, None)
            if task is not None:
                pending[actor.play.remote(task)] = actor
            yield ray.get(ref)
    finally:
        for actor in actors:
            ray.kill(actor)
        if started_here:
            ray.shutdown()


def _progress(total: int, enabled: bool):
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="board", disable=not enabled, dynamic_ncols=True)
    except ImportError:  # pragma: no cover

        class _Null:
            def update(self, n: int) -> None: ...

            def close(self) -> None: ...

        return _Null()


# -- outputs --------------------------------------------------------------------------------------
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
    return "\n".join(lines)
