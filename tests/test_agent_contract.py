"""The agent contract and spec resolution of the env layer (meld8_env.agent, meld8_env.agent_spec):
built-ins are module:Class strings resolved at run time, objects lacking setup / close get the whole
contract once, a cmd: bot is handed its fallback, a bad spec is one line."""

import re
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest

import meld8_env.agent_spec as agent_spec
from agents.defensive import DefensiveAgent
from agents.greedy import GreedyAgent
from agents.random_agent import RandomAgent
from meld8_env.agent import BUILTIN, AdaptedAgent, Agent, as_agent
from meld8_env.agent_spec import AgentLoadError, load_agent, resolve
from meld8_env.rules import RuleConfig
from meld8_env.seat_process import BotOptions
from meld8_env.vector import Meld8Vector

ROOT = Path(__file__).resolve().parents[1]


class OldStyle:
    """User code written against the older protocol: name / act / act_batch only (the first legal id)."""

    name = "old-style"

    def act(self, obs, mask):
        return int(np.flatnonzero(mask)[0])

    def act_batch(self, obs, masks):
        return np.asarray(masks).astype(bool).argmax(axis=1)


class HalfContract(OldStyle):
    """Has setup but no close."""

    def setup(self, rules):
        self.seen = rules


def test_builtins_are_module_class_strings_resolved_at_run_time():
    assert all(isinstance(t, str) and ":" in t for t in BUILTIN.values())
    assert resolve(BUILTIN["greedy"]) is GreedyAgent and resolve(BUILTIN["defensive"]) is DefensiveAgent
    rules = RuleConfig(max_replays=2)
    a = load_agent("random", rules, seed=5)
    assert isinstance(a, RandomAgent) and a.rules is rules and a.seed == 5
    assert isinstance(a, Agent) and a.wants_infoset is False and a.plays_streams is False


def test_objects_lacking_setup_or_close_get_the_contract_once():
    v = Meld8Vector(4, seed=3)
    v.reset()
    old = OldStyle()
    assert as_agent(GreedyAgent()) is not None and isinstance(as_agent(GreedyAgent()), GreedyAgent)
    wrapped = as_agent(old)
    assert isinstance(wrapped, AdaptedAgent) and wrapped.name == "old-style" and wrapped.inner is old
    wrapped.setup(RuleConfig())
    wrapped.close()
    assert np.array_equal(wrapped.act_batch(v.observation, v.action_mask), old.act_batch(v.observation, v.action_mask))
    half = HalfContract()
    as_agent(half).setup(rules := RuleConfig(max_replays=1))
    assert half.seen is rules  # its own setup still runs
    via_spec = load_agent("test_agent_contract:OldStyle")
    assert isinstance(via_spec, AdaptedAgent) and isinstance(via_spec.inner, OldStyle)


def test_a_non_agent_is_a_one_line_error():
    with pytest.raises(TypeError, match="is not an agent") as exc:
        as_agent(object())
    assert "\n" not in str(exc.value)
    for spec, message in [
        ("nonsense", "unknown agent 'nonsense'"),
        ("no_such_module_xyz:Bot", "cannot import module 'no_such_module_xyz'"),
        ("meld8_env.rules:Nope", "has no 'Nope'"),
        ("", "non-empty string"),
    ]:
        with pytest.raises(AgentLoadError, match=message) as exc:
            load_agent(spec)
        assert "\n" not in str(exc.value)


def test_installed_plugins_are_found_by_entry_point(monkeypatch):
    ep = EntryPoint(name="first-legal", value="test_agent_contract:HalfContract", group=agent_spec.ENTRY_POINT_GROUP)
    monkeypatch.setattr(agent_spec, "entry_points", lambda group: [ep] if group == ep.group else [])
    agent = load_agent("first-legal")
    assert isinstance(agent.inner, HalfContract)
    with pytest.raises(AgentLoadError, match="unknown agent 'second'"):
        load_agent("second")


