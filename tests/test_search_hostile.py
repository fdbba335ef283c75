"""Red team, session 48: the search agent's and the belief sampler's public edges under hostile input.

Each case failed before from deep inside (IndexError, OverflowError, AxisError, numpy's broadcast error, the C
core's or a helper's words) or was read silently (a world of a game that cannot exist, a mask of 0.5 read as
legal). Now each is one line that names what was wrong, raised where the input comes in.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agents.registry import AgentLoadError, load_agent
from meld8_env.belief import MAX_WORLDS, sample_worlds
from meld8_env.codes import Phase
from meld8_env.engine.fast import STATE_DTYPE
from meld8_env.engine.records import observe_records
from meld8_env.infoset import InfoSet, infoset
from meld8_env.rules import RuleConfig
from tests.cli_kit import one_line_error
from training.bot_states import play_bot_states

RULES = RuleConfig()


@pytest.fixture(scope="module")
def recs() -> np.ndarray:
    return play_bot_states(RULES, games=2, seed=48, every=5)


@pytest.fixture(scope="module")
def draw(recs) -> tuple[np.ndarray, InfoSet]:
    """A live draw-phase record (the acting seat holds 8 cards) and the acting seat's infoset."""
    i = next(
        k
        for k, r in enumerate(recs)
        if int(r["phase"]) == Phase.DRAW and int(r["round"]) >= 1 and int(np.asarray(r["ndisc"]).min()) >= 2
    )
    rec = recs[i : i + 1].copy()
    return rec, infoset(rec[0], int(rec[0]["acting"]), RULES)


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text, text
    return text


def _opp(info: InfoSet) -> int:
    return info.opponents[0] if info.opponents[0] != info.current else info.opponents[1]


def _seat(values: tuple, p: int, value) -> tuple:
    return tuple(value if k == p else v for k, v in enumerate(values))


# -- the belief sampler: an edited infoset ----------------------------------------------------------------
EDITS = {
    # hand sizes: the C helper's words ("waits: row 0: 5 cards counting the meld"), an OverflowError for 0
    "hidden 5": (lambda i, j: {"hidden": _seat(i.hidden, j, 5), "wall_left": i.wall_left + i.hidden[j] - 5},
                 r"seat \d holds 5 cards"),
    "hidden 8": (lambda i, j: {"hidden": _seat(i.hidden, j, 8), "wall_left": i.wall_left + i.hidden[j] - 8},
                 r"seat \d holds 8 cards .* gives it 7"),
    "hidden 0": (lambda i, j: {"hidden": _seat(i.hidden, j, 0), "wall_left": i.wall_left + i.hidden[j]},
                 r"seat \d holds 0 cards|wall_left \+ dead_wall are"),
    # ranges: OverflowError in the record template, IndexError for a seat
    "scores huge": (lambda i, j: {"scores": _seat(i.scores, j, 10**30)}, r"InfoSet.scores\[\d\] must be"),
    "scores -1e12": (lambda i, j: {"scores": _seat(i.scores, j, -(10**12))}, r"InfoSet.scores\[\d\] must be"),
    "current 7": (lambda i, j: {"current": 7}, "InfoSet.current must be -1..2"),
    "dealer 7": (lambda i, j: {"dealer": 7}, "InfoSet.dealer is 7, but chiicha"),
    "called huge": (lambda i, j: {"called": _seat(i.called, j, 2**70)}, r"InfoSet.called\[\d\]"),
    "draws_taken -5": (lambda i, j: {"draws_taken": _seat(i.draws_taken, j, -5)}, r"InfoSet.draws_taken\[\d\] must be"),
    "kuikae huge": (lambda i, j: {"kuikae": 1 << 70}, "InfoSet.kuikae must be"),
    "deltas huge": (lambda i, j: {"deltas": _seat(i.deltas, j, 1 << 70)}, r"InfoSet.deltas\[\d\] must be"),
    "deals 1e12": (lambda i, j: {"deals": 10**12}, "InfoSet.deals must be"),
    # discards: "negative shift count", numpy's broadcast error, a TypeError about '<<'
    "discard -1": (lambda i, j: {"discards": _seat(i.discards, j, i.discards[j] + (-1,))}, r"\(a card id\) must be"),
    "discards 100": (lambda i, j: {"discards": _seat(i.discards, j, i.discards[j] + (0,) * 100)},
                     "a tuple of at most 24 cards"),
    "discard 'x'": (lambda i, j: {"discards": _seat(i.discards, j, i.discards[j] + ("x",))}, r"\(a card id\) must be"),
    # read silently before: worlds of a game that cannot exist
    "calls_used 99": (lambda i, j: {"calls_used": _seat(i.calls_used, j, 99)}, r"calls_used\[\d\] must be 0..1"),
    "dead 5": (lambda i, j: {"dead": _seat(i.dead, j, 5)}, r"InfoSet.dead\[\d\] must be 0..1"),
    "result 99": (lambda i, j: {"result": 99}, "InfoSet.result must be"),
    "replays -3": (lambda i, j: {"replays": -3}, "InfoSet.replays must be"),
    "my_turn flipped": (lambda i, j: {"my_turn": not i.my_turn}, "InfoSet.legal is .* with my_turn"),
    "legal beyond 64 bits": (lambda i, j: {"legal": 1 << 70}, "InfoSet.legal must be"),
}  # fmt: skip


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_infoset_is_one_line_naming_the_field(draw, edit):
    _, info = draw
    change, says = EDITS[edit]
    bad = dataclasses.replace(info, **change(info, _opp(info)))
    with pytest.raises(ValueError, match=says) as exc:
        sample_worlds(bad, 4, np.random.default_rng(0))
    one_line(exc)


