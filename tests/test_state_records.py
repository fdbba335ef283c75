"""State as a value (issue 19 item 2): records started, stepped, checked and refreshed outside a FastBatch.

R1 (each of the 53 cards once), R10/R11/R19 (7 cards a seat, 8 for the seat that drew or called), R12 (no
Joker discarded), R22 (a claim window asks each eligible seat; an edited record re-asks them).
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from meld8_env.cards import card_str
from meld8_env.codes import Phase
from meld8_env.engine import _fast
from meld8_env.engine.conservation import card_problem
from meld8_env.engine.fast import STATE_DTYPE, FastBatch
from meld8_env.engine.records import (
    check_conservation,
    concat_records,
    observe_records,
    packed,
    put_records,
    refresh,
    start_records,
    step_records,
    take_records,
    waits_records,
)
from meld8_env.rules import RuleConfig
from training.bot_states import play_bot_states

RULES = {"3p": RuleConfig(), "2p": RuleConfig.two_player()}


def raw(r: np.ndarray) -> bytes:
    """The fields' bytes (not the struct padding, which numpy copies leave as they find it)."""
    return b"".join(np.ascontiguousarray(r[f]).tobytes() for f in STATE_DTYPE.names)


def diff_fields(a: np.ndarray, b: np.ndarray) -> list[str]:
    return [f for f in STATE_DTYPE.names if not np.array_equal(a[f], b[f])]


@pytest.fixture(scope="module", params=list(RULES))
def bot_states(request):
    rules = RULES[request.param]
    return rules, play_bot_states(rules, games=24, seed=11)


def test_start_records_match_fastbatch():
    rules = RULES["3p"]
    seeds = np.arange(5, dtype=np.uint64) * 977 + 3
    eng = FastBatch(5, rules)
    eng.reset(seeds)
    assert raw(start_records(rules, seeds)) == raw(eng.snapshot(slice(None)))


@pytest.mark.parametrize("n", [1, 3, 17])
def test_step_records_any_n_plays_like_fastbatch(n):
    """Random legal play on caller-owned records gives the FastBatch games byte for byte."""
    rules = RULES["3p"]
    seeds = np.arange(n, dtype=np.uint64) + 40
    eng = FastBatch(n, rules)
    eng.reset(seeds)
    recs = start_records(rules, seeds)
    rng = np.arange(n, dtype=np.uint64) + 5
    acts = np.zeros(n, np.int64)
    for _ in range(400):
        eng.random_legal(rng, acts)
        a = np.where(eng.over, -1, acts)
        assert not step_records(rules, recs, a).any()
        eng.step(a)
        assert raw(recs) == raw(eng.snapshot(slice(None)))
    obs, masks = observe_records(rules, recs, np.zeros(n, np.int8))
    obs2, masks2 = eng.observe(np.zeros(n, np.int8))
    assert (obs == obs2).all() and (masks == masks2).all()


def test_conservation_holds_on_bot_games(bot_states):
    rules, states = bot_states
    assert len(states) > 1000, len(states)
    check_conservation(states, rules)
    assert all(card_problem(r, rules) is None for r in states[::7])


def _first_wall_card(r) -> int:
    return int(r["wall"][int(r["wall_pos"])])


