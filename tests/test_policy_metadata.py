"""Policy metadata is checked against the stored weights before anything is built (issue 22 §4), the same
way for ``ppo:`` checkpoint zips and ``rllib:`` policy folders: metadata that is not an object, lacks a
field, claims layers its weights do not hold (no 40 GB allocation from a claim), or weights cut short
are one line each (CheckpointError, AgentLoadError through ``load_agent``)."""

from __future__ import annotations

import io
import json
import os
import time
import zipfile

import numpy as np
import pytest

from agents.checkpoint import FIELDS, CheckpointError, make_metadata
from agents.registry import AgentLoadError, load_agent
from meld8_env.rules import RuleConfig

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

RULES = RuleConfig()


def _sb3_zip(path, meta, state=None, cut: int = 0):
    """A checkpoint zip as meld8 train writes it (meld8.json + policy.pth); ``cut`` drops bytes of policy.pth."""
    from agents.networks import build_policy

    if state is None:
        state = build_policy(make_metadata(RULES, True, "card_heads", [32]), RULES).state_dict()
    buf = io.BytesIO()
    torch.save(state, buf)
    blob = buf.getvalue()
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("meld8.json", json.dumps(meta))
        z.writestr("policy.pth", blob[: len(blob) - cut] if cut else blob)
    return path


def _good_meta(**kw):
    return {**make_metadata(RULES, True, "card_heads", [32]), "num_timesteps": 0, **kw}


def test_a_well_formed_checkpoint_loads_and_plays(tmp_path):
    agent = load_agent(f"ppo:{_sb3_zip(tmp_path / 'ok.zip', _good_meta())}", RULES)
    assert agent.name == "ppo"


@pytest.mark.parametrize("arch", [[16_000, 16_000], [32, 9_000], [48]])
def test_sb3_metadata_claiming_layers_the_weights_lack_is_refused_before_building(tmp_path, arch):
    path = _sb3_zip(tmp_path / "c.zip", _good_meta(net_arch=arch))
    t0 = time.perf_counter()
    # (session 32: layers whose weights the stored tensors cannot hold in number are refused first)
    with pytest.raises(
        AgentLoadError, match=r"stored weights hold no layer of \d+ units|take at least [\d,]+ weights"
    ) as exc:
        load_agent(f"ppo:{path}", RULES)
    assert time.perf_counter() - t0 < 5, "the claimed network was built before the check"
    assert "\n" not in str(exc.value)


SB3_BAD = {
    "a list": ([1, 2], "is not a JSON object"),
    "a number": (7, "is not a JSON object"),
    "absurd layers": (_good_meta(net_arch=[10**9, 10**9]), "net_arch must be a non-empty list of layer sizes"),
    "no layers": (_good_meta(net_arch=[]), "net_arch must be a non-empty list"),
    "a bool for an int": (_good_meta(obs_size=True), "field 'obs_size' must be int"),
    "a string for a list": (_good_meta(net_arch="256"), "field 'net_arch' must be list"),
}
SB3_BAD |= {f"no {k}": ({kk: v for kk, v in _good_meta().items() if kk != k}, f"lacks the field {k!r}") for k in FIELDS}


@pytest.mark.parametrize("case", list(SB3_BAD))
def test_sb3_metadata_that_is_not_the_schema_is_one_line(tmp_path, case):
    meta, says = SB3_BAD[case]
    with pytest.raises(AgentLoadError, match=says) as exc:
        load_agent(f"ppo:{_sb3_zip(tmp_path / 'c.zip', meta)}", RULES)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("cut", [1, 100, 5000])
def test_sb3_weights_cut_short_are_one_line(tmp_path, cut):
    with pytest.raises(AgentLoadError, match="policy.pth|weights") as exc:
        load_agent(f"ppo:{_sb3_zip(tmp_path / 'c.zip', _good_meta(), cut=cut)}", RULES)
    assert "\n" not in str(exc.value)


def test_sb3_weights_of_another_shape_are_one_line(tmp_path):
    from agents.networks import build_policy

    state = build_policy(make_metadata(RULES, True, "card_heads", [32]), RULES).state_dict()
    key = next(k for k, v in state.items() if v.ndim == 2 and v.shape[0] == 32)
    state[key] = state[key][:, :5]  # the layer's rows are there, its inputs are not
    with pytest.raises(AgentLoadError, match="do not fit the network") as exc:
        load_agent(f"ppo:{_sb3_zip(tmp_path / 'c.zip', _good_meta(), state)}", RULES)
    assert "\n" not in str(exc.value)


