"""The browser table's games, without any web code: a live game with a human seat, and the frames of a
replay. Both sit on the engine's public surface and the seat protocol's events; nothing is re-derived.

- :class:`LiveGame`: the human is one more seat speaking the seat protocol (:class:`HumanSeat`, a
  stream agent of ``meld8_env.table.Table``); the other seats are any agent specs (bots, ``ppo``,
  checkpoints, ``cmd:`` bots). ``play(action, seq)`` checks the move (over, not your turn, stale,
  illegal - each a :class:`PlayError` with a message for the page) and plays the agents on until the
  human must act again; a ``game_id`` that is not this game's refuses the move (seq restarts at 0 each game, so a
  stale move of the previous game would fit). A finished game is saved as a replay. The state carries the game's
  ``seed`` only once the game is over (it re-creates every hidden hand and the wall). A CHEATING diagnostic that
  wants the true records (``wants_records``) is refused when the game is made, as ``meld8 tournament``
  refuses it.
- :class:`GuardedAgent`: each other seat's agent; one that raises (a checkpoint failing at its first
  forward pass) or faults (a ``cmd:`` bot's bad line) is replaced by the fallback bot for the rest of
  the game, as in tournaments, and the page is told (``notices`` in the state, :meth:`LiveGame.take_notices`);
  :attr:`LiveGame.failures` lists the agents that raised (``meld8 play`` refuses to serve when one already
  did in its trial game).
- :func:`replay_frames`: one full-information table state per action of a replay (the viewer).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from meld8_app.web.tableview import SeatView, merge
from meld8_env.actions import action_name, illegal_action_message
from meld8_env.agent import records_refusal, wants_infoset, wants_records
from meld8_env.agent_spec import load_agent
from meld8_env.codes import Phase
from meld8_env.protocol import GameStreams, parse_action
from meld8_env.rules import RuleConfig
from meld8_env.table import Table, agent_actions
from meld8_env.vector import Meld8Vector


class PlayError(ValueError):
    """A move the table cannot take now; the message says why and what would be right."""


class HumanSeat:
    """A seat played from the browser: a stream agent whose answer is set before the table asks."""

    plays_streams = True
    name = "human"

    def __init__(self, seat: int, players: int) -> None:
        self.view = SeatView(seat, players)
        self.answer: int | None = None

    def open_stream(self, key: int, info: dict) -> None: ...

    def feed(self, key: int, events: list[dict]) -> None:
        for ev in events:
            self.view.apply(ev)

    def flush(self) -> None: ...

    def act_streams(self, keys: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self.answer is None:  # pragma: no cover - LiveGame only steps the human's turn with an answer
            raise RuntimeError("the human seat was asked without an answer")
        self.view.answered(self.answer)  # the stream never shows a seat its own answer: a beaten call is said (R21)
        out, self.answer = np.array([self.answer], np.int64), None
        return out

    def close_stream(self, key: int) -> list[dict]:
        return []


class GuardedAgent:
    """An agent seated at the live table, with the fallback standing by: if the agent raises, or (a
    ``cmd:`` bot) faults in this game, ``fallback`` plays the seat from then on and ``notices`` says so."""

    def __init__(self, agent: Any, seat: int, label: str, fallback: Any, notices: list[str]) -> None:
        self.inner, self.seat, self.label, self.fallback, self.notices = agent, seat, label, fallback, notices
        self.name = getattr(agent, "name", label)
        self.plays_streams = bool(getattr(agent, "plays_streams", False))
        self.wants_infoset = wants_infoset(agent)  # a search agent sees its infoset here too
        self.failed = False
        self.raised: str | None = None  # why, when the agent raised (a bug in it; a bot's fault is no exception)
        self._key: int | None = None

    def _fail(self, why: str) -> None:
        if not self.failed:
            self.failed = True
            fb = getattr(self.fallback, "name", "the fallback")
            self.notices.append(f"seat {self.seat} ({self.label}) failed: {why}; {fb} plays that seat from now on")

    def _guard(self, name: str, call, *args):
        if self.failed:
            return None
        try:
            return call(*args)
        except Exception as exc:  # any agent failure: the fallback plays on, the page is told
            # which call raised what: a bare NotImplementedError() said "failed: NotImplementedError: ;"
            why = (f"its {name} raised {type(exc).__name__}" + (f": {exc}" if str(exc) else ""))[:300]
            self.raised = why  # the first failure: a failed seat's agent is not called again
            self._fail(why)
            return None

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, infosets: list | None = None) -> np.ndarray:
        # a malformed answer (floats, the wrong length) fails the agent like a raise: checked outside the guard, it
        # stopped the table mid-game with no fallback (review, session 33)
        def answer() -> np.ndarray:
            kw = {"infosets": infosets} if infosets is not None else {}
            return agent_actions(self.inner, self.inner.act_batch(obs, masks, **kw), len(obs))

        got = self._guard("act_batch", answer)
        return got if got is not None else self.fallback.act_batch(obs, masks)

    # stream agents: the same, around the seat protocol's calls
    def open_stream(self, key: int, info: dict) -> None:
        self._key = key
        self._guard("open_stream", self.inner.open_stream, key, info)

    def feed(self, key: int, events: list[dict]) -> None:
        self._guard("feed", self.inner.feed, key, events)

    def flush(self) -> None:
        self._guard("flush", self.inner.flush)

    def act_streams(self, keys: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        got = self._guard("act_streams", self.inner.act_streams, keys, obs, masks)
        faults = getattr(self.inner, "stream_faults", None)
        if not self.failed and faults is not None and self._key is not None:
            found = faults(self._key)
            if found:
                f = found[0]
                self._fail(f"{f['kind']} fault: {f['detail']}"[:300])
        return got if got is not None else self.fallback.act_batch(obs, masks)

    def close_stream(self, key: int) -> list[dict]:
        got = self._guard("close_stream", self.inner.close_stream, key)
        return got if isinstance(got, list) else []

    def close(self) -> None:
        if hasattr(self.inner, "close"):
            try:
                self.inner.close()
            except Exception:  # closing a failed agent must not keep the next game from starting
                pass


class LiveGame:
    def __init__(
        self,
        agents: Sequence[str],
        seat: int = 0,
        rules: RuleConfig | None = None,
        seed: int = 0,
        replay_dir: str | Path | None = None,
        trust: bool = False,
        fallback: str = "greedy",
    ) -> None:
        """``fallback`` (a built-in bot) plays any seat whose agent fails mid-game."""
        self.rules = rules or RuleConfig()
        P = self.rules.num_players
        specs = list(agents) * (P - 1) if len(agents) == 1 else list(agents)
        if len(specs) != P - 1:
            raise PlayError(f"name {P - 1} agents for the other seats (or one for all), got {len(specs)}")
        if not 0 <= seat < P:
            raise PlayError(f"seat must be 0..{P - 1}, got {seat}")
        self.seat, self.seed, self.specs = seat, int(seed), specs
        self.game_id = secrets.token_hex(8)  # tells two games apart in the page (never the seed: it is the deal)
        self.notices: list[str] = []
        self._told = 0
        self.agents: list[Any] = []
        try:
            for k, s in enumerate(specs):
                self.agents.append(load_agent(s, self.rules, self.seed + 1 + k, trust))
                if wants_records(self.agents[-1]):  # as meld8 tournament: refused now, not at its first decision
                    raise PlayError(records_refusal(s, "the browser table"))
            for a in self.agents:
                a.setup(self.rules)
        except BaseException:
            self.close()  # bots already started for the other seats end with the failed start
            raise
        self.vec = Meld8Vector(1, rules=self.rules, seed=self.seed, autoreset=False)
        self.vec.reset(seed=self.seed)
        self.table = Table(self.vec)
        self.human = HumanSeat(seat, P)
        others = iter(zip(self.agents, specs, strict=True))
        seated = []
        for s in range(P):
            if s == seat:
                seated.append((self.human, "you"))
                continue
            agent, spec = next(others)
            stand_in = load_agent(fallback, self.rules, self.seed + 100 + s)
            seated.append((GuardedAgent(agent, s, spec, stand_in, self.notices), spec))
        lineup, self.names = [a for a, _ in seated], [n for _, n in seated]
        self._guarded = [a for a in lineup if isinstance(a, GuardedAgent)]
        self.human.view.names = self.names  # "you draw", "greedy discards 7♠"
        self.table.seat([0], [lineup], [{}])  # no seed in fault reports: it would re-create every hidden card
        self.actions: list[int] = []
        # the page's seq counts the human's own moves: a count of every engine step included the passes of seats
        # asked in a claim window, which no other seat may see (R22; leak audit, session 36)
        self.moves = 0
        self.replay_dir = Path(replay_dir).absolute() if replay_dir else None  # the page shows commands to paste
        self.replay_file: str | None = None
        self._advance()

    @property
    def over(self) -> bool:
        return int(self.vec.state["phase"][0]) == Phase.OVER

    def _step(self, acts: np.ndarray) -> None:
        self.actions.append(int(acts[0]))
        self.table.step(acts)
        if self.over:
            self.table.close()
            self._save()

    def _advance(self) -> None:
        """Let the agents play until the human must act (or the game ends)."""
        while not self.over and int(self.vec.current_seat[0]) != self.seat:
            acts = np.zeros(1, np.int64)
            self.table.act(acts)
            self._step(acts)

    def play(self, action: int | str, seq: int | None = None, game_id: str | None = None) -> None:
        """The human's move: an action id or name; ``seq`` (the state's ``seq`` the page acted on)
        refuses a move made on a table that has moved on since, ``game_id`` (the state's) one made in another game."""
        if game_id is not None and game_id != self.game_id:
            raise PlayError(f"that move was made in another game ({game_id!r:.40}); this game's table is shown")
        if self.over:
            raise PlayError("the game is over: start a new one")
        if seq is not None and seq != self.moves:
            raise PlayError("stale move: the table moved on since that click; the current table is shown")
        if int(self.vec.current_seat[0]) != self.seat:  # pragma: no cover - _advance always hands over
            raise PlayError("it is not your turn")
        try:
            a = parse_action(action)
        except ValueError as exc:
            raise PlayError(str(exc)) from None
        mask = self.vec.action_mask[0]
        if not 0 <= a < mask.size or not mask[a]:
            legal = np.flatnonzero(mask).tolist()
            raise PlayError(illegal_action_message(a, "you", self.state()["request"]["phase"], legal))
        self.human.answer = a
        acts = np.zeros(1, np.int64)
        self.table.act(acts)
        self.moves += 1
        self._step(acts)
        self._advance()

    def state(self) -> dict[str, Any]:
        """The human's table (JSON-able), with ``seq`` (the human's moves so far), seat names, the replay file and
        ``game_id`` (random per game: the page keys what it has shown by it)."""
        s = self.human.view.view()
        # the seed re-creates every hidden card: only once the game is over
        s.update(seq=self.moves, names=self.names, replay_file=self.replay_file, notices=list(self.notices),
                 seed=self.seed if self.over else None, game_id=self.game_id)  # fmt: skip
        return s

    @property
    def failures(self) -> list[tuple[int, str, str]]:
        """(seat, spec, why) of each agent that raised so far (the fallback plays its seat); a ``cmd:`` bot's
        protocol fault is not listed (it is the bot's answer, handled as in tournaments)."""
        return [(g.seat, g.label, g.raised) for g in self._guarded if g.raised is not None]

    def take_notices(self) -> list[str]:
        """Notices (an agent failed; the fallback plays its seat) not yet taken."""
        new = self.notices[self._told :]
        self._told = len(self.notices)
        return new

    def _save(self) -> None:
        if self.replay_dir is None:
            return
        from meld8_env.replay import save_replay

        self.replay_dir.mkdir(parents=True, exist_ok=True)
        path = self.replay_dir / f"play-seed{self.seed}-{time.strftime('%Y%m%d-%H%M%S')}.json"
        self.replay_file = str(save_replay(path, self.rules, self.seed, self.actions, names=self.names))

    def close(self) -> None:
        if hasattr(self, "table"):
            self.table.close()
        for a in self.agents:
            a.close()


def replay_frames(
    rules: RuleConfig, seed: int, actions: Sequence[int], names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Full-information table states: frame 0 before the first action, then one frame after each action,
    and before the frame of an action that ended a hand, one *result frame* (``"result": True``) with the
    table as the hand ended (winner's hand shown, the win card in place, R29/R39/R41), so the viewer
    stops on every win and draw. Each frame has ``index`` (actions played so far: a result frame shares
    it with the frame that follows), ``action`` (the move that led to it, by whom) and ``hand`` numbers.
    ``names``: the seat names the words use ("greedy discards 7♠"; default "seat N")."""
    P = rules.num_players
    g = GameStreams(rules, seed=seed)
    views = [SeatView(s, P, list(names) if names else None) for s in range(P)]
    seen = [0] * P
    done: dict[int, dict] = {}  # merged results of finished hands, shared by the frames (see merge)

    def pieces(seat: int) -> list[list[dict]]:
        """The seat's new events, cut after each settlement (the end of a hand's result)."""
        out: list[list[dict]] = [[]]
        for ev in g.streams[seat][seen[seat] :]:
            out[-1].append(ev)
            if ev["type"] == "settlement":
                out.append([])
        seen[seat] = len(g.streams[seat])
        return out

    def sync(action: dict[str, Any] | None, index: int) -> list[dict[str, Any]]:
        cut = [pieces(s) for s in range(P)]
        made = []
        for j in range(max(len(c) for c in cut)):
            for s in range(P):
                for ev in cut[s][j] if j < len(cut[s]) else ():
                    views[s].apply(ev)
            result = j < len(cut[0]) - 1  # every seat sees each settlement, so seat 0's cuts are the hands'
            frame = {**merge(views, done), "index": index, "action": action}
            if result:
                frame["result"] = True
            made.append(frame)
        return made

    frames = sync(None, 0)
    for i, a in enumerate(actions):
        pending = g.pending()
        who = pending[0] if pending else None
        g.step(int(a))
        frames += sync({"seat": who, "id": int(a), "name": action_name(int(a))}, i + 1)
    return frames


def pack_frames(frames: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(frames, results) as the page takes them: a frame's ``results`` (every hand ended so far) are the first
    ``results_count`` of the last frame's, so they travel once instead of in every frame (a 3,451-action game
    of 138 hands was 369 MB of JSON); a frame whose results are not such a prefix keeps its own."""
    results = frames[-1]["results"] if frames else []
    packed = []
    for f in frames:
        n = len(f["results"])
        if f["results"] == results[:n]:
            f = {k: v for k, v in f.items() if k != "results"} | {"results_count": n}
        packed.append(f)
    return packed, results


__all__ = ["GuardedAgent", "HumanSeat", "LiveGame", "PlayError", "pack_frames", "replay_frames"]
