"""The browser table's server side, without a browser: the reducer against the engine, the live game's
checks, the review, tournament games re-created, and the app's routes and websocket (Starlette's
TestClient: the real app, in process)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from meld8_app.web.review import format_review, review
from meld8_app.web.session import LiveGame, PlayError, replay_frames
from meld8_app.web.tableview import SeatView, merge
from meld8_env.cards import parse_cards
from meld8_env.protocol import GameStreams
from meld8_env.replay import ReplayError, open_game, save_replay
from meld8_env.rules import RuleConfig

starlette = pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")


def _mask(cards: list[str]) -> int:
    return sum(1 << c for c in parse_cards(" ".join(cards))) if cards else 0


def _random_game(seed: int, rules: RuleConfig) -> list[int]:
    rng = random.Random(seed)
    g = GameStreams(rules, seed=seed)
    while (p := g.pending()) is not None:
        g.step(rng.choice([a["id"] for a in p[1]["actions"]]))
    return g.answers


SHORT = RuleConfig(max_replays=1)  # random play rarely wins: capped replays keep games short
SHORT_2P = RuleConfig.from_dict({**RuleConfig.two_player().to_dict(), "max_replays": 1})


@pytest.mark.parametrize("rules", [SHORT, SHORT_2P], ids=["3p", "2p"])
def test_reduced_views_match_the_engine_at_every_action(rules):
    """Each seat's view, folded from its events alone, holds exactly the cards the engine says it holds."""
    from meld8_env.engine.fast import FastBatch

    for seed in range(3):
        actions = _random_game(seed, rules)
        frames = [f for f in replay_frames(rules, seed, actions) if not f.get("result")]  # one per action
        eng = FastBatch(1, rules)
        eng.reset(np.array([seed], np.uint64))
        assert len(frames) == len(actions) + 1
        for k, frame in enumerate(frames):
            rec = eng.record(0)
            if frame["game_end"] is None and frame["hand"] == int(rec["deals"]):
                for s in range(rules.num_players):
                    held = frame["hands"][str(s)] + ([frame["drawn"][str(s)]] if str(s) in frame["drawn"] else [])
                    assert _mask(held) == int(rec["hands"][s]), (seed, k, s)
                    assert _mask(frame["melds"][s]) == int(rec["melds"][s])
            if k < len(actions):
                eng.step(np.array([actions[k]], np.int64))
        placements = [int(x) for x in eng.record(0)["placements"][: rules.num_players]]
        assert frames[-1]["game_end"]["placements"] == placements


def test_a_seat_view_speaks_of_your_discard_and_knows_the_rounds():
    """A Ron on the human's discard reads "Ron on your 2♥" (not "you's"); an opponent's, "b's"; the view knows how
    many rounds the game has (the header's "Round 2 of 6")."""
    rules = RuleConfig(max_replays=1)
    seen: set[str] = set()
    for seed in range(40):
        g = GameStreams(rules, seed=seed)
        rng = random.Random(seed)
        while (p := g.pending()) is not None:
            ids = [a["id"] for a in p[1]["actions"]]
            g.step(52 if 52 in ids else 53 if 53 in ids else rng.choice(ids))  # every win taken: Rons come often
        v = SeatView(0, names=["you", "a", "b"])
        said = []
        for ev in g.streams[0]:
            v.apply(ev)
            said.append(v.state["last"])
        assert v.state["rounds"] == rules.rounds
        rons = [line for line in said if "by Ron on" in line]
        assert not any("you's" in line for line in rons), rons
        seen |= {"your" for line in rons if "by Ron on your " in line} | {"b" for line in rons if "Ron on b's " in line}
        if seen == {"your", "b"}:
            break
    assert seen == {"your", "b"}, seen


def test_a_seat_view_never_holds_other_hands():
    g = GameStreams(seed=5)
    v = SeatView(1)
    rng = random.Random(5)
    while (p := g.pending()) is not None:
        g.step(rng.choice([a["id"] for a in p[1]["actions"]]))
    for ev in g.streams[1]:
        v.apply(ev)
        assert set(v.state["hands"]) <= {"1"} and set(v.state["drawn"]) <= {"1"}
    assert merge([v])["seat"] is None