def _good_state():
    from agents.networks import build_policy

    return build_policy(make_metadata(RULES, True, "card_heads", [32]), RULES).state_dict()


def _first_2d(state):
    return next(k for k, v in state.items() if v.ndim == 2)


_SHARED = torch.zeros(4096, 1)  # 4,096 stored values, whatever the names pointing at them

HOSTILE_WEIGHTS = {  # red team, session 32: each of these loaded (or failed deep inside torch)
    "NaN": (lambda st: st[_first_2d(st)].fill_(float("nan")), "not dense finite floats"),
    "bool": (lambda st: st.__setitem__(_first_2d(st), st[_first_2d(st)] > 0), "not dense finite floats"),
    "sparse": (lambda st: st.__setitem__(_first_2d(st), st[_first_2d(st)].to_sparse()), "not dense finite floats"),
    "an int key": (lambda st: st.__setitem__(7, torch.zeros(2)), "not a table of named tensors"),
    "one small tensor for huge layers": (lambda st: (st.clear(), st.__setitem__("x", torch.zeros(4096, 1))), None),
    # red team, session 43: one stored float expanded to a layer's shape passed the shape checks (a 2.3 KB file
    # named 64 layers of 16384 x 16384), and one stored tensor named 64 times stood for 64 layers' weights
    "a layer expanded from one value": (
        lambda st: st.__setitem__(_first_2d(st), torch.zeros(1).expand(st[_first_2d(st)].shape)),
        "claims shape .* but stores fewer values",
    ),
    "one stored tensor under many names for huge layers": (
        lambda st: (st.clear(), st.update({f"w{i}": _SHARED for i in range(64)})),
        None,
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE_WEIGHTS))
def test_hostile_weights_are_refused_in_one_line_before_a_network_is_built(tmp_path, case):
    change, says = HOSTILE_WEIGHTS[case]
    state = _good_state()
    change(state)
    meta = _good_meta() if says else _good_meta(net_arch=[4096] * 3, network="separate")
    says = says or "take at least 33,554,432 weights; the stored tensors hold 4,096"
    t0 = time.perf_counter()
    with pytest.raises(AgentLoadError, match=says) as exc:
        load_agent(f"ppo:{_sb3_zip(tmp_path / 'c.zip', meta, state)}", RULES)
    assert "\n" not in str(exc.value) and time.perf_counter() - t0 < 5


def test_a_zip_whose_members_claim_too_much_is_refused_before_inflating(tmp_path, monkeypatch):
    import agents.checkpoint as ck

    path = _sb3_zip(tmp_path / "c.zip", _good_meta())
    monkeypatch.setattr(ck, "MAX_MEMBER", 1000)  # stands for 256 MiB: policy.pth holds more than this
    with pytest.raises(AgentLoadError, match=r"policy.pth holds [\d,]+ bytes, more than 1,000"):
        load_agent(f"ppo:{path}", RULES)
    with zipfile.ZipFile(path, "a") as z, pytest.warns(UserWarning, match="Duplicate name"):
        z.writestr("meld8.json", json.dumps(_good_meta()))  # a second copy: which one would count?
    with pytest.raises(AgentLoadError, match="meld8.json appears twice inside"):
        load_agent(f"ppo:{path}", RULES)


@pytest.mark.parametrize(
    "meta, says",
    [
        (_good_meta(num_players=100_000), "trained for 100000 players; these rules seat 3"),  # 4.8 GB of heads
        (_good_meta(version=True), "metadata version True"),
        (_good_meta(network="../../x"), "field 'network' must be one of"),
    ],
)
def test_metadata_the_network_is_built_from_is_checked_first(tmp_path, meta, says):
    with pytest.raises(AgentLoadError, match=says):
        load_agent(f"ppo:{_sb3_zip(tmp_path / 'c.zip', meta)}", RULES)


@pytest.mark.parametrize(
    "field, value",
    [("format", "f" * 100_000), ("version", "9" * 100_000), ("rules_hash", 7 * [list(range(20_000))]),
     ("net_arch", [0] * 50_000), ("network", "n" * 100_000), ("critic", "c" * 100_000),
     ("net_arch", [3] * 10_000), ("obs_layout_version", 10**4000), ("obs_size", 10**4000),
     ("features_layout_version", 10**4000)],
)  # fmt: skip
def test_a_huge_bad_field_is_quoted_in_a_short_line(tmp_path, field, value):
    """Found in session 35, fixed in 36: ``check_metadata`` quoted a bad field's repr whole (a 100,000-character
    field was a 100,000-character error; the CLI cut it, Python callers got it all)."""
    with pytest.raises(AgentLoadError) as err:
        load_agent(f"ppo:{_sb3_zip(tmp_path / 'c.zip', _good_meta(**{field: value}))}", RULES)
    msg = str(err.value)
    assert len(msg) < 600 and "\n" not in msg and "..." in msg, msg[:300]


