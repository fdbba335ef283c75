"""Train options shared by both backends: reading, old names, and the checks made at load.

Both trainers (``TrainConfig`` of SB3, ``RllibConfig`` of RLlib) are dataclasses read by
:func:`read_options` from a YAML file or built-in name plus ``--set key=value`` overrides; each
option is checked against its default's type. Options that mean the same thing have the same name
on both (``total_timesteps``, ``learning_rate``, ``ent_coef``, ``net_arch``, ``n_epochs``,
``batch_size``, ``gamma``, ``gae_lambda``, ``network``, ``features``, ``shaping``, ``eval_every``,
``eval_boards``, ``eval_opponents``, ``seed``, ``out``, ``rules``, ``resume``, ``progress``); the
old RLlib names (``lr``, ``entropy_coeff``, ``hidden``, ``num_epochs``, ``minibatch_size``,
``iterations``) are still read, with a one-line deprecation notice on stderr.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any

from meld8_env.config_io import is_int

#: old name -> current name (``eval_deals``: both backends; the others: the RLlib backend's old names)
RENAMED = {
    "eval_deals": "eval_boards",
    "lr": "learning_rate",
    "entropy_coeff": "ent_coef",
    "hidden": "net_arch",
    "num_epochs": "n_epochs",
    "minibatch_size": "batch_size",
}
#: the largest hidden layer a config may ask for (a bigger one is a typo, not a network for this game)
MAX_HIDDEN = 16_384


def builtin_configs() -> list[str]:
    """The shipped train configs (``meld8 train NAME``): the one list, read from ``meld8_env/configs/train``."""
    from meld8_env.config_io import builtin_names

    return builtin_names("train")


def read_options(cls: type, path: str | None, overrides: list[str] | None) -> dict[str, Any]:
    """The options of a train config dataclass ``cls`` from a YAML file (or built-in name) and
    ``--set key=value`` overrides, each checked against its default's type (ValueError otherwise)."""
    from meld8_env.config_io import ConfigSyntaxError, load_yaml_text, read_yaml_mapping

    data: dict[str, Any] = read_yaml_mapping(path, "train config", kind="train") if path else {}
    from_file = set(data)
    for item in overrides or []:
        if "=" not in item:
            raise ValueError(f"--set expects key=value, got {item!r}")
        key, value = item.split("=", 1)
        if not value.strip():  # `--set rules="$UNSET"` is a mistake to say, not a choice of the default
            raise ValueError(f"--set {key}= gives no value: give one (null where the option allows none), or leave "
                             "the option out for its default")  # fmt: skip
        try:  # the reader of config files: `--set progress=off` means what `progress: off` in a file means
            data[key] = load_yaml_text(value)
        except ConfigSyntaxError as exc:
            raise ValueError(f"--set {item}: {exc}") from None
    known = {f.name: f for f in dataclasses.fields(cls)}
    backend = getattr(cls, "BACKEND", "sb3")
    for old, new in RENAMED.items():
        if old in data and old not in known and new in known and (backend == "rllib" or old == "eval_deals"):
            if new in data:
                raise ValueError(f"train options {old!r} and {new!r} are one option: give only {new!r}")
            data[new] = data.pop(old)
            if old != "eval_deals":  # renamed long ago, silently
                _deprecated(old, new)
    if "iterations" in data and "iterations" not in known and "total_timesteps" in known and backend == "rllib":
        if "total_timesteps" in data:
            raise ValueError("train options 'iterations' and 'total_timesteps' are one option: give total_timesteps")
        n = data.pop("iterations")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"train option 'iterations' must be an integer >= 1, got {n!r}")
        batch = data.get("train_batch_size", known["train_batch_size"].default)
        data["total_timesteps"] = n * batch if is_int(batch) else n
        _deprecated("iterations", "total_timesteps", f" (env steps: iterations x train_batch_size = {n * batch})")
    unknown = sorted(set(data) - set(known))
    if unknown:
        # an option given by --set is not the config file's to be blamed for
        other = _other_backend(backend, unknown, path if unknown[0] in from_file else None)
        raise ValueError(other or f"unknown train option {unknown[0]!r}; known: {', '.join(sorted(known))}")
    for key, value in data.items():
        _check_type(key, value, known[key])
    return data


def _deprecated(old: str, new: str, note: str = "") -> None:
    print(f"meld8 train: warning: option {old!r} is deprecated, use {new!r}{note}", file=sys.stderr, flush=True)


