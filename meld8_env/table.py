"""Agents seated at the games of one ``Meld8Vector``: the one place where agents' turns are played.

The arena (tournaments, evaluation) and the Gymnasium / SB3 faces (opponents of the learner) both
play through a :class:`Table`; none of them steps agents or derives events on its own.

- ``seat(slots, lineups)`` after games start at ``slots`` (``reset`` / ``start_games`` / autoreset):
  ``lineups[k][s]`` is the agent in seat ``s`` of game ``slots[k]`` (``None``: a seat played from
  outside, e.g. the learner). Agents stay bound to a game until it ends, so replacing an opponent
  takes effect from each slot's next game.
- ``act(actions)`` fills ``actions[i]`` (int64, shape (B,)) for every game whose acting seat has an
  agent: one ``act_batch(obs (n, D), masks (n, 64))`` call per agent over all its rows; an answer that is not
  an action id raises, naming the agent, and so does ``step`` for one the engine refuses as illegal
  (:class:`AgentError`; the caller's own illegal action stays ``IllegalActionError``). An agent whose
  class sets ``wants_infoset = True`` (a search agent) gets ``act_batch(obs, masks, infosets=[...])``:
  the acting seat's :class:`~meld8_env.infoset.InfoSet` of each row, never the true record.
- ``step(actions)`` steps the vector. Agents that play through the seat protocol (``plays_streams``:
  ``meld8_env.seat_process.ExternalAgent``) get their seats' event streams (``meld8_env.protocol``) derived
  from the engine records around the step; ``flush()`` sends them before in-process agents act (so
  bots think meanwhile), and ``act_streams(keys, obs, masks)`` collects the answers.
  ``ended_faults[slot]`` lists the faults of such agents in the games that ended on the last step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from meld8_env.actions import NUM_ACTIONS, IllegalActionError
from meld8_env.agent import plays_streams, wants_infoset
from meld8_env.infoset import infoset
from meld8_env.outcomes import game_outcomes, hand_outcomes
from meld8_env.protocol import EventDeriver, Routed
from meld8_env.vector import Meld8Vector


class AgentError(ValueError):
    """An in-process agent that raised while deciding, or answered an illegal action: one line naming the agent (a
    user's ``pkg.mod:Class`` that raised RuntimeError ended ``meld8 tournament`` / ``review`` / ``train`` in a
    traceback: red team, session 37). The agent's own exception, if any, is the ``__cause__``."""


def agent_name(agent: Any) -> str:
    return str(getattr(agent, "name", type(agent).__name__))[:80]


def agent_actions(agent: Any, got: object, n: int) -> np.ndarray:
    """An in-process agent's ``act_batch`` answer for ``n`` rows as (n,) int64 action ids, or ValueError in one
    line naming the agent: its answer is input from outside, and float ids were truncated, strings parsed and
    short arrays broadcast into a numpy error that named no agent (red team, session 33). Whether each id is
    legal is the engine's check, at the step (:meth:`Table.step` names the agent of an illegal one)."""
    a = np.asarray(got) if isinstance(got, np.ndarray | list | tuple) else None
    name = agent_name(agent)
    if a is None or a.shape != (n,) or a.dtype.kind not in "iu":
        what = f"{a.dtype} values of shape {a.shape}" if a is not None else f"a value of type {type(got).__name__}"
        raise ValueError(f"agent {name!r}: act_batch must return {n} integer action ids (shape ({n},)), got {what}")
    if n and (a.min() < 0 or a.max() >= NUM_ACTIONS):
        bad = int(a[(a < 0) | (a >= NUM_ACTIONS)][0])
        raise ValueError(f"agent {name!r}: act_batch returned {bad}, not an action id 0..{NUM_ACTIONS - 1}")
    return a.astype(np.int64)