def test_live_game_refuses_bad_moves_with_clear_messages(tmp_path):
    g = LiveGame(["greedy", "random"], seat=2, seed=9, replay_dir=tmp_path)
    st = g.state()
    req = st["request"]
    assert req is not None and st["seat"] == 2 and st["names"][2] == "you"
    illegal = next(a for a in range(64) if a not in {x["id"] for x in req["actions"]})
    with pytest.raises(PlayError, match="legal:"):
        g.play(illegal, st["seq"])
    with pytest.raises(PlayError, match="stale move"):
        g.play(req["actions"][0]["id"], st["seq"] - 1)
    with pytest.raises(PlayError, match="unknown action name"):
        g.play("discard the moon", st["seq"])
    assert g.state()["seq"] == st["seq"]  # nothing moved
    while not g.over:  # by name, to the end
        st = g.state()
        g.play(st["request"]["actions"][-1]["name"], st["seq"])
    assert g.state()["game_end"] is not None
    with pytest.raises(PlayError, match="game is over"):
        g.play(0)
    saved = g.state()["replay_file"]
    doc = open_game(saved)
    assert doc["actions"] == g.actions
    g.close()


def test_seq_counts_only_the_humans_moves_so_no_hidden_claim_answer_shows():
    """Leak audit, session 36: ``seq`` was the count of every engine step, the passes of seats asked in a claim
    window included; two games alike in everything the human sees had different seqs (R22). It is now the human's
    own move count: the same whatever the other seats were asked or answered."""
    for seed in (3, 9, 21):
        g = LiveGame(["greedy", "greedy"], seat=0, seed=seed)
        moves = 0
        while not g.over and moves < 40:
            st = g.state()
            assert st["seq"] == moves, (seed, moves, st["seq"], len(g.actions))
            g.play(st["request"]["actions"][0]["id"], st["seq"])
            moves += 1
        assert len(g.actions) > moves  # the other seats played, and passed, in between: none of it counted


def test_bad_seat_or_agents_are_refused():
    with pytest.raises(PlayError, match="seat must be"):
        LiveGame(["greedy"], seat=3)
    with pytest.raises(PlayError, match="name 2 agents"):
        LiveGame(["greedy", "random", "random"])


def test_review_of_an_agent_against_itself_agrees_everywhere(tmp_path):
    rules = RuleConfig()
    g = LiveGame(["greedy", "greedy"], seat=0, seed=2, rules=rules)
    from agents.registry import load_agent

    me = load_agent("greedy", rules)
    while not g.over:  # seat 0 plays greedy's own choices
        obs, masks = g.vec.observation, g.vec.action_mask
        g.play(int(me.act_batch(obs, masks)[0]), g.state()["seq"])
    doc = review(rules, 2, g.actions, seat=0, agent="greedy")
    s = doc["summary"]
    assert s["decisions"] > 10 and s["agreement"] == 1.0 and s["flagged"] == 0
    other = review(rules, 2, g.actions, seat=0, agent="random")
    assert other["summary"]["agreement"] < 1.0 and other["summary"]["flagged"] > 0
    discard = next(d for d in doc["decisions"] if d["discards"])
    assert {"card", "distance", "acceptance", "danger"} <= set(discard["discards"][0])
    assert len(discard["discards"][0]["danger"]) == 2  # one number per opponent


def test_review_by_an_information_set_agent_that_keeps_no_values():
    """``wary`` reads information sets as the search does, but keeps no per-candidate values: it crashed the
    review (red team, session 33). Its choices are the hint: greedy's offense, so it agrees with a greedy seat
    on most decisions, not all (its defense differs)."""
    from agents.registry import load_agent

    rules = RuleConfig()
    g = LiveGame(["greedy", "greedy"], seat=0, seed=3, rules=rules)
    me = load_agent("greedy", rules)
    while not g.over:
        g.play(int(me.act_batch(g.vec.observation, g.vec.action_mask)[0]), g.state()["seq"])
    doc = review(rules, 3, g.actions, seat=0, agent="wary")
    assert doc["summary"]["decisions"] > 10 and 0.5 < doc["summary"]["agreement"] < 1.0
    assert all(o["p"] is None and "value" not in o for d in doc["decisions"] for o in d["options"])
    # the text names its choice and ranks nothing: three legal moves in id order read as its top choices
    flagged = format_review(doc).splitlines()[1:]
    assert flagged and all(line.endswith(d["reference"]["name"]) for line, d in
                           zip(flagged, [d for d in doc["decisions"] if d["flagged"]], strict=True))  # fmt: skip
    assert not any("[" in line for line in flagged)