@pytest.mark.parametrize(
    "edit, expect",
    [
        ("dup", "hand and in the wall"),
        ("missing", "is nowhere"),
        ("joker_discard", "the Joker (JK) is in seat"),
        ("count", "holds 6 cards"),
        ("called_no_meld", "marked called"),
    ],
)
def test_conservation_errors_name_record_seat_and_card(edit, expect):
    rules = RULES["3p"]
    recs = start_records(rules, np.arange(4, dtype=np.uint64))
    r = recs[2]
    seat = 0 if int(r["current"]) != 0 else 1  # a seat that holds 7
    hand = int(r["hands"][seat])
    low = hand & -hand
    card = low.bit_length() - 1
    if edit == "dup":  # a wall card also in the seat's hand (and one of its own cards gone: the count holds)
        recs[2]["hands"][seat] = (hand & ~low) | (1 << _first_wall_card(r))
        msg_card = card_str(_first_wall_card(r))
    elif edit == "missing":
        recs[2]["hands"][seat] = hand & ~low
        recs[2]["hands"][seat] = int(recs[2]["hands"][seat])
        msg_card = card_str(card)
    elif edit == "joker_discard":
        recs[2]["ndisc"][seat] = 1
        recs[2]["discards"][seat][0] = 52
        msg_card = "JK"
    elif edit == "count":
        # move one card of the seat into the wall's dead part: every card still once, the count short
        recs[2]["hands"][seat] = hand & ~low
        recs[2]["wall"][int(r["wall_len"])] = card
        recs[2]["wall_len"] = int(r["wall_len"]) + 1
        msg_card = None
    else:
        recs[2]["ndisc"][seat] = 1
        recs[2]["discards"][seat][0] = card
        recs[2]["called"][seat] = 1
        recs[2]["hands"][seat] = hand & ~low
        msg_card = card_str(card)
    with pytest.raises(ValueError) as err:
        check_conservation(recs, rules)
    text = str(err.value)
    assert "\n" not in text and text.startswith("engine record 2: ") and expect in text, text
    if msg_card:
        assert msg_card in text
    with pytest.raises(ValueError, match="engine record 2"):
        step_records(rules, recs, np.full(4, -1, np.int64))
    eng = FastBatch(4, rules)
    before = raw(eng.snapshot(slice(None)))
    with pytest.raises(ValueError, match="engine record 2"):
        eng.restore(slice(None), recs)
    assert raw(eng.snapshot(slice(None))) == before  # nothing written


def _mutate(r, rng: np.random.Generator, P: int) -> None:
    kind = rng.integers(6)
    s = int(rng.integers(P))
    if kind == 0:  # flip a card bit in a hand or meld
        key = "hands" if rng.random() < 0.7 else "melds"
        r[key][s] = int(r[key][s]) ^ (1 << int(rng.integers(53)))
    elif kind == 1:  # overwrite a wall slot
        i = int(rng.integers(int(r["wall_pos"]), max(int(r["wall_len"]), int(r["wall_pos"]) + 1)))
        r["wall"][min(i, 52)] = int(rng.integers(53))
    elif kind == 2:  # swap a hand card with a wall card (cards conserved; caches may go stale)
        h = int(r["hands"][s])
        if h and r["wall_len"] > r["wall_pos"]:
            cards = [c for c in range(53) if h >> c & 1]
            c = int(rng.choice(cards))
            i = int(rng.integers(int(r["wall_pos"]), int(r["wall_len"])))
            w = int(r["wall"][i])
            r["hands"][s] = (h & ~(1 << c)) | (1 << w)
            r["wall"][i] = c
    elif kind == 3:  # one discard more or less
        r["ndisc"][s] = max(0, min(24, int(r["ndisc"][s]) + int(rng.choice([-1, 1]))))
    elif kind == 4:  # toggle a called mark
        r["called"][s] = int(r["called"][s]) ^ (1 << int(rng.integers(max(int(r["ndisc"][s]), 1))))
    else:  # the drawn card
        r["drawn"] = int(rng.integers(-1, 53))


def test_c_check_matches_python_twin_on_mutated_states(bot_states):
    """C (eng_check_cards) and the Python twin give the same reason on thousands of mutated records."""
    rules, states = bot_states
    rng = np.random.default_rng(5)
    recs = states[rng.permutation(len(states))[:3000]].copy()
    p = packed(rules)
    for i in range(len(recs)):
        for _ in range(int(rng.integers(1, 3))):
            _mutate(recs[i], rng, rules.num_players)
    seen_bad = 0
    for i in range(len(recs)):
        one = recs[i : i + 1]
        c = _fast.check_cards(one, p)
        py = card_problem(recs[i], rules)
        if py is not None:
            seen_bad += 1
            assert c is not None and c[1] == py, f"state {i}: C says {c}, Python says {py!r}"
        else:
            assert c is None or "stale" in c[1] or c[1].startswith("field "), f"state {i}: C says {c}, Python OK"
    assert seen_bad > len(recs) // 2


def _window_pairs(rules: RuleConfig, games: int, seed: int, limit: int = 300):
    """(record before the discard, the discard, record right after it in a claim window), random play."""
    recs = start_records(rules, np.arange(games, dtype=np.uint64) + seed)
    rng = np.arange(games, dtype=np.uint64) + seed * 7 + 1
    acts = np.zeros(games, np.int64)
    pairs = []
    while not (recs["phase"] == Phase.OVER).all() and len(pairs) < limit:
        _fast.random_legal(recs, rng, acts)
        a = np.where(recs["phase"] == Phase.OVER, -1, acts)
        before = recs.copy()
        step_records(rules, recs, a)
        opened = (recs["phase"] == Phase.CLAIM) & (before["phase"] != Phase.CLAIM)
        for i in np.flatnonzero(opened).tolist():
            pairs.append((before[i : i + 1].copy(), int(a[i]), recs[i : i + 1].copy()))
    return pairs


