"""One game on the fast engine: observe one seat of it, or re-simulate it whole from seed and actions.

The batched engine works on arrays of games; single-game faces (the AEC env, RLlib's and Gymnasium's
final observations, the review, replays) need "this seat of this game" and "this game again". These
two helpers are the one place that does it, allocating the buffers for you:

- :func:`observe_seat` ``(engine, seat, index=0 | record=...)`` -> ``(obs uint8 (D,), mask bool (64,))``:
  what ``seat`` sees of game ``index`` of ``engine`` (a :class:`~meld8_env.engine.fast.FastBatch`), or
  of an engine ``record`` outside the batch (e.g. a game that has ended and been replaced).
- :func:`resimulate` ``(rules, seed, actions)`` -> :class:`Resimulation`: the game played again on the
  fast engine, with every record (``records[k]`` before action k, ``records[-1]`` after the last), the
  typed outcome of every hand (``meld8_env.outcomes``) and of the game. Replays, tournament logs, the
  web table and the review all re-simulate through it; the reference engine is the differential
  oracle in the tests (``tests/test_one_game.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from meld8_env.actions import NUM_ACTIONS
from meld8_env.codes import Phase, Result
from meld8_env.engine.fast import STATE_DTYPE, FastBatch
from meld8_env.engine.view import GameView, view_of
from meld8_env.outcomes import GameOutcome, HandOutcome, game_outcomes, hand_outcomes
from meld8_env.rules import RuleConfig


def observe_seat(
    engine: FastBatch, seat: int, index: int = 0, record: np.ndarray | np.void | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``seat``'s observation (D,) uint8 and legal actions (64,) bool in game ``index`` of ``engine``, or
    in ``record`` (one engine record, STATE_DTYPE) when given. Fresh arrays, owned by the caller."""
    obs = np.empty((1, engine.obs_size), np.uint8)
    mask = np.empty((1, NUM_ACTIONS), np.uint8)
    seats = np.array([seat], np.int8)
    if record is None:
        engine.observe_index(np.array([index], np.int64), seats, obs, mask)
    else:
        engine.observe_records(np.asarray(record).reshape(1), seats, obs, mask)
    return obs[0], mask[0].view(bool)


class ResimulationError(ValueError):
    """An action sequence that the game does not accept (names the action's index and the legal ones)."""


@dataclasses.dataclass(frozen=True)
class Resimulation:
    """A game played again. ``records`` (n + 1,) STATE_DTYPE: the state before each of the n actions and
    after the last; ``hands``: (index of the action that ended it, outcome) per settled hand; ``outcome``:
    the game's result, None when the actions stop before the game is over."""

    rules: RuleConfig
    seed: int
    actions: tuple[int, ...]
    records: np.ndarray
    hands: tuple[tuple[int, HandOutcome], ...]
    outcome: GameOutcome | None

    @property
    def over(self) -> bool:
        return self.outcome is not None

    @property
    def final_scores(self) -> list[int] | None:
        return None if self.outcome is None else list(self.outcome.final_scores)

    @property
    def placements(self) -> list[int] | None:
        return None if self.outcome is None else list(self.outcome.placements)

    @property
    def deals(self) -> int:
        """Deals started (replays of a drawn round count), as the replay format records it."""
        return int(self.records[-1]["deals"])

    def view(self, k: int = -1) -> GameView:
        """The game before action ``k`` (default: after the last action), with the reference names."""
        return view_of(self.records[k], self.rules)

    def result(self) -> dict[str, list[int] | int]:
        """The ``result`` of a replay document: final scores, placements and deals."""
        return {"final_scores": self.final_scores, "placements": self.placements, "deals": self.deals}


def resimulate(rules: RuleConfig, seed: int, actions: Sequence[int]) -> Resimulation:
    """Play ``actions`` from the deal of ``seed`` on the fast engine; ResimulationError (one line) at the
    first action the game does not accept (in penalty mode a false win is played, as the engine does)."""
    eng = FastBatch(1, rules)
    eng.reset(np.array([seed], np.uint64))
    acts = [int(a) for a in actions]
    records = np.empty(len(acts) + 1, STATE_DTYPE)
    hands: list[tuple[int, HandOutcome]] = []
    step = np.empty(1, np.int64)
    for i, a in enumerate(acts):
        records[i] = eng.state[0]
        if int(records[i]["phase"]) == Phase.OVER:
            raise ResimulationError(f"action {i}: the game is already over after {i} actions")
        step[0] = a
        if not rules.penalty_mode and eng.first_illegal(step) >= 0:
            raise ResimulationError(f"action {i}: " + eng.illegal_message(0, a))
        eng.step(step)
        row = eng.state[0]
        if int(row["result"]) != Result.NONE:
            hands += [(i, h) for h in hand_outcomes(np.zeros(1, np.int64), eng.state[:1], rules)]
    records[-1] = eng.state[0]
    over = int(records[-1]["phase"]) == Phase.OVER
    outcome = None
    if over:
        outcome = game_outcomes(np.zeros(1, np.int64), np.array([seed], np.uint64), records[-1:], rules)[0]
    return Resimulation(rules, int(seed), tuple(acts), records, tuple(hands), outcome)
