"""Every CSV file the grader writes, safe to open in a spreadsheet: no cell a spreadsheet runs as a formula.

Much of what a CSV export holds comes from students: their ids and names (an LMS's download, a
name a student set in the LMS), the messages of their code's exceptions (a ``why`` cell begins
with the exception's name, which the student chose), the names of the files they handed in. A
spreadsheet reads a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a formula, and one that
begins with a tab or a carriage return may be read so too (OWASP, *CSV Injection*):
``=HYPERLINK("http://...", "Click")`` in a grade export is a link one click away on the instructor's
machine. :func:`write_csv` writes a frame with each such text cell, and column name, prefixed by a
single quote, as OWASP advises, whatever its column; numbers stay numbers: a number (``-1.5``, or
the text of one, as the LMS files write scores) is read as a number and never as a formula. Lines
end in CRLF (RFC 4180), so that Python's writer quotes a cell holding a carriage return, which
would otherwise end the row there.
"""

import re
from pathlib import Path

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def neutral(value: object) -> object:
    """``value``, with a ``'`` before it if it is text that a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(value):
        return "'" + value
    return value


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """``frame`` to ``path`` (no index), every text cell and column name :func:`neutral`."""
    safe = frame.map(neutral)
    safe.columns = [neutral(column) for column in frame.columns]
    safe.to_csv(path, index=False, lineterminator="\r\n")  # RFC 4180's: a cell holding a CR or LF is quoted
