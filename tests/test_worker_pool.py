"""training.worker_pool: a tournament's worker processes, each on a pipe of its own (red team, session 42: with a
shared result pipe a worker killed mid-write hung the parent, and so did a Ctrl-C)."""

from __future__ import annotations

import pytest
from process_kit import gone, pool_done, pool_double, pool_setup

from training.tournament_backends import pool_size
from training.worker_pool import WorkerDied, WorkerPool


def test_answers_come_in_the_order_of_the_tasks():
    pool = WorkerPool(3, pool_setup, (False,), pool_double, pool_done)
    try:
        tasks = [t for t in range(40) if t != 7]  # 7 raises (below)
        assert list(pool.results(tasks, in_flight=4)) == [2 * t for t in tasks]
        assert list(pool.results([], in_flight=4)) == []
    finally:
        pool.close()
    assert all(gone(p.pid) for p in pool.procs)


def test_a_workers_exception_is_raised_as_itself_and_its_set_up_failure_too():
    pool = WorkerPool(2, pool_setup, (False,), pool_double, pool_done)
    try:
        with pytest.raises(ValueError, match="seven is refused"):
            list(pool.results(range(10), in_flight=2))
    finally:
        pool.kill()
    broken = WorkerPool(1, pool_setup, (True,), pool_double, pool_done)
    try:
        with pytest.raises(ValueError, match="the set-up failed"):
            list(broken.results([1], in_flight=1))
    finally:
        broken.kill()


def test_a_worker_that_dies_without_its_answer_is_told_at_once_and_kill_ends_the_others():
    pool = WorkerPool(2, pool_setup, (False,), pool_double, pool_done)
    try:
        with pytest.raises(WorkerDied, match="exited with code 3"):
            list(pool.results([1, 2, -1, 4, 5], in_flight=2))
    finally:
        pool.kill()
    assert all(gone(p.pid) for p in pool.procs)


def test_a_pool_has_no_more_workers_than_tasks():
    """--workers 1000 on two boards started 1000 interpreters (red team, session 42)."""
    assert pool_size(1000, boards=2, per_task=8) == 1
    assert pool_size(2, boards=300, per_task=37) == 2
    assert pool_size(8, boards=17, per_task=8) == 3
    assert pool_size(4, boards=0, per_task=8) == 1


def test_a_worker_that_died_idle_is_told_as_a_death_not_a_closed_pipe():
    """The first task sent to a worker that had died idle raised BrokenPipeError, which the command line takes for
    a closed stdout (``meld8 replay | head``): the tournament ended with rc 0, no message and no results (review,
    session 42)."""
    pool = WorkerPool(2, pool_setup, (False,), pool_double, pool_done)
    try:
        pool.procs[1].kill()
        pool.procs[1].join()
        with pytest.raises(WorkerDied, match="killed by signal 9"):
            list(pool.results([1, 2, 3, 4], in_flight=4))
    finally:
        pool.kill()


def test_a_ctrl_c_while_the_workers_start_is_not_lost():
    """A SIGINT while the workers start (here: sent while their start-up arguments are pickled) interrupts the
    parent right after the start, and the workers started are ended; it used to be ignored there, and the run
    played on (review, session 42)."""
    import multiprocessing as mp

    from process_kit import SigintWhenSent

    before = set(mp.active_children())
    with pytest.raises(KeyboardInterrupt):
        WorkerPool(2, pool_setup, (SigintWhenSent(),), pool_double, pool_done)
    assert set(mp.active_children()) == before