def test_a_wall_longer_than_the_deal_leaves_is_refused(recs):
    """An opponent's cards moved to the wall early in a hand (the pool's size kept): OverflowError 'Python integer -5
    out of bounds for uint8' from the record template."""
    r = next(r for r in recs if int(r["phase"]) == Phase.DRAW and int(r["wall_end"]) - int(r["wall_pos"]) >= 26)
    info = infoset(r, int(r["acting"]), RULES)
    j = info.opponents[0]
    bad = dataclasses.replace(info, hidden=_seat(info.hidden, j, 0), wall_left=info.wall_left + info.hidden[j])
    with pytest.raises(ValueError, match="wall_left \\+ dead_wall are .*, but a 3-player deal leaves 32") as exc:
        sample_worlds(bad, 4, np.random.default_rng(0))
    one_line(exc)


def test_an_infoset_of_other_rules_with_as_many_seats_is_refused(draw):
    """A dead wall or a round the rules do not have: worlds that play by neither (read silently before)."""
    _, info = draw
    with pytest.raises(ValueError, match="its dead wall holds 2 cards, the rules' wall_limit keeps 0") as exc:
        sample_worlds(dataclasses.replace(info, wall_left=info.wall_left - 2, dead_wall=2), 4, np.random.default_rng(0))
    one_line(exc)
    short = RuleConfig(rounds=1, min_yaku_han=[1])
    with pytest.raises(ValueError, match=r"it is in round \d+, the rules play rounds 0..0"):
        sample_worlds(info, 4, np.random.default_rng(0), rules=short)


def test_every_seats_true_infoset_samples(recs):
    """The checks refuse nothing a game gives: every seat of every live state samples. An opponent holding a drawn
    card (the infoset of a seat that waits while another drew or called) failed in two_level and learned with the
    waits helper's "waits: row 0: 8 cards counting the meld". A finished game is refused in its own words."""
    live = drawing = 0
    for r in recs[::3]:
        for seat in range(RULES.num_players):
            info = infoset(r, seat, RULES)
            if int(r["phase"]) == Phase.OVER:
                with pytest.raises(ValueError, match="the game is over"):
                    sample_worlds(info, 2, np.random.default_rng(0))
                continue
            for method in ("two_level", "learned"):
                worlds, _ = sample_worlds(info, 2, np.random.default_rng(0), method)
                assert len(worlds) == 2
            if info.phase != Phase.CLAIM and info.current != seat:
                held = worlds["hands"][:, info.current]
                assert [int(h).bit_count() for h in held] == [info.hidden[info.current]] * 2
                drawing += 1
            live += 1
    assert live > 40 and drawing > 15, (live, drawing)