def test_review_gives_policy_probabilities():
    actions = _random_game(1, SHORT)
    doc = review(SHORT, 1, actions, seat=1, agent="ppo", threshold=0.5)
    d = doc["decisions"][0]
    assert abs(sum(o["p"] for o in d["options"]) - 1.0) < 1e-4
    assert d["flagged"] == (d["deviation"] > 0.5)


def test_review_defaults_flag_a_search_by_placements_and_a_policy_by_probability():
    """Helper walkthrough, session 46: the one default threshold, 0.5, is a probability; a search's deviations are
    placements (gaps of about 0.05), so a search review never flagged anything. Each scale has its default now."""
    actions = _random_game(1, SHORT)
    doc = review(SHORT, 1, actions, seat=1, agent="search:worlds=4+extend=0+stages=1+leaf=points")
    assert doc["threshold"] is None and doc["thresholds"] == {"probability": 0.5, "value": 0.05}
    valued = [d for d in doc["decisions"] if any("value" in o for o in d["options"])]
    assert valued, "no decision was searched"
    for d in doc["decisions"]:
        limit = 0.05 if d in valued else 0.5
        assert d["flagged"] == (d["deviation"] > limit), d
    assert "flagged (deviation > 0.5 probability, or 0.05 placements of a search's values)" in format_review(doc)
    given = review(SHORT, 1, actions, seat=1, agent="search:worlds=4+extend=0+stages=1+leaf=points", threshold=0.2)
    assert all(d["flagged"] == (d["deviation"] > 0.2) for d in given["decisions"])
    assert "flagged (deviation > 0.2)" in format_review(given)


def test_tournament_games_re_create_and_open(tmp_path):
    from training.tournament import TournamentConfig, run

    run(TournamentConfig(agents=["greedy", "defensive", "random"], boards=2, out=str(tmp_path / "t"), progress=False,
                         chart=False))  # fmt: skip
    log = tmp_path / "t" / "games.jsonl"
    for k in range(12):
        doc = open_game(log, k)  # re-simulated and checked against the logged result
        assert len(doc["names"]) == 3 and set(doc["names"]) == {"greedy", "defensive", "random"}
    with pytest.raises(ReplayError, match="choose one with --game 0..11"):
        open_game(log)
    with pytest.raises(ReplayError, match="--game must be 0..11"):
        open_game(log, 12)
    one = save_replay(tmp_path / "r.json", SHORT, 3, _random_game(3, SHORT))
    with pytest.raises(ReplayError, match="single replay"):
        open_game(one, 0)


# -- the app ----------------------------------------------------------------------------------------
def _client(mode="play", **kw):
    from starlette.testclient import TestClient

    from meld8_app.web.app import create_app

    return TestClient(create_app(mode, hosts=("testserver",), **kw))  # TestClient's Host