def test_a_cmd_bot_is_handed_its_fallback():
    bot = f"cmd:{sys.executable} {ROOT / 'examples' / 'bots' / 'python_bot.py'}"
    agent = load_agent(bot, RuleConfig(), seed=2, bots=BotOptions(fallback="defensive"))
    try:
        assert isinstance(agent.fallback, DefensiveAgent) and agent.fallback.seed == 2
        assert agent.plays_streams and as_agent(agent) is agent
    finally:
        agent.close()


class Answers(OldStyle):
    """Answers ``act_batch`` with ``shape(first legal ids)``: a user agent whose answer is malformed."""

    def __init__(self, shape) -> None:
        self.shape = shape

    def act_batch(self, obs, masks):
        return self.shape(np.asarray(masks).astype(bool).argmax(axis=1))


@pytest.mark.parametrize(
    "shape, says",
    [
        (lambda a: a + 0.9, "must return 2 integer action ids (shape (2,)), got float64 values of shape (2,)"),
        (lambda a: [str(x) for x in a], "got <U"),
        (lambda a: a[:1], "got int64 values of shape (1,)"),
        (lambda a: int(a[0]), "got a value of type int"),
        (lambda a: np.full(2, np.nan), "got float64 values"),
        (lambda a: a + 2**40, "act_batch returned 1099511627"),
        (lambda a: a - 100, "returned -"),
    ],
)
def test_an_agents_malformed_actions_are_refused_naming_the_agent(shape, says):
    """An in-process agent's answer is input from outside (meld8_env.table.agent_actions): float ids were
    truncated and played, strings parsed, short arrays broadcast into a numpy error naming no agent."""
    from meld8_env.table import Table

    vec = Meld8Vector(2, seed=3)
    vec.reset()
    table = Table(vec)
    agent = Answers(shape)
    table.seat([0, 1], [[agent] * vec.P] * 2)
    actions = np.full(2, -1, np.int64)
    with pytest.raises(ValueError, match=f"agent 'old-style': .*{re.escape(says)}"):
        table.act(actions)
    assert (actions == -1).all()  # nothing filled in
    table.seat([0, 1], [[Answers(lambda a: a)] * vec.P] * 2)
    table.act(actions)
    assert vec.action_mask[np.arange(2), actions].all()  # the same agent with well-formed answers plays


class Recorder:
    """An in-process stream agent (the StreamAgent contract) that notes every ``info`` it is handed and plays the
    first legal action."""

    name = "recorder"
    plays_streams = True

    def __init__(self) -> None:
        self.infos: list[dict] = []

    def setup(self, rules) -> None:
        pass

    def close(self) -> None:
        pass

    def act_batch(self, obs, masks):
        return np.asarray(masks).astype(bool).argmax(axis=1)

    def open_stream(self, key, info):
        self.infos.append(dict(info))

    def feed(self, key, events):
        pass

    def flush(self):
        pass

    def act_streams(self, keys, obs, masks):
        return self.act_batch(obs, masks)

    def close_stream(self, key):
        return []


def test_stream_agents_are_never_handed_the_game_seed():
    """Leak audit, session 36: the Gymnasium faces and the arena (tournaments) passed ``{"seed": ...}`` to every
    stream agent's ``open_stream``; the seed re-creates every hidden card and the wall. Now no face hands it out,
    and the Table refuses an info that holds it."""
    from meld8_env.gym_env import Meld8VectorEnv
    from meld8_env.table import Table
    from training.arena import play

    bot = Recorder()
    env = Meld8VectorEnv(2, opponents=[bot, "greedy"], seed=5)
    env.reset(seed=5)
    env.step(env.vec.action_mask.argmax(axis=1))
    env.close()
    seats = np.array([[0, 1, 2], [1, 2, 0]])
    play([Recorder(), GreedyAgent(), bot], seats, [11, 11])
    assert bot.infos and all("seed" not in info and "seat" in info for info in bot.infos), bot.infos
    vec = Meld8Vector(1, seed=3)
    vec.reset()
    with pytest.raises(ValueError, match="must not hold the seed"):
        Table(vec).seat([0], [[bot] * vec.P], [{"seed": 3}])