def _other_backend(backend: str, unknown: list[str], path: str | None) -> str | None:
    """When the unknown options are the other backend's: say which backend the config is for, in one line."""
    other = "rllib" if backend == "sb3" else "sb3"
    theirs = _other_fields(backend)
    if other == "rllib":
        theirs |= set(RENAMED) | {"iterations"}
    if not set(unknown) <= theirs:
        return None
    flag = "--backend rllib" if other == "rllib" else "--backend sb3 (the default)"
    if path:
        return f"{path} is a config of the {other} backend (it sets {unknown[0]!r}): run meld8 train {path} {flag}"
    return f"train option {unknown[0]!r} belongs to the {other} backend: add {flag}, or drop the option"


def _other_fields(backend: str) -> set[str]:
    """Option names of the other backend's config (read from its source: no heavy imports)."""
    import ast
    import importlib.util

    other = {"sb3": ("training.rllib_train", "RllibConfig"), "rllib": ("training.train_ppo", "TrainConfig")}
    module, name = other[backend]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return set()
    tree = ast.parse(open(spec.origin).read())
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)
    body = cls.body if cls is not None else []
    return {n.target.id for n in body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}


def _check_type(key: str, value: Any, field: dataclasses.Field) -> None:
    """Each option has the type of its default (ints for int options, a list of names for lists, ...)."""
    default = field.default_factory() if field.default_factory is not dataclasses.MISSING else field.default
    if value is None and (default is None or key in ("target_kl", "rules")):
        return
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = is_int(value)
    elif isinstance(default, float) or key == "target_kl":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, list):
        kind = type(default[0]) if default else str
        ok = isinstance(value, list) and all(isinstance(v, kind) and not isinstance(v, bool) for v in value)
    else:
        ok = isinstance(value, str)
    if not ok:
        words = {bool: "true or false", int: "an integer", float: "a number", list: "a list", str: "a string"}
        what = next((w for t, w in words.items() if isinstance(default, t)), None)
        if what == "an integer" and isinstance(value, float) and value.is_integer():  # total_timesteps=1e6 said
            what += f" (write {int(value)}: YAML reads 1e6 as a float)"  # only "like its default" (walkthrough)
        must = f"must be {what}, like its default" if what else "must be like its default"
        raise ValueError(f"train option {key!r} {must} {default!r}, got {value!r}")


def check_rates(cfg: Any) -> None:
    """Options of both backends that are fractions: ``gamma`` and ``gae_lambda`` in [0, 1], ``shaping``
    as ``Meld8Vector`` takes it - checked at load, not in an env built later (on a Ray worker)."""
    from meld8_env.vector import check_shaping

    for name in ("gamma", "gae_lambda"):
        if not 0 <= getattr(cfg, name) <= 1:
            raise ValueError(f"train option {name!r} must be in [0, 1], got {getattr(cfg, name)!r}")
    try:
        check_shaping(cfg.shaping)
    except ValueError as exc:
        raise ValueError(f"train option {exc}") from None


MAX_TRAIN_SEED = 2**32 - 1
"""The largest training seed: the backends seed numpy's global generator with it (SB3's ``set_random_seed``,
RLlib's ``debugging(seed=...)``), which takes 32 bits."""
MAX_EVAL_BOARDS = 10_000  # x the seatings, one batch: about 75 MB of engine records at 3 players


def check_common(cfg: Any) -> None:
    """The checks both backends make at load: rates, finite non-negative coefficients, hidden sizes,
    the seed's range, positive counts (each message names the option)."""
    from meld8_env.engine.seeding import check_seed

    check_rates(cfg)
    for name in ("learning_rate", "ent_coef"):
        v = getattr(cfg, name)
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"train option {name!r} must be a finite number >= 0, got {v!r}")
    if cfg.learning_rate == 0:
        raise ValueError("train option 'learning_rate' must be > 0 (0 would train nothing)")
    if not cfg.net_arch or not all(1 <= h <= MAX_HIDDEN for h in cfg.net_arch):
        raise ValueError(f"train option 'net_arch' must be a non-empty list of layer sizes 1..{MAX_HIDDEN:,}, got "
                         f"{cfg.net_arch!r}")  # fmt: skip
    check_seed(cfg.seed, "train option 'seed'")
    if cfg.seed > MAX_TRAIN_SEED:  # SB3 refused it only after the out folder was made, in words naming no option
        raise ValueError(f"train option 'seed' must be an integer 0..{MAX_TRAIN_SEED} (numpy's and torch's global "
                         f"seeds, which both backends set from it, take 32 bits), got {cfg.seed}")  # fmt: skip
    for name in ("total_timesteps", "batch_size", "n_epochs", "eval_every", "eval_boards"):
        v = getattr(cfg, name)
        if not is_int(v) or v < 1:
            raise ValueError(f"train option {name!r} must be an integer >= 1, got {v!r}")
    if cfg.eval_boards > MAX_EVAL_BOARDS:  # red team, session 43: 10**12 failed at the first evaluation, hours in
        raise ValueError(f"train option 'eval_boards' must be at most {MAX_EVAL_BOARDS:,} (each evaluation plays "
                         f"every seating of every board at once), got {cfg.eval_boards:,}")  # fmt: skip
    check_out(cfg)
    train_rules(cfg)


