"""The CHEATING ``oracle`` policy (agents/oracle.py, C twin ``bot_oracle``) as an agent and a diagnostic.

Its C-vs-Python twin test is in tests/test_cbots.py (``check_oracle``); here: what it promises (R29-R33: it
never discards a card another seat would be offered Ron on while a safe discard exists), that it refuses to
play without the true records, and that the harness which passes records seats it.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from agents.oracle import OracleAgent, ron_discards
from meld8_env.actions import PASS, RON
from meld8_env.cards import mask_str
from meld8_env.codes import Phase, Result
from meld8_env.engine.fast import FastBatch
from meld8_env.engine.records import observe_records, step_records
from meld8_env.engine.reference import Game
from meld8_env.policies import POLICY, policy_act
from meld8_env.rules import RuleConfig
from tests.test_cbots import collect_states
from training.search_eval import agent_placements, play_duplicate

RULES = RuleConfig()


def test_oracle_never_deals_in_while_a_safe_discard_exists():
    recs, _, _ = collect_states(RULES, 2000, seed=31)
    obs, masks = observe_records(RULES, recs)
    acts = OracleAgent(RULES).act_batch(obs, masks, records=recs)
    unsafe = ron_discards(RULES, recs)
    legal = np.array([int(m) & ((1 << 52) - 1) for m in recs["mask"]], object)
    checked = 0
    for i in np.flatnonzero(unsafe):
        if masks[i, PASS] or acts[i] >= 52:
            continue
        safe = legal[i] & ~int(unsafe[i])
        if safe:
            assert not int(unsafe[i]) >> int(acts[i]) & 1, f"state {i}: discarded a card another seat can Ron"
            checked += 1
        after = recs[i : i + 1].copy()  # the engine's own word: no claim window offers Ron on the discard
        assert not step_records(RULES, after, acts[i : i + 1])[0]
        if safe:
            n = int(after["claim_n"][0])
            offered = after["phase"][0] == int(Phase.CLAIM) and any(
                int(o) >> RON & 1 for o in after["claim_opts"][0, :n]
            )
            assert not offered, f"state {i}: the engine offers Ron on the oracle's discard {acts[i]}"
    assert checked >= 20, f"only {checked} states had a card to avoid"


def test_oracle_avoids_a_ron_on_the_final_discard():
    """R14: after the last wall card only a Ron can claim the final discard, and if nobody does the round is
    a draw. Built from real bot games (1 state in ~150 is a final discard): in each one where some legal
    discard would be Ron'd and another would not, the oracle's discard is safe, and stepping it ends the round
    as a draw (no claim window opens). (On these states `greedy` deals in on 4, so the test can fail.)"""
    recs, _, _ = collect_states(RULES, 30000, seed=77, illegal_rate=0.0)
    final = np.flatnonzero((recs["wall_pos"] >= recs["wall_len"]) & (recs["phase"] == int(Phase.DRAW)))
    recs = np.ascontiguousarray(recs[final])
    obs, masks = observe_records(RULES, recs)
    acts = OracleAgent(RULES).act_batch(obs, masks, records=recs)
    unsafe = ron_discards(RULES, recs)
    scenarios = 0
    for i in range(len(recs)):
        legal = int(recs["mask"][i]) & ((1 << 52) - 1)
        if not int(unsafe[i]) or not legal & ~int(unsafe[i]) or acts[i] >= 52:
            continue
        scenarios += 1
        assert not int(unsafe[i]) >> int(acts[i]) & 1, f"final discard {i}: the oracle discarded a Ron card"
        after = recs[i : i + 1].copy()
        assert not step_records(RULES, after, acts[i : i + 1])[0]
        # only a Ron could claim it (R14, R18) and none is offered: no claim window, the round is drawn
        assert after["phase"][0] != int(Phase.CLAIM), f"final discard {i}: a claim window opened on a safe card"
        assert after["result"][0] == int(Result.DRAW), f"final discard {i}: the round did not end in a draw"
    assert scenarios >= 20, f"only {scenarios} final discards with a card to avoid"


def _reference_ron_discards(game: Game) -> int:
    """The legal discards after which the readable reference engine asks some other seat with Ron among its
    options (R29-R33 as engine/reference.py writes them): independent of the C engine ``ron_discards`` steps."""
    out = 0
    for card in (a for a in game.legal_actions() if a < 52):
        after = copy.deepcopy(game)
        after.step(card)
        if after.claim is not None and any(RON in opts for opts in after.claim.options.values()):
            out |= 1 << card
    return out


@pytest.mark.parametrize("rules", [RULES, RuleConfig.two_player()], ids=["3p", "2p"])
def test_oracle_predicate_equals_the_reference_engine(rules):
    """The oracle's "would be offered Ron" (``ron_discards``, on the C engine's records) equals the reference
    engine's claim window at every discard of 8 whole games played by the C oracle and greedy in lockstep on
    both engines; a mismatch names the game, the step and the state in R4 notation."""
    compared = unsafe_seen = 0
    for seed in range(8):
        ref, fast = Game(rules, seed=seed), FastBatch(1, rules)
        fast.reset(np.array([seed], np.uint64))
        pols = [POLICY["oracle"] if s % 2 == seed % 2 else POLICY["greedy"] for s in range(rules.num_players)]
        codes = np.array(pols, np.int8)
        bot_rng = np.array([seed], np.uint64)
        step = 0
        while not ref.over:
            rec = fast.snapshot(slice(None))
            if ref.phase == Phase.DRAW or ref.phase == Phase.CALL_DISCARD:
                want = _reference_ron_discards(ref)
                got = int(ron_discards(rules, rec)[0])
                assert got == want, f"game {seed} step {step}: C {mask_str(got)} reference {mask_str(want)}; {ref!r}"
                compared += 1
                unsafe_seen += bool(want)
            action = int(policy_act(rules, rec, codes[[max(int(rec["acting"][0]), 0)]], bot_rng)[0])
            ref.step(action)
            fast.step(np.array([action]))
            step += 1
    assert compared > 500 and unsafe_seen >= 20, (compared, unsafe_seen)


def test_oracle_agent_refuses_without_the_true_records():
    recs, _, _ = collect_states(RULES, 64, seed=3)
    obs, masks = observe_records(RULES, recs)
    with pytest.raises(ValueError, match="needs the true records"):
        OracleAgent(RULES).act_batch(obs, masks)


def test_search_eval_seats_the_oracle_and_it_places_first_on_average():
    """The harness hands it the records (``wants_records``); on 8 fixed boards (48 games) perfect defense
    places far better than the bots (1.67 in 5,004 games, README "Search and belief"), so a mean below 2.0
    here is a loose bar."""
    res = play_duplicate(["agents.oracle:OracleAgent", "defensive", "greedy"], boards=8, seed=4242, rules=RULES)
    mine = agent_placements(res, 0)
    assert len(mine) == 48 and mine.mean() < 2.0
    assert res["decisions"][0] > 0


def test_search_eval_writes_board_means_that_pair_with_a_tournament_of_the_same_seed(tmp_path, capsys):
    """``--out`` holds each agent's mean placement per board (its seatings, in board order), the unit that
    ``bench/paired_logs.py`` pairs; with deterministic bots the same boards in ``meld8 tournament`` give the same
    board means, so a pairing of the two harnesses reads exactly 0. It shows a progress bar of the games on stderr."""
    import json
    import sys
    from pathlib import Path

    from training.search_eval import main
    from training.tournament import TournamentConfig, run

    main(["--agents", "greedy,defensive,wary", "--boards", "3", "--seed", "5", "--out", str(tmp_path / "e.json")])
    rows = {r["agent"]: r for r in json.loads((tmp_path / "e.json").read_text())["rows"]}
    for r in rows.values():
        assert len(r["board_means"]) == 3 and abs(np.mean(r["board_means"]) - r["mean"]) < 1e-6
    run(
        TournamentConfig(
            ["greedy", "defensive", "wary"], boards=3, seed=5, out=str(tmp_path / "t"), progress=False, chart=False
        )
    )
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from paired_logs import board_means

    for agent in ("greedy", "defensive", "wary"):
        a, b = board_means(str(tmp_path / "t" / "games.jsonl"), agent), board_means(str(tmp_path / "e.json"), agent)
        assert a.keys() == b.keys() and all(a[k][0] == b[k][0] and abs(a[k][1] - b[k][1]) < 1e-6 for k in a)
    assert "18/18" in capsys.readouterr().err  # its progress bar counted every game (3 boards x 6 seatings) over
    # --board-offset 2 plays only the third board: it pairs with the tournament's board 2 and nothing else
    main(["--agents", "greedy,defensive,wary", "--boards", "1", "--board-offset", "2", "--seed", "5", "--no-progress",
          "--out", str(tmp_path / "o.json")])  # fmt: skip
    assert capsys.readouterr().err == ""
    t = board_means(str(tmp_path / "t" / "games.jsonl"), "wary")
    o = board_means(str(tmp_path / "o.json"), "wary")
    assert list(o) == [2] and o[2][0] == t[2][0] and abs(o[2][1] - t[2][1]) < 1e-6
    with pytest.raises(SystemExit):
        main(["--agents", "greedy,defensive,wary", "--board-offset", "-1"])
    assert "--board-offset >= 0" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a folder that does not exist: refused before any game, nothing written
        main(["--agents", "greedy,defensive,wary", "--out", str(tmp_path / "no" / "x.json")])
    assert "give a file path in an existing folder" in capsys.readouterr().err and not (tmp_path / "no").exists()


# ---------------------------------------------------------------------------------------------- wary (honest)
def test_wary_is_greedy_at_lam_zero_and_avoids_risk_above_it():
    """``wary:lam=0`` decides exactly like ``greedy``; with a large ``lam`` its discards carry less of the wait
    model's risk than greedy's (the rule it states), reading the information sets only."""
    from agents import search_backend as sb
    from agents.registry import AgentLoadError, load_agent
    from agents.wary import deal_in_risk

    recs, _, _ = collect_states(RULES, 600, seed=33)
    obs, masks = observe_records(RULES, recs)
    infos = [sb.infoset_of(r, int(r["acting"]), RULES) for r in recs]
    greedy = load_agent("greedy", RULES).act_batch(obs, masks)
    np.testing.assert_array_equal(load_agent("wary:lam=0", RULES).act_batch(obs, masks, infosets=infos), greedy)
    wary = load_agent("wary:lam=100", RULES).act_batch(obs, masks, infosets=infos)
    disc = np.flatnonzero((greedy < 52) & (wary < 52) & (greedy != wary))
    assert disc.size >= 20
    r_g = np.array([deal_in_risk(infos[i], greedy[i : i + 1])[0] for i in disc])
    r_w = np.array([deal_in_risk(infos[i], wary[i : i + 1])[0] for i in disc])
    assert (r_w <= r_g + 1e-12).all() and r_w.mean() < r_g.mean()
    a = load_agent("wary", RULES)
    np.testing.assert_array_equal(a.act_batch(obs[:8], masks[:8]), greedy[:8])  # no information sets: greedy
    assert a.fallback_decisions == 8
    for bad, why in [
        ("wary:lam=x", "give a finite number"),
        ("wary:lamb=3", "key one of lam"),
        ("wary:lam=-1", "0..1000"),
    ]:
        with pytest.raises(AgentLoadError, match=why):
            load_agent(bad, RULES)


@pytest.mark.parametrize("spec", ["agents.oracle:OracleAgent", "search:cheat=1+worlds=2"])
def test_a_tournament_refuses_a_cheating_agent_before_writing_anything(spec, tmp_path):
    from training.tournament import TournamentError, run
    from training.tournament_config import TournamentConfig

    out = tmp_path / "t"
    with pytest.raises(TournamentError, match="CHEATING diagnostic"):
        run(TournamentConfig(agents=[spec, "defensive", "greedy"], boards=1, seed=1, workers=1, out=str(out)))
    assert not out.exists()
