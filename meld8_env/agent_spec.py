"""Agents by name (a *spec*), resolved at run time: the env layer's plug-in registry.

| spec | agent |
|---|---|
| ``random``, ``greedy``, ``defensive`` | the built-in bots (:data:`BUILTIN`: ``module:Class`` strings) |
| ``pkg.module:ClassName`` | user code (imported and run, by design), given ``rules=`` / ``seed=`` if it takes them |
| a name in entry-point group ``meld8.agents`` | an installed plug-in (``module:Class``, as Gymnasium's) |
| ``ppo`` / ``ppo:PATH.zip`` / ``PATH.zip`` | a MaskablePPO checkpoint (:data:`LOADERS`; ``ppo``: the baseline) |
| ``distilled`` | the shipped network distilled from ``search`` (:data:`SHIPPED_MODELS`) |
| ``rllib:FOLDER`` | an RLlib policy folder |
| ``search`` / ``search:worlds=32,...`` | the search agent (:data:`OPTION_AGENTS`: options in the spec) |
| ``wary`` / ``wary:lam=20`` | greedy with the wait model's deal-in risk (``agents.wary``; options in the spec) |
| ``cmd:COMMAND`` | a program speaking the seat protocol (``meld8_env.seat_process``) |

Every built-in and loader is named by a string and imported only when a spec asks for it, so this
module (like all of ``meld8_env``) imports nothing from ``agents`` or ``training``. A spec that names
nothing loadable is one :class:`AgentLoadError` line.
"""

from __future__ import annotations

import importlib
import inspect
import re
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from meld8_env.agent import BUILTIN, AgentProtocol, CheckpointError, as_agent
from meld8_env.config_io import check_int, short_repr
from meld8_env.rules import RuleConfig
from meld8_env.seat_process import PREFIX, BotOptions, BotStartError, ExternalAgent

LOADERS: dict[str, tuple[str, str]] = {
    "ppo": ("agents.policy:PolicyAgent", "train"),
    "rllib": ("agents.rllib_policy:RllibPolicyAgent", "rllib"),
}
"""Trained agents: spec prefix -> (``module:Class`` taking a path, the pip extra it needs)."""
OPTION_AGENTS: dict[str, str] = {
    "search": "agents.search:load_search",
    "wary": "agents.wary:load_wary",
}
"""Agents named with options in the spec (``search`` / ``search:worlds=32,budget=...``): name ->
``module:function`` taking (options text, rules, seed); a bad option is its ValueError, one line."""
SHIPPED_BASELINE = ("agents", "models/ppo_baseline.zip")
"""(package, file inside it) of the trained baseline that ``ppo`` alone names."""
SHIPPED_MODELS: dict[str, tuple[str, str]] = {
    "ppo": SHIPPED_BASELINE,
    "distilled": ("agents", "models/distilled.zip"),
}
"""Shipped checkpoints by name (each loads as ``ppo:`` its file): ``distilled`` is the card-head network
distilled from the search agent (``training.distill``; ``agents/models/README.md``)."""
ENTRY_POINT_GROUP = "meld8.agents"


class AgentLoadError(ValueError):
    """An agent spec that names nothing loadable."""


