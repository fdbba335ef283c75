"""Helpers for the tests that run ``meld8`` commands in-process (not a test module)."""

from __future__ import annotations

from meld8_app.cli import main


def one_line_error(argv: list[str], capsys) -> str:
    """stderr of ``meld8 ARGV``, which must fail with exit code 2 and one line, no traceback."""
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own errors
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, f"{argv}: exit {rc}, stderr {err!r}"
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err
