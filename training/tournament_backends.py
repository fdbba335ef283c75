"""Where tournament games are played: in this process, in worker processes (a spawn pool), or on Ray actors.

Every backend runs the same task, :func:`play_boards` over ``(board ids, seeds, seatings)``, with the
agents loaded once per process by :func:`init_worker`; results come back as board entries of the log
(``training.tournament_log``). :func:`bounded` keeps at most a few tasks in flight on a pool of worker
processes (``training.worker_pool``), and :func:`ray_results` hands one task at a time to each idle actor, so
memory never grows with the number of boards.
"""

from __future__ import annotations

import os

import numpy as np

from meld8_env.rules import RuleConfig
from meld8_env.seat_process import BotOptions
from training.tournament_config import TournamentError
from training.worker_pool import WorkerDied, WorkerPool

_WORKER: dict = {}


def init_worker(
    specs: list[str], rules_dict: dict, seed: int, trust: bool = False, bots: BotOptions | None = None
) -> None:
    from agents.registry import load_agent

    rules = RuleConfig.from_dict(rules_dict)
    for agent in _WORKER.get("agents", ()):  # a worker set up again (one process, several runs)
        if hasattr(agent, "close"):
            agent.close()
    _WORKER["agents"] = [load_agent(s, rules, seed + i, trust, bots) for i, s in enumerate(specs)]
    _WORKER["rules"] = rules
    # a lineup of built-in C bots plays whole games in C (training.arena): alone in this process, on two threads
    _WORKER["threads"] = min(2, os.cpu_count() or 1)


def init_pool_worker(*args) -> None:
    """:func:`init_worker` for one of several worker processes sharing the machine's cores: torch (if an
    agent loaded it) gets one intra-op thread, because its default of one per core makes the workers fight
    over the cores (a `distilled` seat: 6 games/s with the default, 46-50 with one thread, same games)."""
    import multiprocessing
    import sys

    from meld8_env.parent_death import die_with_parent

    # killed, the tournament runs no cleanup: without this a worker played its task of boards on for minutes
    die_with_parent(parent=multiprocessing.parent_process().pid)
    init_worker(*args)
    _WORKER["threads"] = 1  # the other workers hold the other cores
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def play_boards(task: tuple[list[int], list[int], list[tuple[int, ...]]], on_board=None) -> list[dict]:
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

    play(_WORKER["agents"], all_seats, all_seeds, _WORKER["rules"], on_game=finished, threads=_WORKER.get("threads", 1))
    return out


def bounded(pool: WorkerPool, tasks, in_flight: int):
    """Results of ``play_boards`` over ``tasks`` from the pool's workers, in the order of the tasks, with at most
    ``in_flight`` handed out at a time (memory does not grow with the number of boards). A worker that dies without
    its result ends the tournament with a TournamentError; the boards logged so far are kept."""
    try:
        yield from pool.results(tasks, in_flight)
    except WorkerDied as exc:
        raise TournamentError(
            f"a worker process ended without its result ({exc}: killed, or out of memory?); the boards logged so far "
            "are kept: rerun with --resume"
        ) from None


def pool_size(workers: int, boards: int, per_task: int) -> int:
    """Worker processes for ``boards`` boards in tasks of ``per_task``: ``workers``, but no more than the tasks (at
    least one): ``--workers 1000`` on two boards started 1000 interpreters (red team, session 42)."""
    return max(1, min(workers, -(-boards // per_task)))


def worker_pool(workers: int, init_args: tuple) -> WorkerPool:
    """``workers`` processes that each load the agents once (:func:`init_pool_worker`), play :func:`play_boards`
    tasks and close their agents at the end (their seat-protocol bots get bye)."""
    return WorkerPool(workers, init_pool_worker, init_args, play_boards, close_agents)


RAY_MISSING = "--backend ray needs Ray: pip install 'meld8[ray]'"


def check_ray_installed() -> None:
    """TournamentError where Ray is not installed: asked before the output folder is made (a run without Ray drew its
    progress bars and left an empty log and a lock behind, a user, session 45)."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise TournamentError(RAY_MISSING)


def ray_results(tasks, init_args: tuple, workers: int):
    """Run the tasks on Ray actors (each loads the agents once); yield results as they finish."""
    try:
        import ray
    except ImportError:
        raise TournamentError(RAY_MISSING) from None
    started_here = not ray.is_initialized()
    if started_here:  # joins the cluster named by RAY_ADDRESS, else starts a local instance
        from training.ray_setup import quiet_loggers, quiet_ray

        quiet_ray("the tournament")
        ray.init(num_cpus=None if "RAY_ADDRESS" in os.environ else workers, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)  # fmt: skip
        quiet_loggers()

    @ray.remote
    class _Worker:
        def __init__(self, *args) -> None:
            init_worker(*args)
            _WORKER["threads"] = 1  # one actor per CPU Ray gives it

        def play(self, task):
            return play_boards(task)

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


def close_agents() -> None:
    """Close the agents :func:`init_worker` loaded in this process (bots' processes end with them)."""
    for agent in _WORKER.pop("agents", ()):
        if hasattr(agent, "close"):
            agent.close()