def load_agent(
    spec: str, rules: RuleConfig | None = None, seed: int = 0, trust: bool = False, bots: BotOptions | None = None
) -> Any:
    """The agent ``spec`` names (see the module docstring). ``trust=True`` lets SB3 unpickle a foreign
    checkpoint zip; ``bots`` sets a ``cmd:`` bot's timeout, fallback and log folder."""
    if not isinstance(spec, str) or not spec:
        raise AgentLoadError(f"an agent spec is a non-empty string, got {short_repr(spec)}")
    # checked at load, not at the first move (a bad seed failed inside numpy there, never for greedy; a rules name
    # raised AttributeError): red team, session 37. No upper end: a seat's seed is the game seed + 1 + k
    seed = check_int(seed, f"agent {short_repr(spec)}: seed", 0, error=AgentLoadError)
    rules = RuleConfig.load(rules)
    if spec.startswith("rllib:"):
        return _load_trained("rllib", spec.removeprefix("rllib:"), rules, seed)
    if spec.startswith(PREFIX):
        return _load_command(spec[len(PREFIX) :], rules, seed, bots or BotOptions())
    name, colon, options = spec.partition(":")
    if colon and name in BUILTIN:  # 'greedy:x=1' was "cannot import module 'greedy'"
        raise AgentLoadError(f"agent {short_repr(spec)}: {name} takes no options; give {name}")
    # 'distilled:x' too (red team, session 43); ppo:PATH loads a file
    if colon and name in SHIPPED_MODELS and name != "ppo":
        raise AgentLoadError(
            f"agent {short_repr(spec)}: {name} is a shipped checkpoint and takes no options; give {name}, or "
            "ppo:PATH.zip for another checkpoint"
        )
    if colon and not options and name in OPTION_AGENTS:  # 'search:' was ranked apart from 'search'
        raise AgentLoadError(f"agent {short_repr(spec)}: nothing after ':': give {name} or {name}:key=value")
    if name in OPTION_AGENTS:
        try:
            return as_agent(resolve(OPTION_AGENTS[name], spec)(options, rules, seed))
        except ValueError as exc:
            raise AgentLoadError(f"agent {short_repr(spec)}: {exc}") from None
    path = checkpoint_path(spec)  # names_checkpoint_file inside: one test for this and --trust-checkpoint's check
    if path is not None:
        return _load_trained("ppo", path, rules, seed, trust=trust)
    target = BUILTIN.get(spec) or _entry_point(spec) or (spec if ":" in spec else None)
    if target is None:
        raise AgentLoadError(
            f"unknown agent {short_repr(spec)}: use one of {', '.join(BUILTIN)}, search (search:worlds=32,...), "
            "wary (wary:lam=10), ppo (the shipped baseline), distilled (the shipped network distilled from search), "
            "ppo:PATH.zip (a checkpoint), rllib:FOLDER (an RLlib policy), 'package.module:ClassName' or "
            "'cmd:COMMAND' (a seat-protocol bot)"
        )
    cls = resolve(target, spec)
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        params = {}
    kwargs = {k: v for k, v in (("rules", rules), ("seed", seed)) if k in params}
    try:
        agent = cls(**kwargs)
    except Exception as exc:  # user code: report, do not crash deep inside
        raise AgentLoadError(
            f"agent {short_repr(spec)}: constructing {target.split(':', 1)[1]} failed: {exc}"
        ) from None
    if not isinstance(agent, AgentProtocol):
        raise AgentLoadError(f"agent {short_repr(spec)} lacks name / act / act_batch (see meld8_env.agent.Agent)")
    return as_agent(agent)  # user code without setup / close gets them here, so no caller probes


def names_checkpoint_file(spec: str) -> bool:
    """Whether :func:`load_agent` loads ``spec`` as a checkpoint file of the caller's (``ppo:PATH`` or ``PATH.zip``,
    tried in its order: an RLlib folder, a ``cmd:`` bot or an agent with options is none, whatever its name ends
    with): the only agents ``trust=True`` reaches (the shipped ones carry their metadata; a search's networks are
    loaded without it)."""
    if spec.startswith(("rllib:", PREFIX)) or spec.partition(":")[0] in OPTION_AGENTS or spec in SHIPPED_MODELS:
        return False
    return spec.startswith("ppo:") or spec.endswith(".zip")


def checkpoint_path(spec: str) -> str | None:
    """The checkpoint file ``spec`` names, as :func:`load_agent` loads it: a shipped network's file (``ppo``,
    ``distilled``), ``PATH`` of ``ppo:PATH``, or a ``PATH.zip``; None for every other spec."""
    if spec in SHIPPED_MODELS:
        return str(shipped_model(spec))
    return spec.removeprefix("ppo:") if names_checkpoint_file(spec) else None


MAX_PATH_PARTS = 16
"""The most comma-separated parts :func:`split_agents` joins when it looks for a path that holds ','."""


def split_agents(text: str, flag: str = "--agents", instead: str = "") -> list[str]:
    """The specs of a comma-separated agent list (``greedy,ppo:a.zip,defensive``): each part stripped, empty parts
    dropped. ``,`` separates the agents, so a checkpoint path (``ppo:PATH``, ``PATH.zip``, ``rllib:FOLDER``) that holds
    one was cut in two and reported as a wrong number of agents, or as a missing file (red team, session 44): a
    ``ppo:`` / ``rllib:`` part whose path names nothing, or a part that names nothing where a later one ends in
    ``.zip``, and that joined with up to :data:`MAX_PATH_PARTS` - 1 parts after it by ``,`` names a file or folder, is
    refused in one AgentLoadError line that names ``flag``, the path and, in ``instead``, another way to give it (a
    list that parses today parses unchanged; the search is linear in the list's length, review session 44: joining
    every later part was cubic, seconds for a thousand parts)."""
    parts = text.split(",")
    zips = [i for i, p in enumerate(parts) if p.strip().endswith(".zip")]
    for i, part in enumerate(parts):
        head = part.strip()
        if not head.startswith(("ppo:", "rllib:")) and not any(i < z < i + MAX_PATH_PARTS for z in zips):
            continue  # no path can start here
        if _names_a_path(head):
            continue  # it names something as it stands (or it is no path): read as before
        joined = head
        for j in range(i + 1, min(len(parts), i + MAX_PATH_PARTS)):
            joined += "," + parts[j]
            if _names_a_path(joined.strip(), must_exist=True):
                raise AgentLoadError(
                    f"{flag}: {short_repr(joined.strip(), 300)} is one agent whose path contains ',', but ',' "
                    f"separates the agents of a list (it was cut into {j - i + 1} agents, the first "
                    f"{short_repr(head, 80)}): a path in an agent list cannot contain ',', and quoting does not help; "
                    f"rename or move the file{instead}"
                )
    out = [p.strip() for p in parts if p.strip()]
    for before, part in zip(out, out[1:], strict=False):
        # "search:worlds=8,cands=2" in a list: the second option was read as an agent named "cands=2" and reported as
        # a wrong number of agents (a user, session 45)
        takes_options = before.partition(":")[0] in OPTION_AGENTS  # cmd:/ppo: arguments are no options (review, s45)
        if takes_options and "=" in before and OPTION_PART.match(part) and not _names_a_path(part):
            raise AgentLoadError(
                f"{flag}: {short_repr(part, 40)} looks like an option of the agent before it "
                f"({short_repr(before, 60)}), but ',' separates the agents of a list: join an agent's options with '+' "
                f"({short_repr(before + '+' + part, 100)})"
            )
    return out