def test_websocket_play_errors_resume_and_new_game():
    rules = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1)  # played to its end below
    client = _client(new_game=lambda: LiveGame(["greedy", "random"], seat=0, seed=4, rules=rules))
    with client.websocket_connect("/ws/play") as ws:
        st = ws.receive_json()["state"]
        ws.send_text("not json")
        assert ws.receive_json() == {"type": "error", "message": "not JSON"}
        # a key given twice is refused, not read as its last value (red team, session 36)
        first = st["request"]["actions"][0]["id"]
        ws.send_text(f'{{"action": {first}, "action": {first}, "seq": {st["seq"]}}}')
        err = ws.receive_json()
        assert err["type"] == "error" and err["message"].startswith("the key 'action' is given twice"), err
        illegal = next(a for a in range(64) if a not in {x["id"] for x in st["request"]["actions"]})
        ws.send_json({"action": illegal, "seq": st["seq"]})
        err = ws.receive_json()
        assert err["type"] == "error" and "legal:" in err["message"]
        assert ws.receive_json()["state"]["seq"] == st["seq"]
        ws.send_json({"action": st["request"]["actions"][0]["id"], "seq": st["seq"]})
        moved = ws.receive_json()["state"]
        assert moved["seq"] > st["seq"]
        ws.send_json({"action": moved["request"]["actions"][0]["id"], "seq": st["seq"]})  # an old click
        assert "stale move" in ws.receive_json()["message"]
        ws.receive_json()
        ws.send_json({"what": 1})
        assert ws.receive_json()["type"] == "error"
        ws.receive_json()
    with client.websocket_connect("/ws/play") as ws:  # the tab closed and reopened: the same game
        st = ws.receive_json()["state"]
        assert st["seq"] == moved["seq"]
        ws.send_json({"new_game": True})  # not while the game is on: it would be lost (no replay of half a game)
        err = ws.receive_json()
        assert err["type"] == "error" and err["message"].startswith("the game is not over"), err
        kept = ws.receive_json()["state"]
        assert (kept["game_id"], kept["seq"]) == (st["game_id"], st["seq"])
        while st["request"] is not None:  # to its end: then new game
            ws.send_json({"action": st["request"]["actions"][0]["id"], "seq": st["seq"], "game_id": st["game_id"]})
            st = ws.receive_json()["state"]
        ws.send_json({"new_game": True})
        fresh = ws.receive_json()["state"]  # new_game() made another game (the factory's); its seed stays hidden
        assert fresh["seq"] < st["seq"] and fresh["seed"] is None and fresh["game_id"] != st["game_id"]


def test_routes_answer_json_errors_not_tracebacks():
    client = _client()
    assert client.get("/api/config").json() == {"mode": "play"}
    r = client.get("/api/replay")
    assert r.status_code == 404 and "meld8 view" in r.json()["error"]
    r = client.get("/no/such/page")
    assert r.status_code == 404 and "error" in r.json()
    assert "<script" in client.get("/").text and client.get("/static/app.js").status_code == 200
    view = _client("view", replay={"frames": [], "names": []})
    with view.websocket_connect("/ws/play") as ws:
        assert "meld8 play" in ws.receive_json()["message"]


def test_the_page_needs_nothing_from_the_network():
    from pathlib import Path

    static = Path(__file__).resolve().parents[1] / "meld8_app" / "web" / "static"
    for f in static.iterdir():
        text = f.read_text()
        assert "http://" not in text.replace("http://${", "") and "https://" not in text, f.name
    json.dumps(replay_frames(SHORT, 1, _random_game(1, SHORT)))  # frames are JSON


# -- the commands -----------------------------------------------------------------------------------
def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serves(argv: list[str], want_mode: str) -> dict:
    """Start ``meld8 ARGV --no-browser --port P``, read /api/config, stop it (SIGINT, like Ctrl-C)."""
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "meld8_app.cli", *argv, "--no-browser", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        link = proc.stdout.readline()  # "meld8: the table is at http://127.0.0.1:P/?token=T ..."
        assert f"127.0.0.1:{port}/?token=" in link, link
        token = link.split("?token=")[1].split()[0]
        end = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config?token={token}", timeout=2) as r:
                    config = json.loads(r.read())
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()[1]
                assert time.monotonic() < end, "the server did not come up"
                time.sleep(0.2)
        assert config["mode"] == want_mode
        api = {"view": "/api/replay", "review": "/api/review", "play": "/"}[want_mode]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{api}?token={token}", timeout=10) as r:
            body = r.read()
        return json.loads(body) if want_mode != "play" else {"page": body.decode()}
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert "Traceback" not in err, err
        assert "Traceback" not in out