def _swap(r, seat: int, out_card: int, in_card: int) -> None:
    """Move ``out_card`` from ``seat``'s hand to where ``in_card`` lies in the undrawn wall, and back."""
    i = int(np.flatnonzero(r["wall"][0] == in_card)[0])
    r["wall"][0, i] = out_card
    r["hands"][0, seat] = (int(r["hands"][0, seat]) & ~(1 << out_card)) | (1 << in_card)


def _edits(before, window, rng: np.random.Generator):
    """A hidden-hand edit for a seat that did not discard: a random swap with the wall, or two cards of
    the claimed rank brought in from the wall (so the seat may now Pon)."""
    r = window[0]
    d, card = int(r["claim_discarder"]), int(r["claim_card"])
    wall = [int(c) for c in r["wall"][int(r["wall_pos"]) : int(r["wall_len"])]]
    if not wall:
        return
    for seat in range(3):
        if seat == d or not int(r["hands"][seat]):
            continue
        hand = [c for c in range(53) if int(r["hands"][seat]) >> c & 1]
        if rng.random() < 0.5:
            same_rank = [c for c in wall if c % 13 == card % 13 and c != 52][:2]
            outs = [c for c in hand if c % 13 != card % 13][: len(same_rank)]
            swaps = list(zip(outs, same_rank, strict=False))
        else:
            swaps = [(int(rng.choice(hand)), int(rng.choice(wall)))]
        yield seat, swaps


def test_refreshed_edit_plays_like_a_fresh_discard_and_unrefreshed_is_refused():
    """Edit a hidden hand during a claim window: the refreshed record equals the record the same discard
    makes from the edited hands, and plays on exactly like it (also when the edit leaves nobody able to claim:
    the next seat draws, or the final discard ends the round, R14); without refresh the record is refused
    whenever its cached window differs, and otherwise plays exactly like the fresh one too (R22)."""
    rules = RULES["3p"]
    rng = np.random.default_rng(3)
    pairs = _window_pairs(rules, games=10, seed=100)
    assert len(pairs) > 200
    refused = same = closed = 0
    for before, action, window in pairs:
        for seat, swaps in _edits(before, window, rng):
            if not swaps:
                continue
            b, w = before.copy(), window.copy()
            for out_card, in_card in swaps:
                _swap(b, seat, out_card, in_card)
                _swap(w, seat, out_card, in_card)
            refresh(b, rules)
            fresh = b.copy()
            step_records(rules, fresh, np.array([action]))
            edited = w.copy()
            refresh(w, rules)
            closed += int(w["phase"][0] != Phase.CLAIM)  # nobody may claim any more: the game went on
            _assert_same_play(rules, fresh, w, rng)
            try:
                check_conservation(edited, rules)
            except ValueError as exc:
                assert "stale" in str(exc) and "refresh" in str(exc)
                refused += 1
                continue
            same += 1
            _assert_same_play(rules, fresh, edited, rng)
    assert refused > 50 and same > 50 and closed > 5, (refused, same, closed)


def _assert_same_play(rules, a, b, rng) -> None:
    a, b = a.copy(), b.copy()
    seed = np.array([rng.integers(1, 2**63)], np.uint64)
    ra, rb = seed.copy(), seed.copy()
    act_a, act_b = np.zeros(1, np.int64), np.zeros(1, np.int64)
    for _ in range(40):
        for r in (a, b):
            # the engine reads no claim field outside a window, nor answer slots the window has not reached
            # (both keep whatever an earlier window left there)
            r["claim_resp"] = 0
            if r["phase"][0] != Phase.CLAIM:
                for f in ("claim_card", "claim_discarder", "claim_final", "claim_asked", "claim_opts", "claim_idx"):
                    r[f] = 0
            for i in range(int(r["claim_n"][0]), 2):  # window slots past the asked seats
                r["claim_asked"][0, i] = 0
                r["claim_opts"][0, i] = 0
        assert raw(a) == raw(b), diff_fields(a, b)
        if a["phase"][0] == Phase.OVER:
            return
        _fast.random_legal(a, ra, act_a)
        _fast.random_legal(b, rb, act_b)
        _fast.step(a, packed(rules), act_a, np.zeros(1, np.uint8))
        _fast.step(b, packed(rules), act_b, np.zeros(1, np.uint8))


