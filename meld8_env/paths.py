"""Paths that a command's options name, checked before anything is read or written.

``Path("")`` is the current folder, so an empty option would silently mean ``.`` (a tournament once wrote its
results into the current folder for ``--out ""``), and a file standing where a folder must go failed at
``mkdir`` as a bare OSError naming neither the option nor what was wrong, often after the work was done. Each
check raises ValueError in one line: the option, the value, and ``what`` it should be.
"""

from __future__ import annotations

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
    return path