def test_play_view_and_review_commands_serve(tmp_path):
    import subprocess
    import sys

    replay = save_replay(tmp_path / "r.json", SHORT, 3, _random_game(3, SHORT))
    page = _serves(["play", "--agents", "random", "--seed", "1", "--replays", str(tmp_path)], "play")["page"]
    assert "<script" in page
    data = _serves(["view", str(replay)], "view")
    assert len([f for f in data["frames"] if not f.get("result")]) == len(json.loads(replay.read_text())["actions"]) + 1
    rev = _serves(["review", str(replay), "--seat", "1", "--agent", "greedy"], "review")
    assert rev["review"]["seat"] == 1 and rev["frames"]
    out = subprocess.run([sys.executable, "-m", "meld8_app.cli", "review", str(replay), "--seat", "1", "--agent",
                          "greedy", "--json"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 0 and json.loads(out.stdout)["summary"]["decisions"] > 0


def test_the_web_commands_work_without_the_train_extra(tmp_path):
    """pip install 'meld8[web]' alone: review (and play) fall back from ppo to greedy, saying so."""
    import subprocess
    import sys

    replay = save_replay(tmp_path / "r.json", SHORT, 2, _random_game(2, SHORT))
    code = ("import sys; sys.modules['torch'] = None; sys.modules['sb3_contrib'] = None; "
            "import importlib.util as u; f = u.find_spec; "
            "u.find_spec = lambda n, *a: None if n in ('torch', 'sb3_contrib') else f(n, *a); "
            "from meld8_app.cli import main; "
            f"sys.exit(main(['review', {str(replay)!r}, '--seat', '0', '--text']))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "against greedy" in out.stdout and "train extra" in out.stderr


def test_a_long_replay_sends_each_hands_result_once():
    # docs review, session 32: every frame carried (a deep copy of) every result so far: a 3,451-action game of
    # 138 mostly drawn hands took 37 s to prepare and was 369 MB of JSON
    import json

    from meld8_app.web.session import pack_frames
    from meld8_env.protocol import GameStreams

    rules = RuleConfig()
    g = GameStreams(rules, seed=3)
    while (p := g.pending()) is not None:  # a poor player's long game: many drawn hands
        acts = p[1]["actions"]
        g.step(acts[len(g.answers) % len(acts)]["id"])
    frames = replay_frames(rules, 3, g.answers)
    import meld8_app.web.session as session

    merge = session.merge
    try:  # the finished results shared while merging are exactly the copies merging made before
        session.merge = lambda views, done=None: merge(views, None)
        assert json.dumps(replay_frames(rules, 3, g.answers)) == json.dumps(frames)
    finally:
        session.merge = merge
    packed, results = pack_frames(frames)
    assert len(results) > 20 and all("results" not in f for f in packed)
    for f, p in zip(frames, packed, strict=True):  # the page rebuilds each frame exactly
        assert {**p, "results": results[: p["results_count"]]} == {**f, "results_count": len(f["results"])}
    assert len(json.dumps(packed)) * 5 < len(json.dumps(frames))


def test_reviewing_a_logged_seat_with_its_own_agent_seeds_it_as_it_played(tmp_path, capsys):
    """Seeds audit, session 35: review loaded its reference with seed 0, so a seeded agent reviewing its own seat
    of a tournament log (which seeds agent k with the tournament's seed + k) disagreed with itself."""
    from meld8_app.cli import main
    from meld8_env.rules import RuleConfig
    from training.tournament import TournamentConfig, run

    rules = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1)
    out = tmp_path / "t"
    run(TournamentConfig(agents=["greedy", "random", "defensive"], boards=1, seed=11, out=str(out), rules=rules,
                         progress=False, chart=False))  # fmt: skip
    log = str(out / "games.jsonl")
    seats = json.loads((out / "games.jsonl").read_text().splitlines()[1])["games"][0]["seats"]
    seat = seats.index(1)  # where `random` sat in game 0
    assert main(["review", log, "--game", "0", "--seat", str(seat), "--agent", "random", "--json"]) == 0
    rev = json.loads(capsys.readouterr().out)
    assert rev["decisions"] and rev["summary"]["agreement"] == 1.0, rev["summary"]


def test_a_faulty_bots_notice_shows_the_fault_not_its_hand():
    """Leak audit, session 36: a ``cmd:`` bot's illegal answer put its legal actions (in a discard phase its whole
    hand) into the notice the page shows the human; the notice now names the fault only."""
    import sys
    from pathlib import Path

    bot = f"cmd:{sys.executable} {Path(__file__).parent / 'bots' / 'faulty_bot.py'} illegal 1"
    g = LiveGame([bot, "greedy"], seat=0, seed=5)
    try:
        while not g.notices and not g.over:
            st = g.state()
            ids = [a["id"] for a in st["request"]["actions"]]
            g.play(63 if 63 in ids else min(i for i in ids if i < 52), st["seq"])
        notices = g.state()["notices"]
        assert notices and "illegal action" in notices[0] and "legal:" not in notices[0], notices
        assert "phase" not in notices[0]  # which seats a claim window asks is hidden too (R22; review, session 36)
    finally:
        g.close()