def test_concat_records_keeps_the_dtype():
    rules = RULES["3p"]
    a = start_records(rules, np.arange(2, dtype=np.uint64))
    both = concat_records([a, a[:1]])
    assert both.dtype == STATE_DTYPE and len(both) == 3
    check_conservation(both, rules)


def test_take_and_put_records_copy_whole_records_as_numpy_indexing_does():
    """take_records / put_records move records as raw items (the fast path of the search's copies): the same
    fields as ``records[index]`` and ``records[index] = values`` for positions and masks; a non-record array or a
    non-contiguous view is refused in one line."""
    rules = RULES["3p"]
    a = start_records(rules, np.arange(6, dtype=np.uint64))
    for index in (np.array([4, 0, 4]), np.array([True, False, True, False, False, True]), np.zeros(0, np.int64)):
        got, want = take_records(a, index), a[index]
        assert got.dtype == STATE_DTYPE and got.flags.c_contiguous and len(got) == len(want)
        assert all(np.array_equal(got[f], want[f]) for f in STATE_DTYPE.names)
    b = a.copy()
    put_records(b, np.array([1, 3]), a[[5, 0]])
    want = a.copy()
    want[[1, 3]] = a[[5, 0]]
    assert all(np.array_equal(b[f], want[f]) for f in STATE_DTYPE.names)
    with pytest.raises(TypeError, match="take_records takes a 1-d array of engine records"):
        take_records(np.zeros(3), np.array([0]))
    with pytest.raises(ValueError, match="put_records: the records must be C-contiguous"):
        put_records(b, np.array([0, 1, 2]), a[::2])
    # a slice or a scalar as records[index] would be a view or one record, not a copy: refused
    for index in (slice(0, 2), 3, np.array([[0, 1]]), np.array([0.0, 1.0])):
        with pytest.raises(TypeError, match="take_records takes a 1-d integer or boolean index array"):
            take_records(a, index)


def test_concat_records_refuses_a_part_that_is_not_records():
    """A part of another dtype whose byte length happens to be a whole number of records would otherwise be
    reinterpreted as records (garbage): each part is checked before it is copied raw."""
    rules = RULES["3p"]
    a = start_records(rules, np.arange(2, dtype=np.uint64))
    record_bytes = np.zeros(STATE_DTYPE.itemsize, np.uint8)  # the bytes of one record, as plain bytes
    with pytest.raises(TypeError, match=r"concat_records \(part 1\) takes a 1-d array of engine records"):
        concat_records([a, record_bytes])
    packed_dtype = np.dtype(  # the fields without the padding: 360 of them are the bytes of 353 whole records
        {"names": list(STATE_DTYPE.names), "formats": [STATE_DTYPE.fields[n][0] for n in STATE_DTYPE.names]}
    )
    with pytest.raises(TypeError, match=r"concat_records \(part 0\)"):
        concat_records([np.zeros(STATE_DTYPE.itemsize, packed_dtype)])


def test_records_refuse_wrong_dtype_in_one_line():
    rules = RULES["3p"]
    with pytest.raises(TypeError, match="dtype STATE_DTYPE"):
        step_records(rules, np.zeros(3), np.zeros(3, np.int64))
    recs = start_records(rules, np.arange(2, dtype=np.uint64))
    recs["phase"][1] = 9
    with pytest.raises(ValueError, match="engine record 1: field 'phase' out of range"):
        refresh(recs, rules)


# -- fields the C engine indexes with (red team, session 32: each of these read or wrote outside a record) -------
def _live_records(n: int = 2) -> np.ndarray:
    return start_records(RULES["3p"], np.arange(1, n + 1, dtype=np.uint64))