def test_worlds_above_the_core_limit_are_refused_in_the_samplers_words(draw):
    """The C core said "belief core: n=... must be 1..65536"; its numpy twin (any other generator) went on until
    memory ran out."""
    _, info = draw
    for rng in (np.random.default_rng(0), np.random.Generator(np.random.MT19937(0))):
        with pytest.raises(ValueError, match=f"n must be an integer >= 1 and at most {MAX_WORLDS}") as exc:
            sample_worlds(info, MAX_WORLDS + 1, rng)
        one_line(exc)


def _record_like(rec: np.ndarray, dtype: np.dtype) -> np.void:
    out = np.zeros(1, dtype)
    for name in dtype.names:
        if name in STATE_DTYPE.names and dtype.fields[name][0] == STATE_DTYPE.fields[name][0]:
            out[name] = rec[name]
    return out[0]


def test_a_record_of_another_dtype_is_refused(draw):
    """KeyError for a missing field, IndexError for a short one, a float phase read silently; a repacked copy of the
    engine's fields still reads."""
    rec, info = draw
    seat = info.seat
    only = np.zeros(1, [("wall_len", "u1")])
    only["wall_len"] = 32
    short = np.dtype([(n, ("<u8", (2,)) if n == "hands" else STATE_DTYPE[n]) for n in STATE_DTYPE.names])
    floats = np.dtype([(n, "f8" if n == "phase" else STATE_DTYPE[n]) for n in STATE_DTYPE.names])
    for bad, says in (
        (only[0], "its dtype has no field 'seed'"),
        (_record_like(rec, short), "its field 'hands' is"),
        (_record_like(rec, floats), "its field 'phase' is float64, not int8"),
    ):
        with pytest.raises(ValueError, match=says) as exc:
            infoset(bad, seat, RULES)
        one_line(exc)
    packed = np.dtype([(n, STATE_DTYPE[n]) for n in STATE_DTYPE.names])
    assert packed != STATE_DTYPE
    assert infoset(_record_like(rec, packed), seat, RULES) == info


# -- the search agent's act_batch ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def agent():
    return load_agent("search:worlds=4+extend=0", RULES, seed=3)


@pytest.fixture(scope="module")
def decision(draw):
    rec, info = draw
    obs, masks = observe_records(RULES, rec, np.array([info.seat]))
    return rec, obs, masks, info


def _other_state(recs, rec) -> tuple[np.ndarray, InfoSet]:
    r = next(r for r in recs if int(r["phase"]) == Phase.DRAW and int(r["mask"]) != int(rec[0]["mask"]))
    return r, infoset(r, int(r["acting"]), RULES)


def test_a_good_decision_still_decides_and_is_deterministic(agent, decision):
    _, obs, masks, info = decision
    a = agent.act_batch(obs, masks, [info])
    assert masks[0, a[0]] and (agent.act_batch(obs, masks, [info]) == a).all()
    ints = masks.astype(np.int8)  # 0 / 1 integer masks (Gymnasium's) are masks
    assert (agent.act_batch(obs, ints, [info]) == a).all()