def train_rules(cfg: Any) -> Any:
    """The ``RuleConfig`` of option ``rules``: null means the default rules; an empty name is refused, as every
    ``--rules`` is (``meld8_app.cli.common.rules_from``), instead of silently meaning the defaults."""
    from meld8_env.paths import nonempty_path
    from meld8_env.rules import RuleConfig

    if cfg.rules is None:
        return RuleConfig()
    nonempty_path(cfg.rules, "train option 'rules'", "a rule config YAML or a built-in name (default, two_player), "
                  "or null for the default rules")  # fmt: skip
    return RuleConfig.load(cfg.rules)


ADDRESS = r"auto|local|(ray://)?[A-Za-z0-9._\-\[\]:]+:\d{1,5}"
"""What a Ray address looks like (``--address`` and the option ``address``): a cluster's HOST:PORT (a host name may
hold ``_``, as docker-compose services do), ``auto``, or ``local`` (a new local instance even where RAY_ADDRESS names
a cluster: both refused by a first version, review of session 37)."""


def check_address(value: Any, name: str = "train option 'address'") -> None:
    """A Ray address in a form ``ray.init`` takes, checked before Ray starts or a folder is written (``address: foo``
    failed as "Invalid address format" inside Ray, after the run folder was made: red team, session 37)."""
    import re

    if value is not None and not (isinstance(value, str) and re.fullmatch(ADDRESS, value)):
        raise ValueError(f"{name} must be HOST:PORT, ray://HOST:PORT, auto or local, got {value!r}")


def load_checked_agent(option: str, spec: str, rules: Any, load_agent, seed: int = 0, keep: bool = False) -> Any:
    """The agent that train option ``option`` names, loaded now: a misspelt name fails before any folder exists, and
    a CHEATING diagnostic (``meld8_env.agent.wants_records``, as ``meld8 tournament`` refuses it) is refused here,
    since no trainer hands out the true records: it failed at its first decision, after the run folder was written,
    or an hour in when the self-play pool drew it (red team, session 37). Closed unless ``keep``."""
    from meld8_env.agent import records_refusal, wants_records

    try:
        agent = load_agent(spec, rules, seed)
    except ValueError as exc:
        raise ValueError(f"train option {option!r}: {exc}") from None
    cheating = wants_records(agent)
    if (cheating or not keep) and hasattr(agent, "close"):  # a cmd: bot's process ends with the check
        agent.close()
    if cheating:
        raise ValueError(f"train option {option!r}: {records_refusal(spec, 'training')}")
    return agent


def check_out(cfg: Any) -> None:
    """``out`` names a folder (made later, may exist): ``out=/dev/null`` failed at mkdir with "[Errno 17] File
    exists: '/dev/null'", naming no option (red team, session 35); one the system will not create (``out=/proc/x``)
    failed there with the bare errno (red team, session 44), and is tried now (made and removed: nothing is left)."""
    from meld8_env.paths import creatable_folder, output_path

    what = "a folder for the run (checkpoints, logs, config.yaml)"
    creatable_folder(output_path(cfg.out, "train option 'out'", what), "train option 'out'", what)


def check_seats(cfg: Any, rules: Any) -> None:
    """``opponents`` and ``eval_opponents`` (where the config has them) name one agent per other seat. Checked at
    load: the count failed only when the env was built, after the run folder was written, and the folder then
    refused the corrected rerun (red team, session 35)."""
    want = rules.num_players - 1
    for name in ("opponents", "eval_opponents"):
        agents = getattr(cfg, name, None)
        if agents is not None and len(agents) != want:
            raise ValueError(f"train option {name!r} must name {want} agent{'s' * (want != 1)} (one per other seat of "
                             f"{rules.num_players} players), got {agents!r}")  # fmt: skip


def check_eval_opponents(cfg: Any, rules: Any, load_agent) -> None:
    """``eval_opponents`` names one known agent per other seat (``load_agent`` loads each once)."""
    check_seats(cfg, rules)
    for name in cfg.eval_opponents:
        load_checked_agent("eval_opponents", name, rules, load_agent)
