"""Distillation data on disk: part files (written whole), and checked loading / merging of parts.

A *part* is one ``.npz`` (``part_<seed>_<first>.npz``) holding the decisions of games ``first .. first + games
- 1`` of one generate seed (arrays of ``training.distill.generate``: ``obs`` (N, W) uint8, ``masks`` (N, 64)
bool, ``actions`` (N,) int, ``values`` (N, 64) float32, ``game`` (N,) int, ``returns`` (N,) float32) plus the
scalars ``spec`` (the teacher), ``seed``, ``first``, ``games``, ``gamma`` (the returns' discount) and ``driver``
(the agent that played the seat while the teacher labelled it; ``""`` or absent: the teacher itself). Parts
written before the returns were recorded lack ``returns`` and ``gamma``: they load with NaN returns and
``gamma`` None (value training then refuses them, ``training.distill.train``). :func:`save_part` writes one
whole via a temporary file (a killed run leaves no half part); ``training.distill.generate_parts`` writes a
folder of them and resumes by skipping those already there. :func:`load_data` reads files and/or folders of
parts, checks every array (the files are input from outside: hostile until checked) and concatenates them
ordered by (seed, game); mixing teachers or holding one game twice is refused. The result adds ``seed`` (N,)
so held-out splits can be made by game.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from meld8_env.actions import NUM_ACTIONS, PASS, RON, TSUMO
from training.run_folder import NotRegularFile, kind_words, open_regular

ARRAYS = ("obs", "masks", "actions", "values", "game", "returns")
SCALARS = ("spec", "seed", "first", "games")
OPTIONAL = ("returns", "gamma", "driver")  # absent from parts made before they were recorded
VALUE_BOUND = 1e6
"""Largest magnitude of a recorded value or return (they are placements and points / 10,000: a few units): larger
finite ones overflow a softmax of values / temperature into NaN logits."""
MAX_SPEC = 8192  # a spec holds paths (iterate's prior=ppo:OUT/roundN/net.zip): PATH_MAX-sized room


class DistillDataError(ValueError):
    """A data file that is not a well-formed distillation part (one line naming the file and the fault)."""


def part_path(folder: Path, seed: int, first: int) -> Path:
    return Path(folder) / f"part_{seed}_{first:08d}.npz"


def save_part(
    path: Path,
    data: dict[str, np.ndarray],
    spec: str,
    seed: int,
    first: int,
    games: int,
    gamma: float,
    driver: str = "",
) -> None:
    """Write one part atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(
        tmp,
        **{k: data[k] for k in ARRAYS},
        spec=np.array(spec),
        seed=np.array(seed, np.int64),
        first=np.array(first, np.int64),
        games=np.array(games, np.int64),
        gamma=np.array(gamma, np.float64),
        driver=np.array(driver),
    )
    tmp.replace(path)


