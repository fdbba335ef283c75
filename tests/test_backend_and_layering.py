"""Backend selection (MELD8_BACKEND, MELD8_REQUIRE_NATIVE) and the layering rule: the rules core
imports no RL library (STYLE.md lesson 1)."""

import os
import subprocess
import sys

import pytest


def _run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )


def test_backend_forced_by_env():
    p = _run("import meld8_env.hands as h; print(h.BACKEND)", MELD8_BACKEND="python")
    assert p.stdout.strip() == "python"
    p = _run("import meld8_env.hands as h; print(h.BACKEND)", MELD8_BACKEND="c")
    assert p.stdout.strip() == "c"


def test_bad_backend_name_is_a_clear_error():
    p = _run("import meld8_env.hands", MELD8_BACKEND="fortran")
    assert p.returncode != 0 and "MELD8_BACKEND must be 'c' or 'python'" in p.stderr


def test_set_backend_rejects_unknown():
    import meld8_env.hands as h

    with pytest.raises(ValueError, match="'c' or 'python'"):
        h.set_backend("gpu")


CORE = "meld8_env, meld8_env.hands, meld8_env.scoring, meld8_env.vector, meld8_env.simulate, meld8_app.cli"


def test_rules_core_imports_no_rl_library():
    """The engine and its tools need no RL library; only registering the faces by name imports them
    (``MELD8_NO_REGISTER=1`` skips that)."""
    code = (
        f"import sys, {CORE};"
        "bad = [m for m in ('torch', 'gymnasium', 'pettingzoo', 'stable_baselines3', 'ray') if m in sys.modules];"
        "print(bad)"
    )
    assert _run(code, MELD8_NO_REGISTER="1").stdout.strip() == "[]"
    # with registration (the default) the faces are reachable by name, and still nothing heavy is imported
    p = _run(code.replace("print(bad)", "print([m for m in bad if m in ('torch', 'stable_baselines3', 'ray')])"))
    assert p.stdout.strip() == "[]", p.stderr
