"""The meld8 calculator: output, JSON, and one-line errors with exit code 2."""

import json
import subprocess
import sys

import pytest

from meld8_app.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_score_human(capsys):
    code, out, _ = run(capsys, "score", "2s 3s 4s 6h 7h 8h 9d 9c", "--win", "8h")
    assert code == 0
    assert "Pinfu" in out and "Tanyao" in out and "10000 points" in out and "discarder pays 10000" in out


def test_score_json_fields(capsys):
    code, out, _ = run(capsys, "score", "2s 3s 4s 6h 7h 8h 9d 9c", "--win", "8h", "--tsumo", "--json")
    data = json.loads(out)
    assert code == 0 and data["win"] and data["han"] == 6 and data["points"] == 12000
    assert {"id": "closed_tsumo", "han": 1, "reduced": False} in data["yaku"]
    assert data["payments"] == {"each": 6000} and data["yakuman"] == 0
    for key in ("form", "groups", "joker_as", "bonuses", "reason"):
        assert key in data


def test_score_with_meld_and_reduction(capsys):
    code, out, _ = run(capsys, "score", "2h 3h 4h 9d 9h", "--win", "4h", "--meld", "6d 7d 8d")
    assert code == 0 and "All Red" in out and "reduced by 1" in out


def test_score_not_a_win_exit_1(capsys):
    code, out, _ = run(capsys, "score", "2s 3s 5s 6h 7h 8h 9d 9c", "--win", "9c")
    assert code == 1 and "no winning form" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["score", "2s 3s 4s 6h 7h 8h 9d Xz", "--win", "8h"], "unknown card 'Xz' at position 8"),
        (["score", "2s 3s 4s 6h 7h 8h 9d 9d", "--win", "8h"], "duplicate card 9d"),
        (["score", "2s 3s 4s 6h 7h 8h 9d", "--win", "8h"], "expected 8 concealed cards"),
        (["score", "2s 3s 4s 6h 7h 8h 9d 9c", "--win", "8h", "--round", "7"], "round must be 1..6"),
        (["waits", "2s 3s 4s"], "needs 7 concealed cards"),
        (["distance", "2s 3s 4s 6h 7h 8h 9d 9c 9s"], "7 or 8 concealed cards"),
    ],
)
def test_errors_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_waits_and_distance(capsys):
    assert run(capsys, "waits", "2s 3s 4s 6h 7h 9d 9c")[1].strip() == "5h 8h JK"
    assert run(capsys, "distance", "2s 3s 4s 6h 7h 9d 9c")[1].strip() == "1"
    assert run(capsys, "distance", "2s 3s 4s 6h 7h 9d JK", "--seen", "9s 9h 9c")[1].strip() == "2"


def test_console_script_bad_rules_file(tmp_path):
    bad = tmp_path / "r.yaml"
    bad.write_text("kuikae: sometimes\n")
    p = subprocess.run(
        [sys.executable, "-m", "meld8_app.cli", "score", "2s 3s 4s 6h 7h 8h 9d 9c", "--win", "8h", "--rules", str(bad)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2 and "kuikae" in p.stderr and "Traceback" not in p.stderr


def test_the_worked_examples_of_the_rules_document_are_what_the_command_prints(capsys):
    """Each ``$ meld8 score ...`` block of docs/rules.md, run as written, prints exactly the block's lines."""
    import pathlib
    import shlex

    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text()
    blocks = 0
    for block in text.split("\n\n"):
        lines = [ln[4:] for ln in block.splitlines()]
        if not lines or not lines[0].startswith("$ meld8 score"):
            continue
        blocks += 1
        main(shlex.split(lines[0])[2:])
        assert capsys.readouterr().out.rstrip("\n").splitlines() == lines[1:], lines[0]
    assert blocks == 2


def test_error_lines_escape_control_characters_and_are_bounded(tmp_path, capsys):
    """Error lines quote files, bots and command lines: a terminal escape in them reached the terminal raw (a replay's
    version field retitled it; red team, session 35), and a replay quoting two million numbers printed a 17 MB line.
    Every error line (meld8_app.cli, argparse's too) escapes control characters and keeps 2,000 characters."""
    from meld8_env.safe_text import MAX_LINE

    for argv in (
        ["tournament", "--agents", "\x1b]0;PWNED\x07x,greedy,random", "--out", str(tmp_path / "a")],
        ["tournament", "--agents", "greedy,greedy,random", "--backend", "\x1b[31mgpu"],
    ):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse's errors
            rc = exc.code
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1, err
        assert "\x1b" not in err and "\x07" not in err and "\\x1b" in err, err
    from meld8_env.safe_text import one_line

    line = one_line("a\nb\t" + "7, " * 2_000_000)  # the length the replay's message had
    assert "\n" not in line and line.startswith("a b 7, 7,") and line.endswith("... (5,998,003 more characters)")
    assert len(line) < MAX_LINE + 40