# -- rllib: folders ----------------------------------------------------------------------------------
def _rllib_folder(folder, meta, arrays=None, cut: int = 0):
    from agents.rllib_policy import FORMAT

    folder.mkdir(parents=True, exist_ok=True)
    good = {**make_metadata(RULES, True, "mlp", [32], FORMAT)}
    (folder / "meld8.json").write_text(json.dumps(meta(good) if callable(meta) else meta))
    arrays = arrays or {"encoder.actor_encoder.net.mlp.0.weight": np.zeros((32, 40), np.float32),
                        "pi.net.mlp.0.weight": np.zeros((64, 32), np.float32)}  # fmt: skip
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    blob = buf.getvalue()
    (folder / "weights.npz").write_bytes(blob[: len(blob) - cut] if cut else blob)
    return folder


RLLIB_BAD = {
    "a list": ([1], "is not a JSON object"),
    "absurd layers": (lambda m: {**m, "net_arch": [10**9]}, "net_arch must be a non-empty list of layer sizes"),
    "claimed layers": (lambda m: {**m, "net_arch": [8_000, 8_000]}, "take at least 64,000,000 weights"),
    "no net_arch": (lambda m: {k: v for k, v in m.items() if k != "net_arch"}, "lacks the field 'net_arch'"),
    "no rules_hash": (lambda m: {k: v for k, v in m.items() if k != "rules_hash"}, "lacks the field 'rules_hash'"),
    "a string version": (lambda m: {**m, "version": "1"}, "metadata version"),
}


@pytest.mark.parametrize("case", list(RLLIB_BAD))
def test_rllib_metadata_that_is_not_the_schema_or_not_its_weights_is_one_line(tmp_path, case):
    meta, says = RLLIB_BAD[case]
    with pytest.raises(AgentLoadError, match=says) as exc:
        load_agent(f"rllib:{_rllib_folder(tmp_path / 'p', meta)}", RULES)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("cut", [1, 50, 300])
def test_rllib_weights_cut_short_are_one_line(tmp_path, cut):
    with pytest.raises(AgentLoadError, match="unreadable weights") as exc:
        load_agent(f"rllib:{_rllib_folder(tmp_path / 'p', lambda m: m, cut=cut)}", RULES)
    assert "\n" not in str(exc.value)


def test_rllib_folder_passes_the_checks_and_names_its_schema(tmp_path):
    """A folder in the shared schema loads, its module built with Ray when the agent is made (so a tournament
    refuses weights that do not fit before it writes anything); folders of the first exports (hidden, players)
    are read too."""
    pytest.importorskip("ray.rllib") if os.environ.get("CI") != "true" else None  # CI installs ray: must run there
    from agents.rllib_modules import learner_module_spec
    from agents.rllib_policy import RllibPolicyAgent, export_policy
    from meld8_env.observation import obs_size
    from meld8_env.rllib import Meld8MultiAgentEnv

    env = Meld8MultiAgentEnv({"rules": RULES.to_dict(), "features": False})
    spec = learner_module_spec("mlp", [32], RULES)
    spec.observation_space, spec.action_space = env.observation_spaces["seat_0"], env.action_spaces["seat_0"]
    spec.inference_only = True
    folder = export_policy(spec.build(), tmp_path / "p", "mlp", [32], RULES, False)
    agent = RllibPolicyAgent(folder, RULES)
    assert agent.meta["net_arch"] == [32] and agent.meta["format"] == "meld8-rllib-policy"
    old = {"format": "meld8-rllib-policy", "network": "mlp", "hidden": [32], "rules_hash": RULES.rules_hash,
           "players": 3, "obs_size": obs_size(RULES), "features": False}  # fmt: skip
    (folder / "meld8.json").write_text(json.dumps(old))
    agent = RllibPolicyAgent(folder, RULES)
    assert agent.meta["net_arch"] == [32] and agent.meta["num_players"] == 3
    with pytest.raises(CheckpointError, match="expects observations of size|trained with rules|trained for 3 players"):
        RllibPolicyAgent(folder, RuleConfig.two_player())