OPTION_PART = re.compile(r"[A-Za-z_]\w*=[^/\\:]*\Z")
"""A part of an agent list that reads as ``key=value``: an option cut off the agent before it, not an agent."""


def _names_a_path(spec: str, must_exist: bool = False) -> bool:
    """Whether ``spec`` is no checkpoint path at all (unless ``must_exist``), or a ``ppo:PATH`` / ``PATH.zip`` /
    ``rllib:FOLDER`` whose path exists (a ``ppo:`` path may leave out ``.zip``, as the loader does); a known agent
    name and a ``cmd:`` bot are never paths."""
    named = spec.startswith(PREFIX) or spec in BUILTIN or spec in SHIPPED_MODELS
    named = named or spec.partition(":")[0] in OPTION_AGENTS
    if named or (":" in spec and not spec.startswith(("ppo:", "rllib:"))):  # a name, or module:Class: never a path
        return not must_exist
    if spec.startswith("rllib:"):
        path = spec.removeprefix("rllib:")
    elif spec.startswith("ppo:"):
        path = spec.removeprefix("ppo:")
    elif must_exist and not spec.endswith(".zip"):
        return False
    else:
        path = spec
    try:
        return bool(path) and (Path(path).exists() or (not spec.startswith("rllib:") and Path(path + ".zip").is_file()))
    except (OSError, ValueError):  # a name too long for the system, a NUL: nothing there
        return False


def resolve(target: str, spec: str | None = None) -> Any:
    """The object a ``module:Name`` string names, imported now; AgentLoadError when it does not exist."""
    module, _, attr = target.partition(":")
    what = spec or target
    if not module or not attr:
        raise AgentLoadError(f"agent {what!r}: {target!r} is not 'package.module:ClassName'")
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise AgentLoadError(f"agent {what!r}: cannot import module {module!r} ({exc})") from None
    obj = getattr(mod, attr, None)
    if obj is None:
        raise AgentLoadError(f"agent {what!r}: module {module!r} has no {attr!r}")
    return obj


def shipped_baseline() -> Path:
    """Path of the PPO baseline shipped with the package (``agents/models/ppo_baseline.zip``)."""
    return shipped_model("ppo")


def shipped_model(name: str) -> Path:
    """Path of the checkpoint shipped as ``name`` (:data:`SHIPPED_MODELS`)."""
    from importlib.resources import files

    package, member = SHIPPED_MODELS[name]
    return Path(str(files(package) / member))


def _entry_point(name: str) -> str | None:
    """``module:Class`` of an installed plug-in named ``name`` (entry-point group ``meld8.agents``)."""
    if ":" in name:
        return None
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.value
    return None


def _load_command(command: str, rules: RuleConfig, seed: int, bots: BotOptions) -> Any:
    """A ``cmd:`` bot, handed its fallback (the built-in that plays a faulted seat)."""
    fallback = load_agent(bots.fallback, rules, seed)
    try:
        return ExternalAgent(command, rules, seed, bots, fallback=fallback)
    except BotStartError as exc:
        raise AgentLoadError(str(exc)) from None


def _load_trained(kind: str, path: str, rules: RuleConfig, seed: int, **kwargs: Any) -> Any:
    """A trained agent of ``kind`` (:data:`LOADERS`) from ``path``; a missing extra or a bad file is one
    AgentLoadError line."""
    target, extra = LOADERS[kind]
    what = "rllib: agents" if kind == "rllib" else "checkpoint agents"
    module, _, cls = target.partition(":")
    try:
        agent_class = getattr(importlib.import_module(module), cls)
        return agent_class(path, rules=rules, seed=seed, **kwargs)
    except ModuleNotFoundError as exc:
        raise AgentLoadError(
            f"{what} need the {extra} extra: pip install torch==2.13.0 'meld8[{extra}]' (missing: {exc.name})"
        ) from None
    except CheckpointError as exc:
        raise AgentLoadError(str(exc)) from None
