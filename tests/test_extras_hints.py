"""A plain ``pip install`` without the train extra: commands that need it say so in one line (exit 2),
never a ModuleNotFoundError traceback. The missing extra is made real by shadowing torch and
sb3-contrib with packages that fail to import, exactly as an absent install does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BROKEN = 'raise ModuleNotFoundError("No module named \'{0}\'", name="{0}")\n'


@pytest.fixture
def without_train_extra(tmp_path):
    for mod in ("torch", "sb3_contrib", "stable_baselines3"):
        (tmp_path / mod).mkdir()
        (tmp_path / mod / "__init__.py").write_text(BROKEN.format(mod))
    return {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


@pytest.mark.parametrize(
    "argv",
    [["train", "ppo_vs_bots"], ["tournament", "--agents", "ppo,greedy,random", "--boards", "1"]],
    ids=["train", "tournament-ppo"],
)
def test_missing_train_extra_is_a_one_line_hint(without_train_extra, tmp_path, argv):
    out = ["--out", str(tmp_path / "o")] if argv[0] == "tournament" else []
    p = subprocess.run([sys.executable, "-m", "meld8_app", *argv, *out],
                       capture_output=True, text=True, env=without_train_extra, cwd=tmp_path, timeout=120)  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert "meld8[train]" in p.stderr and "Traceback" not in p.stderr and p.stderr.count("\n") == 1
