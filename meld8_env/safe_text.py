"""Text from outside (a bot's line, a file's field, a web page) made safe to show in a terminal or a log.

:func:`printable` escapes what a terminal would act on; :func:`one_line` is what every error line meld8 prints is
made of: whitespace runs collapsed to one space, control characters escaped, and the length bounded (a replay whose
re-simulation message quoted two million numbers printed a 17 MB line: red team, session 35).
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")
MAX_LINE = 2000
"""Characters an error line keeps; the rest is cut, and the line says how much."""


def printable(text: str) -> str:
    """``text`` with every control character (C0, DEL, C1 - terminal escape sequences start with
    ESC or CSI) and every invisible direction / line-separator mark written as ``\\xNN`` /
    ``\\uNNNN``, so text from outside shown in a terminal or a log cannot move the cursor, recolour, retitle
    or hide what follows."""

    def esc(m: re.Match) -> str:
        c = ord(m.group())
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"

    return _CONTROL.sub(esc, text)


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """``text`` as one printable line of at most ``limit`` characters (plus the note of what was cut)."""
    line = printable(" ".join(str(text).split()))
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... ({len(line) - limit:,} more characters)"


__all__ = ["MAX_LINE", "one_line", "printable"]