BATCHES = {
    # shapes: IndexError / AxisError inside
    "obs 1-d": (lambda o, m, i, r: (o[0], m, [i], None), "observations \\(B, D\\) and masks \\(B, 64\\)"),
    "masks 1-d": (lambda o, m, i, r: (o, m[0], [i], None), "observations \\(B, D\\) and masks \\(B, 64\\)"),
    "masks of 60": (lambda o, m, i, r: (o, m[:, :60], [i], None), "masks \\(B, 64\\)"),
    "rows differ": (lambda o, m, i, r: (np.repeat(o, 2, 0), m, [i, i], None), "for the same B rows"),
    # values: 0.5 and -1 were legal here, illegal or legal by the bots' reading
    "mask 0.5": (lambda o, m, i, r: (o, m * 0.5, [i], None), "masks hold 0 or 1"),
    "mask -1": (lambda o, m, i, r: (o, -m.astype(np.int64), [i], None), "masks hold 0 or 1"),
    # nothing legal: IndexError inside
    "all-zero mask": (lambda o, m, i, r: (o, np.zeros_like(m), [i], None), "row 0 has no legal action"),
    "all-zero mask, no infoset": (lambda o, m, i, r: (o, np.zeros_like(m), None, None), "row 0 has no legal action"),
    # infosets: IndexError, AttributeError, the helper's "waits: row 0: 8 cards", RuntimeError "refused in a world"
    "two infosets": (lambda o, m, i, r: (o, m, [i, i], None), "2 infosets for 1 rows"),
    "no infosets": (lambda o, m, i, r: (o, m, [], None), "0 infosets for 1 rows"),
    "another seat's infoset": (
        lambda o, m, i, r: (o, m, [infoset(r[0], (i.seat + 1) % 3, RULES)], None),
        "not the acting seat's information set of row 0",
    ),
    "odd actions": (lambda o, m, i, r: (o, np.eye(64, dtype=bool)[[63]], [i], None), "not the row's mask"),
    "another seat's obs": (
        lambda o, m, i, r: (observe_records(RULES, r, np.array([(i.seat + 1) % 3]))[0], m, [i], None),
        "obs row 0 is not the decision of infosets\\[0\\]",
    ),
    # the true records (diagnostics): IndexError for a bare record
    "a bare record": (lambda o, m, i, r: (o, m, None, r[0]), "records must be a 1-d array of 1 engine records"),
}


@pytest.mark.parametrize("case", list(BATCHES))
def test_a_bad_batch_is_one_line(agent, decision, case):
    rec, obs, masks, info = decision
    make, says = BATCHES[case]
    with pytest.raises(ValueError, match=says) as exc:
        agent.act_batch(*make(obs, masks, info, rec))
    one_line(exc)


def test_what_is_no_infoset_is_a_type_error(agent, decision):
    _, obs, masks, _ = decision
    for bad in ([None], [{"seat": 0}], 5):
        with pytest.raises(TypeError, match="InfoSet") as exc:
            agent.act_batch(obs, masks, bad)
        one_line(exc)


def test_an_infoset_of_another_state_is_refused(agent, decision, recs):
    """Its mask differs: RuntimeError 'candidate refused in a sampled world' before."""
    _, obs, masks, _ = decision
    _, other = _other_state(recs, decision[0])
    with pytest.raises(ValueError, match="not the row's mask") as exc:
        agent.act_batch(obs, masks, [other])
    one_line(exc)


def test_a_finished_game_is_refused(agent, recs):
    over = recs[-1:].copy()
    from meld8_env.engine.records import start_records, step_records

    over = start_records(RULES, np.array([5], np.uint64))
    greedy = load_agent("greedy", RULES)
    while int(over[0]["phase"]) != Phase.OVER:
        o, m = observe_records(RULES, over)
        step_records(RULES, over, greedy.act_batch(o, m))
    obs, masks = observe_records(RULES, over, np.array([0]))
    info = infoset(over[0], 0, RULES)
    for args in ((obs, masks, [info]), (obs, masks, None, over)):
        with pytest.raises(ValueError, match="no legal action") as exc:
            agent.act_batch(*args)
        one_line(exc)
    with pytest.raises(ValueError, match="no legal action"):
        agent.hint_values(obs[0], masks[0], info)
    live = np.eye(64, dtype=bool)[[0]]
    with pytest.raises(ValueError, match="records row 0 is a finished game"):
        agent.act_batch(obs, live, None, over)


# -- specs and the review ----------------------------------------------------------------------------------
def test_stages_over_worlds_says_stages_is_the_default():
    with pytest.raises(AgentLoadError, match=r"stages=2 \(the default\): each stage rolls out at least one world"):
        load_agent("search:worlds=1+margin=0", RULES)