def read_part(path: Path) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """(arrays, scalars) of one part, every field checked; DistillDataError names the first fault."""
    path = Path(path)
    try:  # a FIFO hung np.load forever (red team, session 47)
        f = open_regular(path)
    except NotRegularFile as exc:
        raise DistillDataError(f"{path} {_not_regular(exc.mode)}: give part files") from None
    except OSError as exc:
        raise DistillDataError(f"{path}: cannot open ({exc.strerror}): give a part file of distill generate") from None
    try:
        with f, np.load(f, allow_pickle=False) as z:
            missing = [k for k in ARRAYS + SCALARS if k not in z.files and k not in OPTIONAL]
            if missing:
                raise DistillDataError(f"{path}: not a distillation part, missing {', '.join(missing)}")
            if ("returns" in z.files) != ("gamma" in z.files):
                raise DistillDataError(f"{path}: returns and gamma come together (one of them is missing)")
            arrays = {k: z[k] for k in ARRAYS if k in z.files}
            raw = {k: z[k] for k in SCALARS + ("gamma", "driver") if k in z.files}
    except DistillDataError:
        raise
    except Exception as exc:  # a truncated or foreign file: one line, not a traceback
        # numpy calls any file that is no .npz "pickled data" and advises allow_pickle=, which meld8 never uses on
        # a data file (a JSON file given as --data read so: helper walkthrough, session 46)
        why = "not an .npz archive" if "pickle" in str(exc) else str(exc)
        raise DistillDataError(f"{path}: cannot read as .npz ({why}): give a part file of distill generate") from None
    spec = raw["spec"]
    if spec.dtype.kind != "U" or spec.ndim or not 0 < len(str(spec)) <= MAX_SPEC:
        raise DistillDataError(f"{path}: spec must be one string of 1..{MAX_SPEC} characters (the teacher's spec)")
    if any(raw[k].dtype.kind not in "iu" or raw[k].ndim for k in SCALARS[1:]):
        raise DistillDataError(f"{path}: seed, first and games must be integers")
    driver = raw.get("driver", np.array(""))
    if driver.dtype.kind != "U" or driver.ndim or len(str(driver)) > MAX_SPEC:
        raise DistillDataError(f"{path}: driver must be one string of 0..{MAX_SPEC} characters (an agent spec)")
    meta = {"spec": str(spec), **{k: int(raw[k]) for k in SCALARS[1:]}, "gamma": None, "driver": str(driver)}
    # game ids and seeds are held as int64 (load_data's ``seed`` column, the held-out split's keys)
    if not (0 <= meta["seed"] < 2**63 and meta["first"] >= 0 and meta["games"] >= 0):
        raise DistillDataError(f"{path}: seed must be 0..2**63 - 1 and first/games >= 0, got {_scalars(meta)}")
    if meta["first"] + meta["games"] >= 2**63:
        raise DistillDataError(f"{path}: first + games must stay below 2**63, got {_scalars(meta)}")
    obs, masks, acts, vals, game = (arrays[k] for k in ARRAYS[:5])
    n = len(acts)
    if "gamma" in raw:
        gamma, rets = raw["gamma"], arrays["returns"]
        if gamma.dtype.kind != "f" or gamma.ndim or not 0 < float(gamma) <= 1:
            raise DistillDataError(f"{path}: gamma must be a float in (0, 1], got {gamma!r}")
        if rets.shape != (n,) or rets.dtype.kind != "f":
            raise DistillDataError(f"{path}: returns must be ({n},) floats, got {rets.shape} {rets.dtype}")
        with np.errstate(over="ignore", invalid="ignore"):  # checked as trained on: float64 1e300 became inf
            rets = rets.astype(np.float32)
        if not (np.abs(rets) <= VALUE_BOUND).all():
            bad = int((~(np.abs(rets) <= VALUE_BOUND)).sum())
            raise DistillDataError(f"{path}: returns must be finite and within +-{VALUE_BOUND:g}, {bad} are not")
        meta["gamma"] = float(gamma)
        arrays["returns"] = rets
    else:
        arrays["returns"] = np.full(n, np.nan, np.float32)
    if obs.ndim != 2 or obs.dtype != np.uint8 or len(obs) != n:
        raise DistillDataError(f"{path}: obs must be ({n}, W) uint8, got {obs.shape} {obs.dtype}")
    if masks.shape != (n, NUM_ACTIONS) or masks.dtype != np.bool_:
        raise DistillDataError(f"{path}: masks must be ({n}, {NUM_ACTIONS}) bool, got {masks.shape} {masks.dtype}")
    if vals.shape != (n, NUM_ACTIONS) or vals.dtype.kind != "f":
        raise DistillDataError(f"{path}: values must be ({n}, {NUM_ACTIONS}) float, got {vals.shape} {vals.dtype}")
    if acts.ndim != 1 or acts.dtype.kind not in "iu" or game.shape != (n,) or game.dtype.kind not in "iu":
        raise DistillDataError(f"{path}: actions and game must be ({n},) integers")
    if n and not ((acts >= 0) & (acts < NUM_ACTIONS)).all():
        raise DistillDataError(f"{path}: actions must be 0..{NUM_ACTIONS - 1}")
    if n and not masks[np.arange(n), acts].all():
        bad = int(np.flatnonzero(~masks[np.arange(n), acts])[0])
        raise DistillDataError(f"{path}: decision {bad} chose action {int(acts[bad])}, illegal under its mask")
    lo, hi = meta["first"], meta["first"] + meta["games"]
    if n and not ((game >= lo) & (game < hi)).all():
        raise DistillDataError(f"{path}: game ids must lie in {lo}..{hi - 1} (its first/games)")
    with np.errstate(over="ignore", invalid="ignore"):  # checked as trained on (float64 1e300: inf, NaN logits)
        vals = vals.astype(np.float32)
    if (np.abs(vals) > VALUE_BOUND).any():
        raise DistillDataError(f"{path}: values must be NaN or finite within +-{VALUE_BOUND:g}")
    if n:
        _check_masks(path, masks, vals)
    arrays["actions"] = acts.astype(np.int64)
    arrays["game"] = game.astype(np.int64)
    arrays["values"] = vals
    return arrays, meta


def _scalars(meta: dict[str, object]) -> str:
    return ", ".join(f"{k}={meta[k]}" for k in SCALARS[1:])


def _check_masks(path: Path, masks: np.ndarray, vals: np.ndarray) -> None:
    """Each mask is one decision's (R11, R22, R29): discards and perhaps Tsumo, or claims (Ron, Pon, Chii)
    with pass; a value (the search's mean leaf value of a candidate) only on a legal action, since the soft
    targets put weight on every action with a value."""
    claims = masks[:, RON:].any(axis=1)  # (an empty mask is refused before: its decision's action is illegal)
    mixed = claims & masks[:, :RON].any(axis=1)
    odd = np.flatnonzero(mixed | (claims & ~masks[:, PASS]))
    if odd.size:
        k = int(odd[0])
        raise DistillDataError(
            f"{path}: decision {k}'s mask allows actions {np.flatnonzero(masks[k]).tolist()}: a mask is one "
            f"decision's, discards (0..{TSUMO - 1}) and Tsumo ({TSUMO}), or claims ({RON}..{PASS - 1}) with pass "
            f"({PASS})"
        )
    off = ~np.isnan(vals) & ~masks
    if off.any():
        k, a = (int(i) for i in np.argwhere(off)[0])
        raise DistillDataError(f"{path}: decision {k} has a value for action {a}, illegal under its mask")