@pytest.mark.parametrize(
    "field, value",
    [("chiicha", -128), ("chiicha", 3), ("current", -1), ("scores", 2**31 - 1000), ("scores", -(2**31) + 5)],
)
def test_a_record_field_out_of_range_is_refused_on_every_path(field, value):
    from meld8_env.engine.bots import play_games_raw, policy_act_raw, rollout_raw
    from meld8_env.policies import policy_act
    from meld8_env.rollout import rollout

    rules = RULES["3p"]
    P = rules.num_players
    weights = np.zeros((1, FastBatch(1, rules).obs_size), np.uint64)
    i8, i32 = partial(np.zeros, dtype=np.int8), partial(np.zeros, dtype=np.int32)  # policy code 0: greedy
    u64 = partial(np.ones, dtype=np.uint64)
    bad = _live_records()
    if field == "scores":
        bad[field][0, 0] = value
    else:
        bad[field][0] = value
    says = f"engine record 0: field '{field}' out of range"
    calls = {
        "restore": lambda r: FastBatch(2, rules).restore(slice(None), r),
        "step_records": lambda r: step_records(rules, r, np.full(2, -1)),
        "refresh": lambda r: refresh(r, rules),
        "waits_records": lambda r: waits_records(rules, r),
        "rollout": lambda r: rollout(rules, r, ["greedy"] * 3, np.array([1, 2], np.uint64), until="game"),
        "policy_act": lambda r: policy_act(rules, r, np.zeros(2, np.int8), np.ones(2, np.uint64)),
        # the C entry points themselves check the records, not only the wrappers above them
        "policy_act_raw": lambda r: policy_act_raw(r, packed(rules), i8(2), u64(2), np.empty(2, np.int64)),
        "rollout_raw": lambda r: rollout_raw(r, packed(rules), i8((2, P)), u64(2), 1, 10_000, i32(2), i32((2, P)), 1),
        "play_games_raw": lambda r: play_games_raw(
            r, packed(rules), i8(1), u64(1), weights, i8((2, P)), np.zeros((2, 4000), np.uint8), i32(2), i32((2, 6, P))
        ),
    }
    for call in calls.values():
        with pytest.raises(ValueError, match=says):
            call(bad.copy())
        call(_live_records())  # the same call on honest records works


@pytest.mark.parametrize("rules_name, seat", [("3p", 3), ("3p", 100), ("3p", 200), ("3p", -2), ("2p", 2)])
def test_an_observed_seat_out_of_range_is_refused(rules_name, seat):
    rules = RULES[rules_name]
    fb = FastBatch(2, rules)
    fb.reset(np.array([1, 2], np.uint64))
    with pytest.raises(ValueError, match=r"seats must be -1 \(the acting seat\) or 0\.\.\d"):
        fb.observe(np.array([seat, 0]))  # 200 was read as int8 -56: the acting seat
    if -128 <= seat < 128:  # the C boundary itself, for every buffer path (seat 100 read 800 bytes past a record)
        obs, masks = np.zeros((2, fb.obs_size), np.uint8), np.zeros((2, 64), np.uint8)
        with pytest.raises(ValueError, match=r"seats: row 0 is -?\d+; a seat is -1"):
            fb.observe_into(np.array([seat, 0], np.int8), obs, masks)


def test_c_range_check_matches_its_numpy_twin_on_fields_out_of_range(bot_states):
    """``_state.c: eng_check_ranges`` and ``fast.check_records`` refuse the same records, naming the same field."""
    import re

    from meld8_env.engine.fast import check_records

    rules, states = bot_states
    rng = np.random.default_rng(32)
    P, p = rules.num_players, packed(rules)
    fields = {"chiicha": (-128, 127), "current": (-128, 127), "acting": (-128, 127), "round": (-128, 127),
              "drawn": (-128, 127), "scores": (-(2**31), 2**31 - 1)}  # fmt: skip
    refused = 0
    for i in rng.permutation(len(states))[:2000]:
        one = states[i : i + 1].copy()
        name = list(fields)[int(rng.integers(len(fields)))]
        lo, hi = fields[name]
        value = int(rng.integers(lo, hi, endpoint=True)) if rng.random() < 0.5 else int(rng.integers(-3, P + 3))
        if name == "scores":
            one[name][0, int(rng.integers(P))] = value // 1000 if rng.random() < 0.5 else value
        else:
            one[name][0] = value
        c = _fast.check_cards(one, p, False)
        try:
            check_records(one, rules)
            py = None
        except ValueError as exc:
            py = re.search(r"field '(\w+)'", str(exc)).group(1)
        assert (c is None) == (py is None), f"state {i}, {name}={value}: C {c}, numpy {py}"
        if c is not None:
            refused += 1
            assert f"field '{py}'" in c[1], (c, py)
    assert refused > 500
