"""The browser table's games, without any web code: a live game with a human seat, and the frames of a
replay. Both sit on the engine's public surface and the seat protocol's events; nothing is re-derived.

- :class:`LiveGame`: the human is one more seat speaking the seat protocol (:class:`HumanSeat`, a
  stream agent of ``meld8_env.table.Table``); the other seats are any agent specs (bots, ``ppo``,
  checkpoints, ``cmd:`` bots). ``play(action, seq)`` checks the move (over, not your turn, stale,
  illegal - each a :class:`PlayError` with a message for the page) and plays the agents on until the
  human must act again. A finished game is saved as a replay.
- :func:`replay_frames`: one full-information table state per action of a replay (the viewer).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from meld8_app.web.tableview import SeatView, merge
from meld8_env.actions import action_name, illegal_action_message
from meld8_env.codes import Phase
from meld8_env.protocol import GameStreams, parse_action
from meld8_env.rules import RuleConfig
from meld8_env.table import Table
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
        out, self.answer = np.array([self.answer], np.int64), None
        return out

    def close_stream(self, key: int) -> list[dict]:
        return []


class LiveGame:
    def __init__(
        self,
        agents: Sequence[str],
        seat: int = 0,
        rules: RuleConfig | None = None,
        seed: int = 0,
        replay_dir: str | Path | None = None,
        trust: bool = False,
    ) -> None:
        from agents.registry import load_agent

        self.rules = rules or RuleConfig()
        P = self.rules.num_players
        specs = list(agents) * (P - 1) if len(agents) == 1 else list(agents)
        if len(specs) != P - 1:
            raise PlayError(f"name {P - 1} agents for the other seats (or one for all), got {len(specs)}")
        if not 0 <= seat < P:
            raise PlayError(f"seat must be 0..{P - 1}, got {seat}")
        self.seat, self.seed, self.specs = seat, int(seed), specs
        self.agents = [load_agent(s, self.rules, self.seed + 1 + k, trust) for k, s in enumerate(specs)]
        for a in self.agents:
            a.setup(self.rules)
        self.vec = Meld8Vector(1, rules=self.rules, seed=self.seed, autoreset=False)
        self.vec.reset(seed=self.seed)
        self.table = Table(self.vec)
        self.human = HumanSeat(seat, P)
        others = iter(zip(self.agents, specs, strict=True))
        seated = [(self.human, "you") if s == seat else next(others) for s in range(P)]
        lineup, self.names = [a for a, _ in seated], [n for _, n in seated]
        self.human.view.names = self.names  # "you draw", "greedy discards 7♠"
        self.table.seat([0], [lineup], [{"seed": self.seed}])
        self.actions: list[int] = []
        self.replay_dir = Path(replay_dir) if replay_dir else None
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

    def play(self, action: int | str, seq: int | None = None) -> None:
        """The human's move: an action id or name; ``seq`` (the state's ``seq`` the page acted on)
        refuses a move made on a table that has moved on since."""
        if self.over:
            raise PlayError("the game is over: start a new one")
        if seq is not None and seq != len(self.actions):
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
        self._step(acts)
        self._advance()

    def state(self) -> dict[str, Any]:
        """The human's table (JSON-able), with ``seq`` (moves so far), seat names and the replay file."""
        s = self.human.view.view()
        s.update(seq=len(self.actions), names=self.names, seed=self.seed, replay_file=self.replay_file)
        return s

    def _save(self) -> None:
        if self.replay_dir is None:
            return
        from meld8_env.replay import save_replay

        self.replay_dir.mkdir(parents=True, exist_ok=True)
        path = self.replay_dir / f"play-seed{self.seed}-{time.strftime('%Y%m%d-%H%M%S')}.json"
        self.replay_file = str(save_replay(path, self.rules, self.seed, self.actions, names=self.names))

    def close(self) -> None:
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
            frame = {**merge(views), "index": index, "action": action}
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


__all__ = ["HumanSeat", "LiveGame", "PlayError", "replay_frames"]
