"""``rllib:FOLDER`` treats the folder as hostile (red team, session 35): everything is checked when the agent is
loaded - before a tournament writes anything - and each refusal is one line naming the file: weights that do not
fit the network the metadata names, weights that unpack beyond the ``ppo:`` loader's bound, non-finite weights,
metadata (and a run's ``league.json``) nested too deeply or holding huge integers, and file text that would reach
the terminal as escape sequences."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.checkpoint import MAX_MEMBER, make_metadata
from agents.registry import AgentLoadError, load_agent
from meld8_env.rules import RuleConfig

RULES = RuleConfig()
ESC = "\x1b]0;PWNED\x07\x1b[31mRED"
# stored arrays whose names and sizes pass the checks made before a module is built (net_arch [32]); they are not
# the mlp network's shapes: enough for every refusal that comes before building, which needs no Ray
SMALL = {"encoder.actor_encoder.net.mlp.0.weight": np.zeros((32, 40), np.float32),
         "pi.net.mlp.0.weight": np.zeros((64, 32), np.float32)}  # fmt: skip


def _folder(folder: Path, meta=lambda m: m, arrays: dict | None = None, raw_meta: str | None = None) -> Path:
    """A policy folder: metadata (the valid one for an mlp [32] passed through ``meta``, or ``raw_meta``) and
    ``arrays`` saved with np.savez."""
    from agents.rllib_policy import FORMAT

    folder.mkdir(parents=True, exist_ok=True)
    good = make_metadata(RULES, True, "mlp", [32], FORMAT)
    (folder / "meld8.json").write_text(raw_meta if raw_meta is not None else json.dumps(meta(good)))
    np.savez(folder / "weights.npz", **(SMALL if arrays is None else arrays))
    return folder


def _refused(folder: Path, *says: str) -> str:
    """The one-line AgentLoadError of loading ``folder``, which must contain each of ``says``."""
    with pytest.raises(AgentLoadError) as exc:
        load_agent(f"rllib:{folder}", RULES)
    msg = str(exc.value)
    assert "\n" not in msg and "\x1b" not in msg and len(msg) < 400, msg
    for s in says:
        assert s in msg, msg
    return msg


def _real_policy(folder: Path, network: str = "mlp") -> Path:
    """A folder exported from a freshly built module (needs Ray): what ``meld8 train --backend rllib`` writes."""
    pytest.importorskip("ray.rllib", reason="the rllib extra (pip install 'meld8[rllib]')")
    from agents.rllib_modules import learner_module_spec
    from agents.rllib_policy import export_policy
    from meld8_env.rllib import Meld8MultiAgentEnv

    env = Meld8MultiAgentEnv({"rules": RULES.to_dict(), "features": True})
    spec = learner_module_spec(network, [32], RULES)
    spec.observation_space, spec.action_space = env.observation_spaces["seat_0"], env.action_spaces["seat_0"]
    spec.inference_only = True
    return export_policy(spec.build(), folder, network, [32], RULES, True)


def _weights(folder: Path) -> dict[str, np.ndarray]:
    with np.load(folder / "weights.npz") as z:
        return {k: z[k] for k in z.files}


# -- 1. the module is built when the agent is loaded ----------------------------------------------------------
def test_a_real_policy_loads_and_plays(tmp_path):
    from training.tournament import TournamentConfig, run

    for network in ("mlp", "card_heads"):
        policy = _real_policy(tmp_path / network, network)
        res = run(TournamentConfig(agents=[f"rllib:{policy}", "greedy", "random"], boards=1,
                                   out=str(tmp_path / f"t_{network}"), progress=False, chart=False))  # fmt: skip
        assert res["games"] == 6


def test_weights_that_do_not_fit_the_network_are_refused_before_a_tournament_writes(tmp_path, capsys):
    from meld8_app.cli import main

    bad = _folder(tmp_path / "bad")  # valid metadata, arrays of the wrong shapes (input 40, not 1017)
    pytest.importorskip("ray.rllib", reason="the rllib extra (pip install 'meld8[rllib]')")
    out = tmp_path / "t"
    assert main(["tournament", "--agents", f"rllib:{bad},greedy,random", "--boards", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "weights.npz" in err and "(32, 1017)" in err and "(32, 40)" in err and "do not belong together" in err
    assert not out.exists()  # nothing written: no games.jsonl to block the rerun
    _refused(bad, "weights.npz", "do not belong together")  # the agent itself refuses, not only the tournament


def test_a_missing_array_or_an_unknown_network_is_refused_at_load(tmp_path):
    real = _real_policy(tmp_path / "real")
    arrays = _weights(real)
    del arrays["pi.net.mlp.0.bias"]
    _refused(_folder(tmp_path / "missing", arrays=arrays), "'pi.net.mlp.0.bias'", "no such array")
    _refused(_folder(tmp_path / "net", lambda m: {**m, "network": "transformer"}, arrays=_weights(real)),
             "meld8.json", "must be one of card_heads, mlp", "'transformer'")  # fmt: skip
    _refused(_folder(tmp_path / "esc", lambda m: {**m, "network": ESC}, arrays=_weights(real)), "\\x1b")


# -- 2. a bound on what weights.npz unpacks to, checked before reading ---------------------------------------
def test_weights_that_unpack_beyond_the_bound_are_refused_before_they_are_read(tmp_path):
    folder = _folder(tmp_path / "bomb")
    n = MAX_MEMBER // 2 + (1 << 20)  # two members of just over half the bound: each alone would pass
    with zipfile.ZipFile(folder / "weights.npz", "a", zipfile.ZIP_DEFLATED) as z:
        for name in ("zz_a.npy", "zz_b.npy"):
            with z.open(name, "w", force_zip64=True) as f:
                np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (n // 4,)})
                chunk = bytes(1 << 24)
                for start in range(0, n, len(chunk)):
                    f.write(chunk[: min(len(chunk), n - start)])
    assert (folder / "weights.npz").stat().st_size < 4 << 20  # a small file
    _refused(folder, "weights.npz", "unpack to", f"more than {MAX_MEMBER:,}")


def test_an_array_header_that_claims_more_than_its_member_holds_is_refused(tmp_path):
    folder = _folder(tmp_path / "claim")
    buf = io.BytesIO()  # a header asking numpy to allocate 4 TiB, then 8 bytes of data
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (1 << 40,)})
    with zipfile.ZipFile(folder / "weights.npz", "a") as z:
        z.writestr("huge.npy", buf.getvalue() + bytes(8))
    _refused(folder, "weights.npz", "'huge'", "claims shape")


def test_members_that_are_not_float_arrays_are_refused(tmp_path):
    folder = _folder(tmp_path / "txt")
    with zipfile.ZipFile(folder / "weights.npz", "a") as z:
        z.writestr(f"notes{ESC}.txt", b"hello")
    _refused(folder, "weights.npz", "is not an array (.npy)", "\\x1b")
    _refused(_folder(tmp_path / "int", arrays={**SMALL, "n": np.arange(3)}), "'n'", "not floats")


# -- 3. finite weights only ----------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e300], ids=["nan", "inf", "beyond-float32"])
def test_non_finite_weights_are_refused_naming_the_array(tmp_path, bad):
    arrays = {**SMALL, "pi.net.mlp.0.weight": np.full((64, 32), bad, np.float64)}
    _refused(_folder(tmp_path / "p", arrays=arrays), "weights.npz", "'pi.net.mlp.0.weight'", "NaN, infinite")


# -- 4. bounded JSON: metadata and the league state ----------------------------------------------------------
@pytest.mark.parametrize(
    "raw, says",
    [("[" * 100_000 + "]" * 100_000, "nested 100000 deep"), ('{"format": 1' + "0" * 5000 + "}", "digits"),
     ('{"format": "meld8-rllib-policy", "x": ' + "[" * 900 + "]" * 900 + "}", "nested 901 deep"),
     ("x" * ((1 << 20) + 1), "more than 1,048,576 bytes")],
    ids=["deep", "long-int", "deep-inside", "huge"],
)  # fmt: skip
def test_metadata_nested_too_deeply_or_with_huge_numbers_is_one_line_naming_the_file(tmp_path, raw, says):
    _refused(_folder(tmp_path / "p", raw_meta=raw), "meld8.json", says)


def _league_run(out: Path, league: str, config: str | None = None) -> None:
    (out / "checkpoint").mkdir(parents=True)
    (out / "checkpoint" / "league.json").write_text(league)
    if config is not None:
        (out / "config.yaml").write_text(config)


@pytest.mark.parametrize(
    "league, says",
    [("[" * 100_000 + "]" * 100_000, "nested 100000 deep"), ('{"iteration": 1' + "0" * 5000 + "}", "digits"),
     (json.dumps({"iteration": 2, "filled": 0, "next_slot": 0, "timesteps": 0, "best": ESC * 5000}),
      "best placement '\\x1b")],
    ids=["deep", "long-int", "escapes"],
)  # fmt: skip
def test_a_hostile_league_state_is_one_line_naming_the_file(tmp_path, capsys, league, says):
    pytest.importorskip("ray.rllib", reason="the rllib extra (pip install 'meld8[rllib]')")
    from meld8_app.cli import main

    out = tmp_path / "run"
    _league_run(out, league)
    args = ["train", "rllib_selfplay", "--backend", "rllib", "--set", f"out={out}", "--set", "resume=true",
            "--set", "progress=false"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "\x1b" not in err and len(err) < 500, err
    assert "league.json" in err and "not a league state" in err and says in err, err


def test_a_hostile_config_yaml_of_an_old_checkpoint_is_no_crash(tmp_path):
    pytest.importorskip("ray.rllib", reason="the rllib extra (pip install 'meld8[rllib]')")
    from training.rllib_train import _old_shape
    from training.run_folder import RunFolder

    for i, config in enumerate(("net_arch: " + "[" * 100_000 + "]" * 100_000, "net_arch: 1" + "0" * 5000,
                                "a: &a [1, 1]\nnet_arch: [*a, *a]")):  # fmt: skip
        _league_run(tmp_path / str(i), "{}", config)
        assert _old_shape(RunFolder(tmp_path / str(i), "rllib")) is None  # unreadable: no shape to compare


# -- 5. file text is escaped in messages --------------------------------------------------------------------
def test_a_rules_hash_with_escape_sequences_is_shown_escaped(tmp_path):
    msg = _refused(_folder(tmp_path / "p", lambda m: {**m, "rules_hash": ESC}), "trained with rules")
    assert "\\x1b]0;PWNED\\x07" in msg
