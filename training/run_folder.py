"""One run folder for both trainers (SB3 ``training.train_ppo`` and RLlib ``training.rllib_train``).

What a run folder holds and how it is written, in one place:

| file | written by | meaning |
|---|---|---|
| ``.lock`` | :class:`OutputLock` | flock held for the whole run (tournaments use it too) |
| ``run.json`` | :meth:`RunFolder.start` | ``{"backend": "sb3" or "rllib"}``: which trainer owns the folder |
| ``config.yaml`` | :meth:`RunFolder.start` | every option of the run (after every check passed) |
| ``eval.jsonl`` | :meth:`RunFolder.append` | one row per evaluation (``timesteps``, ``mean_placement``, ...) |
| ``metrics.jsonl``, ``opponents.jsonl`` | :meth:`RunFolder.append` | per-iteration / per-redraw rows |
| ``best.zip`` / ``best/`` | :func:`swap_in` | the best evaluated policy, replaced by renames (never delete + copy) |
| ``learning_curve.png`` | :func:`plot_learning_curve` | mean placement and score per evaluation |

The contract: a trainer checks every option and the folder (:meth:`RunFolder.check`) **before** it
writes anything; a folder that holds a run is only continued (``resume: true``) by the backend that
wrote it, never started over or mixed with another run. Ctrl-C ends in :class:`TrainingInterrupted`
(a ``KeyboardInterrupt`` whose text says what was saved and how to continue). The folder's files are
hostile input: they are read only when they are regular files, opened without blocking (:func:`read_regular`),
and a resume checks every row of ``eval.jsonl`` (:meth:`RunFolder.check_eval_log`) before it writes anything.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO

from meld8_env.config_io import is_int, short_repr
from meld8_env.safe_text import one_line

BACKENDS = ("sb3", "rllib")
RUN_FILE = "run.json"
#: files and folders whose presence means the folder holds a run (a fresh start there is refused)
RUN_MARKERS = ("run.json", "config.yaml", "eval.jsonl", "metrics.jsonl", "opponents.jsonl", "pretrain.json",
               "best.zip", "final.zip", "best", "checkpoint", "checkpoint.old", "tb")  # fmt: skip
RUN_GLOBS = ("ckpt_*.zip", "policy_it*")
#: what a tournament writes (``training.tournament.OUTPUTS``, a test holds them equal): a training run is refused in
#: such a folder, as a tournament is in a run's (it wrote its config.yaml and run.json beside the games: session 46)
TOURNAMENT_OUTPUTS = ("games.jsonl", "results.json", "games.csv", "chart.png")

FILE, FOLDER, SCRATCH = "file", "folder", "scratch"
"""What a fixed name of a run folder must be where it exists: a regular file, a folder, or a scratch folder (a real
folder, not a link: a run removes it with everything in it)."""
#: the names both trainers write in a run folder, each with its kind and role (:func:`check_kinds`; each trainer adds
#: its own). The ``.tmp`` names are :func:`write_atomic`'s scratch.
SHARED_KINDS: dict[str, tuple[str, str]] = {
    ".lock": (FILE, "the run's lock"),
    "run.json": (FILE, "the run's backend"),
    "config.yaml": (FILE, "the run's options"),
    "config.prev.yaml": (FILE, "the options of the session before"),
    "eval.jsonl": (FILE, "the evaluation log"),
    "opponents.jsonl": (FILE, "the opponent log"),
    "learning_curve.png": (FILE, "the learning curve"),
    "tb": (FOLDER, "the TensorBoard logs"),
    **{f"{name}.tmp": (FILE, f"the scratch copy of {name} being written")
       for name in ("run.json", "config.yaml", "config.prev.yaml", "eval.jsonl", "opponents.jsonl")},
}  # fmt: skip


def run_markers(path: Path) -> list[str]:
    """The names in folder ``path`` that show it holds a training run, of either backend (empty: none); tournaments
    read it too, to stay out of a run's folder."""
    if not path.is_dir():
        return []
    found = [m for m in RUN_MARKERS if (path / m).exists()]
    for pattern in RUN_GLOBS:
        found += sorted(p.name for p in path.glob(pattern))[:1]
    return found