def test_a_path_with_a_comma_in_an_agent_list_is_refused_as_such(tmp_path, monkeypatch):
    """Red team, session 44: 'ppo:/x/a,b.zip,defensive,greedy' was cut at the path's comma and refused as four agents
    (or, in a list of the right length, as the missing file 'a'): the refusal names the path and the comma."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a,b.zip").write_bytes(b"PK")  # only its name matters: the list is refused before anything loads
    (tmp_path / "run,1").mkdir()
    for text, path, cut in [
        (f"ppo:{tmp_path}/a,b.zip,defensive,greedy", f"ppo:{tmp_path}/a,b.zip", f"ppo:{tmp_path}/a"),
        (f"ppo:{tmp_path}/a,b,greedy", f"ppo:{tmp_path}/a,b", f"ppo:{tmp_path}/a"),  # .zip left out
        ("greedy, a,b.zip", "a,b.zip", "a"),  # a bare PATH.zip, relative, after a stripped space
        ("rllib:run,1,greedy", "rllib:run,1", "rllib:run"),
    ]:
        with pytest.raises(AgentLoadError) as err:
            agent_spec.split_agents(text, "--agents", ", or list the agents in --config")
        said = str(err.value)
        assert said == (f"--agents: {path!r} is one agent whose path contains ',', but ',' separates the agents of a "
                        f"list (it was cut into 2 agents, the first {cut!r}): a path in an agent list cannot contain "
                        "',', and quoting does not help; rename or move the file, or list the agents in --config"
                        ), said  # fmt: skip
    # lists that parse today parse unchanged: names, stripped parts, empty parts dropped, a missing file left to the
    # loader, a cmd: bot, and a path that names a file as it stands (even where a longer one would too)
    (tmp_path / "a.zip").write_bytes(b"PK")
    (tmp_path / "a.zip,b.zip").write_bytes(b"PK")
    assert agent_spec.split_agents(" greedy , ppo:missing.zip,,defensive ") == ["greedy", "ppo:missing.zip",
                                                                                 "defensive"]  # fmt: skip
    assert agent_spec.split_agents("a.zip,b.zip,greedy") == ["a.zip", "b.zip", "greedy"]
    assert agent_spec.split_agents("cmd:python3 bot.py,greedy") == ["cmd:python3 bot.py", "greedy"]
    assert agent_spec.split_agents("search:worlds=8+cands=2,wary:lam=5") == ["search:worlds=8+cands=2", "wary:lam=5"]
    # module:Class specs are names, never paths, even where a file of the joined name exists (review, session 44)
    (tmp_path / "pkg.mod:Bot,b.zip").write_bytes(b"PK")
    assert agent_spec.split_agents("pkg.mod:Bot,b.zip,greedy") == ["pkg.mod:Bot", "b.zip", "greedy"]
    # linear in the list's length (joining every later part was cubic: 16 s for 2,000 parts): at most MAX_PATH_PARTS
    # path checks a part, counted; and the refusal is short whatever the path (one line of bounded length)
    checks = []
    real = agent_spec._names_a_path
    monkeypatch.setattr(agent_spec, "_names_a_path", lambda *a, **k: checks.append(a) or real(*a, **k))
    assert len(agent_spec.split_agents(",".join(["ppo:x"] * 4000))) == 4000
    assert 4000 <= len(checks) <= 4000 * agent_spec.MAX_PATH_PARTS
    assert max(len(a[0]) for a in checks) < 6 * agent_spec.MAX_PATH_PARTS  # joins of a few parts, not of the list
    checks.clear()
    assert agent_spec.split_agents(",".join(["greedy"] * 4000)) == ["greedy"] * 4000 and not checks  # no path here
    deep = tmp_path / ("c," * 12 + "b.zip")
    deep.write_bytes(b"PK")
    with pytest.raises(AgentLoadError, match=r"cut into 13 agents, the first 'ppo:.*/c'\): a path") as err:
        agent_spec.split_agents(f"ppo:{deep},greedy")
    assert len(str(err.value)) < 700 and "\n" not in str(err.value)
