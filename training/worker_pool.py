"""Worker processes that each play tasks sent down their own pipe and answer on it (a tournament's ``--workers``).

Contract: ``WorkerPool(n, initializer, initargs, target, finalizer)`` spawns ``n`` processes; each runs
``initializer(*initargs)`` once, then ``target(task)`` for every task it is sent, and ``finalizer()`` when it is
told to stop or its parent goes. :meth:`WorkerPool.results` yields ``target(task)`` for each task in the order of
the tasks, with at most ``in_flight`` tasks handed out and not yet yielded (memory does not grow with their
number); an exception a worker's ``target`` (or ``initializer``) raised is raised there, and a worker that dies
without its answer raises :class:`WorkerDied`. :meth:`WorkerPool.close` lets the workers finish and joins them;
:meth:`WorkerPool.kill` ends them at once.

Why not ``multiprocessing.Pool`` or ``concurrent.futures``: both carry every worker's results on one shared pipe
read by a thread of the parent. A worker killed while it wrote its result left half a message there, and that
thread waited for the rest for ever: a tournament whose worker was killed hung, a Ctrl-C hung ``Pool.terminate``,
and with the executor the interpreter's exit joined the stuck thread (red team, session 42). Here each worker has a
pipe of its own, the parent holds only its end, and no thread reads it: a dead worker is an end of file on its pipe,
seen by the parent's own loop at once.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import Connection, wait


class WorkerDied(RuntimeError):
    """A worker process ended without sending the answer to its task (killed, out of memory, a crash in C)."""


def _answer(conn: Connection, ok: bool, value: object) -> None:
    try:
        conn.send((ok, value))
    except (pickle.PicklingError, TypeError, AttributeError):  # an exception that does not pickle: say what it was
        conn.send((False, RuntimeError(f"{type(value).__name__}: {value}")))


def _serve(conn: Connection, initializer: Callable, initargs: tuple, target: Callable, finalizer: Callable) -> None:
    """A worker's life: set up, then answer each task until told to stop (None) or the parent's end closes."""
    # the parent ends its workers itself; a worker that took a terminal's Ctrl-C printed its own traceback. It was
    # started with SIGINT blocked (see WorkerPool): ignoring it first drops one that came during the start
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    failed: BaseException | None = None
    try:
        initializer(*initargs)
    except BaseException as exc:  # told to the parent with the first task's answer
        failed = exc
    try:
        while True:
            try:
                task = conn.recv()
            except (EOFError, OSError):
                return  # the parent is gone
            if task is None:
                return
            if failed is not None:
                _answer(conn, False, failed)
                continue
            try:
                result = target(task)
            except BaseException as exc:
                _answer(conn, False, exc)
                continue
            _answer(conn, True, result)
    finally:
        if failed is None:
            finalizer()


class WorkerPool:
    """``workers`` spawned processes (spawn, not fork: a parent that has loaded a torch policy must not be forked).

    They ignore SIGINT: a terminal's Ctrl-C reaches the whole process group, and the parent ends its workers itself
    (:meth:`kill`). The parent starts them with SIGINT blocked, which they inherit across the exec until they ignore
    it: a Ctrl-C during the start stays pending in the parent and interrupts it right after (it was ignored there
    and lost, and the run played on: review, session 42)."""

    def __init__(
        self, workers: int, initializer: Callable, initargs: tuple, target: Callable, finalizer: Callable
    ) -> None:
        ctx = mp.get_context("spawn")
        self.procs: list = []
        self.conns: list[Connection] = []
        main = threading.current_thread() is threading.main_thread()  # where Python runs its signal handlers
        try:
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if main else None
            try:
                for _ in range(workers):
                    here, there = ctx.Pipe()
                    proc = ctx.Process(target=_serve, args=(there, initializer, initargs, target, finalizer))
                    proc.start()
                    there.close()  # the worker's end lives in the worker only: its death is an end of file here
                    self.procs.append(proc)
                    self.conns.append(here)
            finally:
                if mask is not None:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a pending Ctrl-C is raised here
        except BaseException:
            self.kill()
            raise

    def results(self, tasks: Iterable, in_flight: int) -> Iterator:
        """``target(task)`` for each task, in the order of the tasks (see the module's contract)."""
        todo, end = iter(tasks), object()
        idle = list(range(len(self.procs)))[::-1]
        busy: dict[int, int] = {}  # worker -> the number of the task it plays
        done: dict[int, object] = {}  # task number -> its answer, until it is its turn
        sent = given = 0
        exhausted = False
        while True:
            while idle and not exhausted and sent - given < max(1, in_flight):
                task = next(todo, end)
                if task is end:
                    exhausted = True
                    break
                w = idle.pop()
                try:
                    self.conns[w].send(task)
                except OSError as exc:  # it died idle: BrokenPipeError, which the CLI takes for a closed stdout
                    raise WorkerDied(self._death(w)) from exc
                busy[w] = sent
                sent += 1
            while given in done:
                yield done.pop(given)
                given += 1
            if exhausted and given == sent:
                return
            if not busy:  # every answer is in hand and waits its turn: yield it above on the next pass
                continue
            for conn in wait([self.conns[w] for w in busy]):
                w = self.conns.index(conn)
                try:
                    ok, value = conn.recv()
                except (EOFError, OSError) as exc:
                    raise WorkerDied(self._death(w)) from exc
                if not ok:
                    raise value  # the worker's own exception, as the caller would have seen it in one process
                done[busy.pop(w)] = value
                idle.append(w)

    def _death(self, w: int) -> str:
        proc = self.procs[w]
        proc.join(timeout=5)
        code = proc.exitcode
        if code is None:
            return f"worker {proc.pid} closed its pipe"
        if code < 0:
            return f"worker {proc.pid} killed by signal {-code}"
        return f"worker {proc.pid} exited with code {code}"

    def close(self) -> None:
        """Tell every worker to stop (it runs its finalizer: seat-protocol bots get bye) and wait for them."""
        for conn in self.conns:
            try:
                conn.send(None)
            except OSError:  # already gone
                pass
        for proc in self.procs:
            proc.join()
        self._close_conns()

    def kill(self) -> None:
        """End every worker now (SIGKILL: its task is lost; what the caller logged is kept)."""
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        for proc in self.procs:
            proc.join()
        self._close_conns()

    def _close_conns(self) -> None:
        for conn in self.conns:
            conn.close()
        self.conns = []