class RunFolderError(ValueError):
    """A run folder that cannot be used as asked (it holds another run, it is in use, ...)."""


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during training: a checkpoint was saved; ``resume: true`` continues from it."""

    signum: int = signal.SIGINT  # the signal that stopped the run: the command exits with 128 + it (130, 143)


class OutputLock:
    """An exclusive lock on an output folder (``OUT/.lock``, flock) for a tournament or a training
    run: a second run that would append to the same logs is refused, naming the holder. Released
    when the process exits."""

    def __init__(self, out: Path, error: type[Exception] = RunFolderError) -> None:
        self.path = Path(out) / ".lock"
        self.error = error
        self.f = None

    def __enter__(self) -> OutputLock:
        import fcntl
        import socket

        # opened without blocking and checked on the open file: a FIFO or device named .lock failed in open()
        # with "File or stream is not seekable", naming no file (red team, session 35: the FIFO eval.jsonl)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o666)
        except OSError as exc:  # raw "[Errno 13] Permission denied" / "[Errno 21] Is a directory" (red team, s42)
            raise self.error(
                f"{self.path}: cannot open the folder's lock ({exc.strerror}): make it a writable file or choose "
                "another output folder (--out / out)"
            ) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise self.error(f"{self.path} is not a regular file (a FIFO, socket or device): move it out of "
                             f"{self.path.parent}")  # fmt: skip
        f = os.fdopen(fd, "r+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            f.close()
            raise self.error(
                f"{self.path.parent} is in use by {holder}; wait for it to finish or choose another output "
                "folder (--out / out)"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()} on {socket.gethostname()}")
        f.flush()
        self.f = f
        return self

    def __exit__(self, *exc: object) -> None:
        if self.f is not None:
            self.f.close()


class RunFolder:
    """The output folder of one training run of ``backend`` (``sb3`` or ``rllib``)."""

    def __init__(self, out: str | Path, backend: str) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self.path = Path(out)
        self.backend = backend

    def markers(self) -> list[str]:
        """The names in the folder that show it holds a run (empty: a fresh folder)."""
        return run_markers(self.path)

    def owner(self) -> str | None:
        """The backend whose run the folder holds (``run.json``; older folders: from their files)."""
        try:
            raw = read_regular(self.path / RUN_FILE)
            doc = None if raw is None else json.loads(raw)
            if raw is not None and doc is None:  # "null" is not a missing file (red team, session 32: overwritten)
                raise ValueError("null")
        except (OSError, ValueError, RecursionError):
            raise RunFolderError(f"{self.path / RUN_FILE} is not a run file meld8 wrote; restore it or choose "
                                 "another out") from None  # fmt: skip
        if doc is not None:
            if not isinstance(doc, dict) or doc.get("backend") not in BACKENDS:
                raise RunFolderError(f"{self.path / RUN_FILE} names no backend meld8 knows ({', '.join(BACKENDS)})")
            return doc["backend"]
        if any(self.path.glob("ckpt_*.zip")) or (self.path / "best.zip").exists():
            return "sb3"
        if (self.path / "checkpoint").exists() or any(self.path.glob("policy_it*")):
            return "rllib"
        return None

    def check(self, resume: bool) -> None:
        """Refuse, in one line and before anything is written, a fresh start over a run, or a resume of
        a run another backend wrote. A resume that finds no checkpoint is the trainer's to refuse."""
        found = self.markers()
        if not found:
            return
        owner = self.owner()
        if owner is not None and owner != self.backend:
            raise RunFolderError(
                f"{self.path} holds a run of the {owner} backend (meld8 train --backend {owner}); the {self.backend} "
                "trainer neither continues nor overwrites it: choose another out"
            )
        if not resume:
            raise RunFolderError(
                f"{self.path} already holds a run ({', '.join(found[:3])}): continue it with --set resume=true, or "
                "choose another out"
            )

    def start(self, config: dict[str, Any]) -> None:
        """Write ``run.json`` and ``config.yaml`` (call after every check passed). A resume whose options differ from
        the run's ``config.yaml`` says which, and keeps that file as ``config.prev.yaml`` (a resume without the first
        session's ``--set`` options took the config file's values unannounced, and rewrote the record of them)."""
        import yaml

        old = self.path / "config.yaml"
        before = self.run_config()  # read before anything is written (check_run_folder refused it already)
        self.path.mkdir(parents=True, exist_ok=True)
        changed = [f"{k} {short_repr(before[k], 30)} -> {short_repr(config[k], 30)}" for k in config
                   if k in before and _differs(k, before[k], config[k])]  # fmt: skip
        # a key that is no option is a difference too: the file rewritten without it would lose it (red team, s47)
        changed += [f"{short_repr(k, 30)} {short_repr(before[k], 30)} (no option) dropped" for k in before
                    if k not in config]  # fmt: skip
        if changed:
            shown = ", ".join(changed[:6])
            more = f" and {len(changed) - 6} more" if len(changed) > 6 else ""
            say(f"resume: options differ from the run's config.yaml: {shown}{more} (the run goes on with the new "
                f"values; the old file is kept as config.prev.yaml)")  # fmt: skip
            write_atomic(self.path / "config.prev.yaml", old.read_text())
        write_atomic(self.path / RUN_FILE, json.dumps({"backend": self.backend}) + "\n")
        write_atomic(old, yaml.safe_dump(config, sort_keys=False))

    def run_config(self) -> dict[str, Any]:
        """The options in the run's ``config.yaml`` ({} where there is none), read by the strict reader; a file it
        cannot read is refused, never taken for no config: a resume then overwrote it without a notice or a
        config.prev.yaml, and the run's record of its options was lost (red team, session 47)."""
        from meld8_env.config_io import read_yaml_mapping

        path = self.path / "config.yaml"
        if not os.path.lexists(path):
            return {}
        try:
            return read_yaml_mapping(path, "run config")
        except ValueError as exc:
            why = one_line(str(exc).removeprefix(f"{path}: "), 160)
            raise RunFolderError(f"{path} is not a config meld8 wrote ({why}): restore it, or train into another "
                                 "out") from None  # fmt: skip

    def append(self, name: str, row: dict[str, Any]) -> None:
        """One JSON line appended to ``name`` (``eval.jsonl``, ``metrics.jsonl``, ...), flushed."""
        with open(self.path / name, "a") as f:
            f.write(json.dumps(row) + "\n")
            f.flush()

    def rows(self, name: str) -> list[dict[str, Any]]:
        """The JSON object rows of ``name`` (see :meth:`numbered_rows`)."""
        return [row for _, row in self.numbered_rows(name)]

    def numbered_rows(self, name: str) -> list[tuple[int, dict[str, Any]]]:
        """(line number, row) of each JSON object row of ``name``. Only a last line without its newline (cut by a
        kill) is skipped; any other line that is not a JSON object is a RunFolderError naming the file and line (red
        team, session 32: a resume silently rewrote the file without such rows)."""
        path = self.path / name
        data = read_regular(path)
        if data is None:
            return []
        lines = data.split(b"\n")
        out = []
        for i, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep, an integer too long
                row = None
            if isinstance(row, dict):
                out.append((i + 1, row))
            elif i < len(lines) - 1:  # a whole line, newline and all: not a torn write
                raise RunFolderError(f"{path}: line {i + 1} is not a JSON object; fix or move the file")
        return out

    def check_eval_log(self, num_players: int) -> None:
        """Every row of ``eval.jsonl`` holds what the trainers and ``meld8 train`` read from it: ``timesteps`` an
        integer >= 0, ``mean_placement`` a number in 1..num_players, ``mean_score`` a finite number; otherwise a
        RunFolderError naming the file and line. Called before a resume writes anything (red team, session 35: a
        row without mean_score failed after training, in the curve; "x" failed in the last line printed; a
        placement of 0.5, impossible, stood as the best and blocked every later best.zip)."""
        path = self.path / "eval.jsonl"
        wants = {
            "timesteps": ("an integer >= 0", lambda v: is_int(v) and v >= 0),
            "mean_placement": (f"a number in 1..{num_players}", lambda v: finite_number(v) and 1 <= v <= num_players),
            "mean_score": ("a finite number", finite_number),
        }
        for line, row in self.numbered_rows("eval.jsonl"):
            for key, (want, ok) in wants.items():
                if key not in row:
                    raise RunFolderError(f"{path}: line {line} has no {key!r} ({want}); fix or move the file")
                if not ok(row[key]):
                    shown = one_line(str(row[key]), 40)
                    raise RunFolderError(f"{path}: line {line}: {key!r} is {shown}, not {want}; fix or move the file")

    def keep_rows(self, name: str, keep) -> None:
        """Rewrite ``name`` with the rows for which ``keep(row)`` holds (atomically, by a rename); ``keep`` may
        raise to refuse a row it cannot judge, before anything is written."""
        path = self.path / name
        if not path.exists():
            return
        text = "".join(json.dumps(r) + "\n" for r in self.rows(name) if keep(r))
        write_atomic(path, text)


