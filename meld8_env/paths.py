"""Paths that a command's options name, checked before anything is read or written.

``Path("")`` is the current folder, so an empty option would silently mean ``.`` (a tournament once wrote its
results into the current folder for ``--out ""``), and a file standing where a folder must go failed at
``mkdir`` as a bare OSError naming neither the option nor what was wrong, often after the work was done. Each
check raises ValueError in one line: the option, the value, and ``what`` it should be.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def nonempty_path(value: str | Path, flag: str, what: str, error: type[ValueError] = ValueError) -> str:
    """``value`` as text; ``error`` (a ValueError, e.g. CheckpointError) when it is empty or only blanks."""
    if not str(value).strip():
        raise error(f"{flag} is an empty path: give {what}")
    return str(value)


def output_path(value: str | Path, flag: str, what: str, kind: str = "folder") -> Path:
    """The ``folder`` (made later, may exist) or new ``file`` (never overwritten) an output option names: not
    empty, not the other kind, a file not there yet, and no file on the way to it (nothing is created here)."""
    if kind not in ("folder", "file"):
        raise ValueError(f"kind must be 'folder' or 'file', got {kind!r}")
    path = Path(nonempty_path(value, flag, what))
    try:
        _check_output(path, value, flag, what, kind)
    except OSError as exc:  # a name too long for the system was a bare "[Errno 36]" from stat (red team, session 44)
        raise ValueError(f"{flag} names {value}, which this system cannot use as a path ({exc.strerror or exc}): "
                         f"give {what}") from None  # fmt: skip
    return path


def _check_output(path: Path, value: str | Path, flag: str, what: str, kind: str) -> None:
    """:func:`output_path`'s checks (an OSError from the system's stat is the caller's to word)."""
    if kind == "folder" and path.exists() and not path.is_dir():
        raise ValueError(f"{flag} names {value}, which exists and is not a folder: give {what}")
    if kind == "file" and path.is_dir():
        raise ValueError(f"{flag} names {value}, which is a folder: give {what}")
    if kind == "file" and (path.exists() or path.is_symlink()):
        raise ValueError(f"{flag} names {value}, which exists and is not overwritten: give {what}")
    for parent in (path, *path.parents) if kind == "folder" else path.parents:  # the nearest existing folder
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"{flag} names {value}, but {parent} is not a folder: give {what}")
            if not os.access(parent, os.W_OK | os.X_OK):  # a bare "[Errno 13]" at mkdir (red team, session 37)
                raise ValueError(f"{flag} names {value}, but {parent} is not writable: give {what} you can write to")
            break


def creatable_folder(path: str | Path, flag: str, what: str) -> Path:
    """``path`` (an :func:`output_path` folder), checked to be one this process can create: the folders it lacks are
    made and removed again at once (only those this call made), so nothing is left behind. ``out=/proc/x`` passed
    every check on the way and then failed at ``mkdir`` as a bare "[Errno 2] No such file or directory" naming no
    option (red team, session 44): the reason only the system knows is ValueError in one line now, naming ``flag``,
    the folder and the system's words. As ``mkdir(parents=True, exist_ok=True)`` (what the run does later), a folder
    that exists by the time it is made is fine (``new/../run``, or a sweep's runs checking a shared new parent at
    once), and a parent another process removed under it is made again (review, session 44); where such checks race,
    a new parent they share can stay, empty (it holds another check's folder when this one tries to remove it), which
    the runs make a moment later anyway. A symbolic link to
    nothing on the way (``out=dangling``) is refused naming it: mkdir's bare "[Errno 17] File exists" said neither."""
    path = Path(path)
    for folder in (path, *path.parents):
        if folder.is_symlink() and not folder.exists():
            raise ValueError(f"{flag} names {path}, but {folder} is a symbolic link to nothing (or a loop): give "
                             f"{what} you can write to")  # fmt: skip
        if folder.exists():
            break
    made: list[Path] = []
    try:
        for attempt in range(3):  # a shared new parent can be removed by another check between our mkdirs
            try:
                missing = []
                for folder in (path, *path.parents):
                    if folder.exists() or folder.is_symlink():
                        break
                    missing.append(folder)
                for folder in reversed(missing):
                    try:
                        folder.mkdir()
                    except FileExistsError:
                        if not folder.is_dir():
                            raise
                        continue  # made by another process, or "new/.." (mkdir's exist_ok): not ours to remove
                    made.append(folder)
                break
            except FileNotFoundError:
                if attempt == 2:
                    raise
    except OSError as exc:
        raise ValueError(f"{flag} names {path}, but the folder cannot be created ({exc.strerror or exc}): give {what} "
                         "you can write to") from None  # fmt: skip
    finally:
        for folder in reversed(made):  # empty: this call made them a moment ago (unless another run now uses one)
            with contextlib.suppress(OSError):
                folder.rmdir()
    return path