def files_of(inputs: Iterable[str | Path]) -> list[Path]:
    """Every part named: a folder stands for its ``part_*.npz`` files. Each must be a regular file, checked here
    without opening it: a FIFO among a folder's parts hung the read, and one given by name was called "no such file
    or folder" (red team, session 47)."""
    out: list[Path] = []
    for item in map(Path, inputs):
        if item.is_dir():
            found = sorted(item.glob("part_*.npz"))
            if not found:
                raise DistillDataError(f"{item}: a folder with no part_*.npz files")
            for part in found:
                mode = _mode(part)
                if mode is None or not stat.S_ISREG(mode):
                    raise DistillDataError(f"{part} {_not_regular(mode)}: give part files")
            out += found
        elif item.is_file():
            out.append(item)
        elif (mode := _mode(item)) is not None:
            raise DistillDataError(f"{item} {_not_regular(mode)}: give part files or folders of them")
        else:
            raise DistillDataError(f"{item}: no such file or folder (give part files or folders of them)")
    return out


def _mode(path: Path) -> int | None:
    """The mode of what ``path`` names (a link: of what it points to); None where nothing is there."""
    try:
        return os.stat(path).st_mode
    except OSError:
        return None


def _not_regular(mode: int | None) -> str:
    """Why a file of ``mode`` is no part file, in words."""
    if mode is not None and stat.S_ISDIR(mode):
        return "is a folder, not a part file (a folder given in --data stands for its part_*.npz files)"
    if mode is None:
        return "is a link to nothing, not a part file"
    return f"is not a regular file but {kind_words(mode)}"


def load_data(inputs: Iterable[str | Path]) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """Checked, merged data of every part named (module docstring) and a summary: the teacher ``spec``,
    ``seeds`` {seed: games}, ``decisions``, ``files``, the returns' discount ``gamma`` (None when no part has
    returns), ``without_returns`` (the parts made before the returns were recorded) and ``drivers`` {seed: driver}
    for the seeds whose seat another agent played (DAgger's data; parts of one seed by different drivers are
    refused)."""
    files = files_of(inputs)
    if not files:
        raise DistillDataError("no data files given")
    parts = [(*read_part(f), f) for f in files]
    specs = sorted({m["spec"] for _, m, _ in parts})
    if len(specs) > 1:
        raise DistillDataError(f"parts from different teachers: {', '.join(specs)}; merge one teacher at a time")
    widths = sorted({a["obs"].shape[1] for a, _, _ in parts})
    if len(widths) > 1:
        raise DistillDataError(f"parts with different observation widths {widths}")
    gammas = sorted({m["gamma"] for _, m, _ in parts if m["gamma"] is not None})
    if len(gammas) > 1:
        raise DistillDataError(f"parts whose returns have different discounts {gammas}; merge one gamma at a time")
    parts.sort(key=lambda p: (p[1]["seed"], p[1]["first"]))
    seen: dict[int, list[tuple[int, int]]] = {}
    for _, m, f in parts:
        for lo, hi in seen.get(m["seed"], []):
            if lo < m["first"] + m["games"] and m["first"] < hi:
                raise DistillDataError(f"{f}: games of seed {m['seed']} overlap another part (each game once)")
        seen.setdefault(m["seed"], []).append((m["first"], m["first"] + m["games"]))
    data = {k: np.concatenate([a[k] for a, _, _ in parts]) for k in ARRAYS}
    data["seed"] = np.concatenate([np.full(len(a["actions"]), m["seed"], np.int64) for a, m, _ in parts])
    seeds: dict[int, int] = {}
    for _, m, _ in parts:
        seeds[m["seed"]] = seeds.get(m["seed"], 0) + m["games"]
    no_returns = [str(f) for _, m, f in parts if m["gamma"] is None]
    by_seed: dict[int, set[str]] = {}
    for _, m, _ in parts:
        by_seed.setdefault(m["seed"], set()).add(m["driver"])
    mixed = sorted(k for k, v in by_seed.items() if len(v) > 1)
    if mixed:  # the summary names one driver per seed, and a checkpoint's metadata repeats it
        got = ", ".join(repr(d) for d in sorted(by_seed[mixed[0]]))
        raise DistillDataError(f"parts of seed {mixed[0]} were played by different drivers ({got}); a seed's games "
                               "come from one generate command")  # fmt: skip
    drivers = {k: v.pop() for k, v in by_seed.items() if v != {""}}
    info = {
        "spec": specs[0],
        "seeds": seeds,
        "decisions": int(len(data["actions"])),
        "files": len(files),
        "gamma": gammas[0] if gammas else None,
        "without_returns": no_returns,
        "drivers": drivers,
    }
    return data, info