class Table:
    def __init__(self, vec: Meld8Vector) -> None:
        self.vec = vec
        self.B, self.P = vec.num_envs, vec.P
        self.agents: list[Any] = []  # distinct agents seated so far (index = row value in seat_agent)
        self._index: dict[int, int] = {}
        self.seat_agent = np.full((self.B, self.P), -1, np.int64)
        self.stream_key = np.full((self.B, self.P), -1, np.int64)  # the stream each seat feeds, -1: none
        self._next_key = 0
        self._deriver = EventDeriver(vec.rules)
        self._faults: dict[int, list[dict]] = {}
        self.ended_faults: dict[int, list[dict]] = {}

    # -- seating ----------------------------------------------------------------------------------
    def _agent_index(self, agent: Any) -> int:
        k = self._index.get(id(agent))
        if k is None or self.agents[k] is not agent:
            k = len(self.agents)
            self.agents.append(agent)
            self._index[id(agent)] = k
        return k

    def seat(
        self, slots: Sequence[int] | np.ndarray, lineups: Sequence[Sequence[Any]], info: Sequence[dict] | None = None
    ) -> None:
        """Bind ``lineups`` to the games that just started at ``slots``; stream agents get the games'
        opening events (``info[k]``, handed to ``open_stream`` with the seat: labels of their fault reports, never
        the seed, which re-creates every hidden card: a stream agent is a seat, and a seat may not know it)."""
        slots = np.asarray(slots, np.int64)
        if len(lineups) != slots.size:
            raise ValueError(f"give one lineup per slot: {slots.size} slots, {len(lineups)} lineups")
        if info and any("seed" in d for d in info):  # leak audit, session 36: the faces handed it to every stream
            raise ValueError("a game's info goes to its stream agents: it must not hold the seed")
        self._compact()
        opened = []
        for k, (slot, lineup) in enumerate(zip(slots.tolist(), lineups, strict=True)):
            if len(lineup) != self.P:
                raise ValueError(f"a lineup names one agent (or None) per seat: {self.P}, got {len(lineup)}")
            self._close(slot)  # a game abandoned in this slot (a reset) ends its streams
            for seat, agent in enumerate(lineup):
                self.seat_agent[slot, seat] = -1 if agent is None else self._agent_index(agent)
                if agent is not None and plays_streams(agent):
                    key = self._next_key
                    self._next_key += 1
                    agent.open_stream(key, {**(info[k] if info else {}), "seat": seat})
                    self.stream_key[slot, seat] = key
                    opened.append(slot)
        if opened:
            rows = np.unique(np.asarray(opened, np.int64))
            self._deliver(rows, self._deriver.start(self.vec.engine.snapshot(rows)))

    def _compact(self) -> None:
        """Forget agents no game holds any more (e.g. opponents replaced during training)."""
        if len(self.agents) < 16:
            return
        used = np.unique(self.seat_agent[self.seat_agent >= 0])
        if used.size * 2 >= len(self.agents):
            return
        remap = np.full(len(self.agents) + 1, -1, np.int64)
        remap[used] = np.arange(used.size)
        self.agents = [self.agents[k] for k in used.tolist()]
        self._index = {id(a): k for k, a in enumerate(self.agents)}
        self.seat_agent = remap[self.seat_agent]  # -1 indexes the final -1

    def _close(self, slot: int) -> list[dict]:
        """End the streams of the game in ``slot``; returns their faults (seat added)."""
        faults: list[dict] = []
        for seat in np.flatnonzero(self.stream_key[slot] >= 0).tolist():
            agent = self.agents[self.seat_agent[slot, seat]]
            faults += [{"seat": seat, **f} for f in agent.close_stream(int(self.stream_key[slot, seat]))]
            self.stream_key[slot, seat] = -1
        return faults

    # -- playing ----------------------------------------------------------------------------------
    def act(self, actions: np.ndarray) -> None:
        """Fill ``actions`` for every game whose acting seat is played by a seated agent."""
        v = self.vec
        seat_now = v.current_seat.astype(np.int64)
        who = self.seat_agent[np.arange(self.B), np.clip(seat_now, 0, self.P - 1)]
        acting = [(k, self.agents[k], np.flatnonzero(who == k)) for k in np.unique(who[who >= 0]).tolist()]
        # stream agents first get their requests, so bots think while in-process agents compute
        streams = [(agent, rows) for _, agent, rows in acting if plays_streams(agent)]
        for agent, _ in streams:
            agent.flush()
        for _, agent, rows in acting:
            if plays_streams(agent):
                continue
            extra = {}
            if wants_infoset(agent):  # built outside the try: a failure here is not the agent's
                extra["infosets"] = [infoset(v.engine.record(i), seat_now[i], v.rules) for i in rows.tolist()]
            try:
                got = agent.act_batch(v.observation[rows], v.action_mask[rows], **extra)
            except Exception as exc:
                raise AgentError(
                    f"agent {agent_name(agent)!r} failed at a decision: {type(exc).__name__}: {exc}"
                ) from exc
            actions[rows] = agent_actions(agent, got, len(rows))
        for agent, rows in streams:
            keys = self.stream_key[rows, seat_now[rows]]
            actions[rows] = agent.act_streams(keys, v.observation[rows], v.action_mask[rows])

    def _named(self, exc: IllegalActionError, acts: np.ndarray) -> Exception:
        """The engine's refusal of an illegal action, naming the in-process agent that chose it (AgentError), or
        ``exc`` itself where the action was the caller's own: it named only "seat 1", so a user's opponent class that
        broke the rules surfaced from the user's own ``env.step()`` as if the user had played it (a newcomer's
        walkthrough, session 47). Found only once the step refused, so legal play pays nothing for it."""
        v = self.vec
        seats = v.current_seat.astype(np.int64)
        bad = (acts >= 0) & (seats >= 0)
        rows = np.flatnonzero(bad)
        bad[rows] = ~v.action_mask[rows, acts[rows]].astype(bool)  # the vector refuses before any game moves
        if not bad.any():
            return exc
        i = int(np.flatnonzero(bad)[0])  # the game the engine names first
        k = int(self.seat_agent[i, seats[i]])
        if k < 0:
            return exc
        why = v.engine.illegal_message(i, int(acts[i]), who=f"seat {int(seats[i])} of game {i}")
        return AgentError(f"agent {agent_name(self.agents[k])!r} chose an {why}; fix its act_batch (pick an action "
                          "its mask allows)")  # fmt: skip

    def step(self, actions: np.ndarray) -> None:
        """Step the vector; derive and deliver the seat streams; end the streams of games that ended."""
        v = self.vec
        rows = np.flatnonzero((self.stream_key >= 0).any(axis=1)) if self._next_key else np.zeros(0, np.int64)
        acts = np.asarray(actions)
        before = v.engine.snapshot(rows) if rows.size else None
        try:
            v.step(actions)
        except IllegalActionError as exc:
            raise self._named(exc, np.asarray(acts, np.int64)) from None
        self.ended_faults = {}
        ended = v.ended_index
        if rows.size:
            after = v.engine.snapshot(rows)
            pos = {int(s): j for j, s in enumerate(rows.tolist())}
            for k, s in enumerate(ended.tolist()):
                if s in pos:
                    after[pos[s]] = v.ended_states[k]  # the game's last record, not the autoreset's next game
            hands: dict[int, list] = {}
            hand_rows = [pos[s] for s in v.hand_index.tolist() if s in pos]
            for h in hand_outcomes(np.asarray(hand_rows, np.int64), after[hand_rows], v.rules):
                hands.setdefault(h.game, []).append(h)
            game_rows = [pos[s] for s in ended.tolist() if s in pos]
            games = {
                g.game: g
                for g in game_outcomes(
                    np.asarray(game_rows, np.int64), np.zeros(len(game_rows), np.uint64), after[game_rows], v.rules
                )  # fmt: skip
            }
            wanted = (self.stream_key[rows] >= 0).tolist()
            self._deliver(rows, self._deriver.step(before, acts[rows].tolist(), after, hands, games, wanted))
        for s in ended.tolist():
            self.ended_faults[s] = self._close(s)
            self.seat_agent[s] = -1  # nobody plays an ended game until seat() binds the next one

    def _deliver(self, rows: np.ndarray, routed: list[list[Routed]]) -> None:
        """Hand each stream agent the events of its seats in these games."""
        keys, owners = self.stream_key[rows].tolist(), self.seat_agent[rows].tolist()
        agents = self.agents
        for evs, game_keys, game_owners in zip(routed, keys, owners, strict=True):
            if not evs:
                continue
            for seat, key in enumerate(game_keys):
                if key >= 0:
                    agents[game_owners[seat]].feed(key, [ev for to, ev in evs if to is None or to == seat])

    def close(self) -> list[dict]:
        """End every open stream (games abandoned mid-way); returns their faults."""
        faults: list[dict] = []
        for slot in np.flatnonzero((self.stream_key >= 0).any(axis=1)).tolist():
            faults += self._close(slot)
        return faults
