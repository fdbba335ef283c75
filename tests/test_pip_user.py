"""What a pip user meets outside the repository: shipped configs by name, --version, python -m,
score reasons that point to the rule, the rules document."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from meld8_app.cli import main
from meld8_env import __version__
from meld8_env.config_io import builtin_names
from meld8_env.rules import RuleConfig

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_configs_by_name_from_anywhere(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no configs/ folder here
    assert builtin_names("rules") == ["default", "two_player"] and "bots" in builtin_names("tournament")
    assert RuleConfig.load("two_player") == RuleConfig.two_player()
    assert main(["score", "2s 3s 4s 6h 7h 8h 9d 9c", "--win", "8h", "--rules", "two_player"]) == 0
    assert main(["tournament", "--config", "bots", "--boards", "1", "--out", str(tmp_path / "t")]) == 0
    assert (tmp_path / "t" / "results.json").is_file()
    capsys.readouterr()
    assert main(["simulate", "--games", "1", "--rules", "nonesuch"]) == 2
    assert "built-in name: default, two_player" in capsys.readouterr().err


def test_version_and_python_m(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"meld8 {__version__}"
    p = subprocess.run([sys.executable, "-m", "meld8_app", "--version"], capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == f"meld8 {__version__}"


@pytest.mark.parametrize(
    "argv, rule",
    [
        (["2s 3s 4s 6h 7h 8h 9d 9c", "--win", "8h", "--discards", "5h"], "(R33)"),
        (["As Ac Ad 5s 6s 7s JK 9c", "--win", "9c"], "(R25, R27)"),
        (["2s 3s 5h 6h 8d 9d Jc Qc", "--win", "Qc"], "R26"),
    ],
)
def test_no_win_reasons_cite_the_rule(argv, rule, capsys):
    assert main(["score", *argv]) == 1
    assert rule in capsys.readouterr().out


def test_rules_document_has_every_rule_and_the_package_its_license():
    text = (ROOT / "docs" / "rules.md").read_text()
    missing = [f"R{i}" for i in range(1, 45) if f"**R{i}**" not in text]
    assert missing == []
    assert "MIT License" in (ROOT / "LICENSE").read_text() and (ROOT / "CHANGELOG.md").is_file()