class NotRegularFile(OSError):
    """What :func:`open_regular` names is there but no regular file; ``mode`` is its ``st_mode``."""

    def __init__(self, path: Path, mode: int) -> None:
        super().__init__(f"{path} is {kind_words(mode)}, not a regular file")
        self.mode = mode


def open_regular(path: Path) -> BinaryIO:
    """``path`` open for reading, opened without blocking and checked on the open file: a FIFO named eval.jsonl hung
    a resume (red team, session 35), one among distill's parts the read (session 47). NotRegularFile when it is no
    regular file; ``os.open``'s OSError (FileNotFoundError, ...) when it cannot be opened."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    f = os.fdopen(fd, "rb")
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        f.close()
        raise NotRegularFile(path, mode)
    return f


def read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` (None when it is not there); RunFolderError when it is there but no regular file."""
    try:
        f = open_regular(path)
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise RunFolderError(f"{path} is not a regular file but {kind_words(exc.mode)}: move it out of "
                             f"{path.parent}") from None  # fmt: skip
    except OSError as exc:
        raise RunFolderError(f"{path} cannot be read ({exc.strerror}); fix or move it") from None
    with f:
        return f.read()


def check_kinds(path: Path, kinds: dict[str, tuple[str, str]]) -> None:
    """Each name of ``kinds`` (name -> (kind, role)) that exists in folder ``path`` is of its kind (:data:`FILE`,
    :data:`FOLDER` or :data:`SCRATCH`); otherwise a RunFolderError naming it and what it should be. Called before
    anything is written: a regular file named ``_saving`` failed at the first checkpoint with a raw "[Errno 17] File
    exists" after config.yaml and eval.jsonl were rewritten (``rmtree(ignore_errors=True)`` quietly left it), a
    folder named ``_eval.zip`` with "[Errno 21] Is a directory", and an empty folder named ``best.zip`` was named
    the run's best evaluation (red team, session 47)."""
    for name, (want, role) in kinds.items():
        p = Path(path) / name
        try:
            st = os.lstat(p)
            if not stat.S_ISLNK(st.st_mode) or want == SCRATCH:  # a link is judged by what it points to
                mode = st.st_mode
            else:
                mode = os.stat(p).st_mode
        except FileNotFoundError:
            if os.path.lexists(p):
                raise RunFolderError(f"{p} is a link to nothing, where meld8 keeps {role}: remove it or choose "
                                     "another out") from None  # fmt: skip
            continue
        except OSError as exc:
            raise RunFolderError(f"{p} cannot be examined ({exc.strerror}); fix or move it") from None
        ok = stat.S_ISREG(mode) if want == FILE else stat.S_ISDIR(mode)
        if not ok:
            should = "a regular file" if want == FILE else "a folder"
            raise RunFolderError(f"{p} is not {should} but {kind_words(mode)}: meld8 keeps {role} there; move it out "
                                 f"of {p.parent} or choose another out")  # fmt: skip


