"""bench/prior_confidence.py: each state's network move is the network agent's own and its search move is the
search agent's (decided again by fresh agents), and a spec without a network prior is refused in one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import prior_confidence  # noqa: E402
from search_speed import states  # noqa: E402

from agents import search_backend as sb  # noqa: E402
from agents.registry import load_agent  # noqa: E402
from meld8_env.engine.records import observe_records  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402

SPEC = "search:prior=distilled,keep=prior,worlds=8,extend=0"


def test_rows_hold_the_networks_and_the_searchs_own_moves():
    arr = prior_confidence.scan(SPEC, 6, 11)
    rules = RuleConfig()
    recs = states(rules, 6, 11)
    net = load_agent("distilled", rules, seed=5)
    search = load_agent(SPEC, rules, seed=5)
    assert arr.shape == (len(recs), 4)
    for i in range(len(recs)):
        obs, masks = observe_records(rules, recs[i : i + 1])
        info = sb.infoset_of(recs[i], int(recs[i]["acting"]), rules)
        probs = net.probabilities(obs, masks)[0]
        assert arr[i, 0] == float(probs[masks[0]].max()) and 0 < arr[i, 0] <= 1
        assert arr[i, 1] == int(net.act_batch(obs, masks)[0])
        before = search.rollouts
        assert arr[i, 2] == int(search.act_batch(obs, masks, [info])[0])
        assert arr[i, 3] == search.rollouts - before
    assert arr[:, 3].sum() > 0  # some state was searched


def test_a_search_without_a_network_prior_is_refused_in_one_line():
    res = subprocess.run(
        [sys.executable, str(BENCH / "prior_confidence.py"), "--spec", "search", "--states", "2"],
        capture_output=True,
        text=True,
    )
    assert res.returncode != 0 and "network prior" in res.stderr and "Traceback" not in res.stderr