@pytest.fixture(scope="module")
def bot_log(tmp_path_factory) -> str:
    from meld8_app.cli import main

    out = tmp_path_factory.mktemp("log")
    argv = ["tournament", "--agents", "greedy,defensive,random", "--boards", "1", "--seed", "5", "--out", str(out)]
    assert main(argv) == 0
    return str(out / "games.jsonl")


@pytest.mark.parametrize("spec", ["search:cheat=1", "search:ron=status", "search:worlds=8+ron=truth"])
def test_review_refuses_a_cheating_search_in_the_tournaments_words(bot_log, capsys, spec):
    """It was refused only at its first decision, after the replay was re-simulated, in words about
    act_batch(..., records=...)."""
    capsys.readouterr()
    err = one_line_error(["review", bot_log, "--seat", "0", "--game", "0", "--agent", spec, "--json"], capsys)
    assert "is a CHEATING diagnostic that decides from the true records, which a review never hands out" in err


@pytest.mark.parametrize("spec", ["search:prior=ppo:/models/a+b.zip", "search:worlds=8+me=ppo:runs/a,b.zip"])
def test_a_path_cut_at_an_option_separator_says_so(spec):
    """It said "search option 'b.zip': use key=value with key one of worlds, cands, ...", naming no path."""
    with pytest.raises(AgentLoadError, match=r"=ppo:\S*a is followed by 'b.zip', which has no '='") as exc:
        load_agent(spec, RULES)
    assert "a value (a checkpoint path) cannot hold one" in one_line(exc)
    with pytest.raises(AgentLoadError, match="wary option 'x': use key=value"):  # no path before it: as it was
        load_agent("wary:lam=1.5+x", RULES)


# -- the search's keyword options and checkpoint paths (red team, session 48b) --------------------------------------


def test_a_checkpoint_path_the_system_refuses_names_the_option():
    """A path part over 255 bytes: a raw OSError (File name too long) came out of pathlib, deep in the loader."""
    with pytest.raises(ValueError) as exc:
        load_agent("search:prior=ppo:" + "a" * 300 + ".zip", RULES)
    text = one_line(exc)
    assert "search option prior=ppo:aaa" in text and "File name too long" in text and "checkpoint" in text


@pytest.mark.parametrize(
    "options",
    [
        {"foo": 1},  # was ignored
        {"worlds": 2.5},  # was taken and played
        {"worlds": "8"},  # was taken as text
        {"worlds": None},  # a raw TypeError from int()
        {"margin": float("nan")},  # a raw ValueError: cannot convert float NaN to integer
        {"worlds": float("inf")},  # a raw OverflowError
        {"strat": True},  # a flag is 0 or 1, not a bool
        {"cheat": 1.0},
        {"opp": 3},
    ],
)
def test_keyword_options_are_checked_like_spec_options(options):
    from agents.search import SearchAgent

    with pytest.raises((TypeError, ValueError)) as exc:
        SearchAgent(RULES, 0, **options)
    text = one_line(exc)
    key = next(iter(options))
    assert f"search option {key}" in text.replace("'", "")
    if key == "foo":
        assert exc.type is ValueError and "worlds" in text
    else:
        assert exc.type is TypeError and ("an integer" in text or "a string" in text)


def test_keyword_options_of_the_right_types_still_work():
    from agents.search import SearchAgent

    a = SearchAgent(RULES, 0, worlds=np.int64(8), opp="greedy")
    assert a.opts["worlds"] == 8 and a.opts["opp"] == "greedy"


def test_load_search_takes_a_string():
    """An int raised AttributeError ('int' object has no attribute 'replace'), bytes a TypeError about str."""
    from agents.search import load_search

    for bad in (5, b"worlds=4"):
        with pytest.raises(TypeError) as exc:
            load_search(bad, RULES, 0)
        assert "search options must be a string" in one_line(exc)
    assert load_search("", RULES, 0).opts["worlds"] == 48