def kind_words(mode: int) -> str:
    """What a file of ``mode`` (``st_mode``) is, in words: "a folder", "a FIFO", ..."""
    for test, words in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file"),
                        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return words
    return "a device"


def finite_number(value: object) -> bool:
    """A finite JSON number: not a bool (True is an int in Python), NaN or Infinity (json reads them), or an integer
    beyond the float range (it cannot be drawn or printed with a format of floats)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (a kill leaves old or new)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def swap_in(new: Path, final: Path) -> None:
    """Replace ``final`` (a file or a folder) by ``new`` with renames only: at every moment either
    ``final`` or ``final.old`` is complete (:func:`recover` puts ``final.old`` back after a kill)."""
    old = final.with_name(final.name + ".old")
    if new.is_file():
        os.replace(new, final)  # one atomic rename for a file
        return
    if old.exists():
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    if final.exists():
        os.replace(final, old)
    os.replace(new, final)
    if old.exists():
        shutil.rmtree(old) if old.is_dir() else old.unlink()


def recover(final: Path) -> None:
    """After a kill between the two renames of :func:`swap_in`: put ``final.old`` back."""
    old = final.with_name(final.name + ".old")
    if old.exists() and not final.exists():
        os.replace(old, final)


def plot_learning_curve(out: str | Path, steps: str = "learner steps") -> Path | None:
    """``learning_curve.png`` from ``eval.jsonl``: mean placement and score vs ``timesteps`` (named ``steps``)."""
    folder = RunFolder(out, "sb3")  # the backend does not matter for reading
    # only rows with numbers to draw: a row a resume did not check (the RLlib trainer's, a file edited since)
    # failed here after the run had trained (red team, session 35)
    keys = ("timesteps", "mean_placement", "mean_score")
    rows = [r for r in folder.rows("eval.jsonl") if all(finite_number(r.get(k)) for k in keys)]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(out)
    cfg = _readable_config(path / "config.yaml")
    names = cfg.get("eval_opponents")
    ok = isinstance(names, list) and names and all(isinstance(n, str) for n in names)
    bots = " + ".join(names if ok else ["evaluation bots"])
    xs = [r["timesteps"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(xs, [r["mean_placement"] for r in rows], marker="o")
    a.set_title(f"mean placement vs {bots} (lower is better)")
    a.set_xlabel(steps)
    b.plot(xs, [r["mean_score"] for r in rows], marker="o")
    b.axhline(30_000, color="grey", lw=0.8)
    b.set_title("mean final score")
    b.set_xlabel(steps)
    fig.tight_layout()
    target = path / "learning_curve.png"
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target


RESUME_SAME = ("resume", "progress")
"""Options that say how a session runs, not what the run is: a resume differs in them by nature (review, s45)."""


def _differs(key: str, old: Any, new: Any) -> bool:
    """Whether option ``key`` of a resumed run changed (``out`` as the folder it names: ``run/`` is ``run``)."""
    if key in RESUME_SAME:
        return False
    if key == "out" and isinstance(old, str) and isinstance(new, str):
        return Path(old).resolve() != Path(new).resolve()
    return old != new


def _readable_config(path: Path) -> dict[str, Any]:
    """A run's ``config.yaml`` as a mapping, or {} where there is none or it cannot be read: the strict reader, so an
    alias bomb or deep nesting in a hand-edited file cannot hang what only describes the run."""
    from meld8_env.config_io import read_yaml_mapping

    try:
        return read_yaml_mapping(path, "run config") if path.is_file() else {}
    except ValueError:
        return {}


def say(text: str) -> None:
    """A one-line status message of a trainer (stderr, so stdout stays the result)."""
    print(text, file=sys.stderr, flush=True)


def check_run_folder(
    folder: Any, resume: bool, saved: bool, checkpoints: str, locked: bool = False, kinds: dict | None = None
) -> None:
    """``RunFolder.check``, and a way forward for a folder whose run never saved a checkpoint (``saved`` false):
    such a folder was refused as a fresh start ("continue it with resume=true") and as a resume ("no checkpoint"),
    a dead end (red team, session 37). It is refused with the advice to move it away, whatever it holds: nothing in
    it can be continued, and what it holds (a config.yaml written or edited by hand, logs, an evaluated best) is the
    user's to keep or delete, never this check's (a first version started afresh over run.json and config.yaml, and
    overwrote an edited config: review, session 37). ``checkpoints`` names what a resume continues from;
    ``locked``: the caller holds the folder's lock (its own lock is not another run's). A folder that may be
    trained into must hold each fixed name as its kind (:func:`check_kinds`: :data:`SHARED_KINDS` and the trainer's
    ``kinds``) and, for a resume, a ``config.yaml`` meld8 can read (:meth:`RunFolder.run_config`)."""
    if held := [name for name in TOURNAMENT_OUTPUTS if (Path(folder.path) / name).exists()]:
        raise RunFolderError(f"{folder.path} holds a tournament ({', '.join(held[:3])}): choose another output folder "
                             "(--out / out) for the training run")  # fmt: skip
    found = folder.markers()
    if saved or not found:
        folder.check(resume)
        if resume and not saved:
            raise ValueError(f"resume: no checkpoint ({checkpoints}) in {folder.path}: no run has trained there; "
                             "start it without resume=true")  # fmt: skip
        check_kinds(folder.path, {**SHARED_KINDS, **(kinds or {})})
        if resume:
            folder.run_config()
        return
    folder.check(resume=True)  # a run of the other backend: refused in its words, whatever resume says
    holder = None if locked else lock_holder(folder.path)
    if holder is not None:  # a run that is starting, or training towards its first checkpoint: not to be moved
        raise RunFolderError(f"{folder.path} is in use by {holder}; wait for it to finish or choose another output "
                             "folder (--out / out)")  # fmt: skip
    shown = sorted(found, key=lambda m: m in ("run.json", "config.yaml"))  # what it logged first, then its start
    raise RunFolderError(f"{folder.path} holds a run that never saved a checkpoint ({checkpoints}), only "
                         f"{', '.join(shown[:3])}: nothing in it can be continued; move it away (keep its config.yaml "
                         "if you edited it) or choose another out")  # fmt: skip


def lock_holder(path: Any) -> str | None:
    """Who holds the lock of the output folder ``path`` (``training.run_folder.OutputLock``), or None; nothing is
    written (a lock that is not a regular file is left to ``OutputLock`` to refuse)."""
    import fcntl

    try:
        fd = os.open(Path(path) / ".lock", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # released by the close below
        except OSError:
            return one_line(os.read(fd, 200).decode(errors="replace"), 100) or "another process"
        return None
    finally:
        os.close(fd)
