"""The language the course speaks in this run: English, or the edition the notebook belongs to.

The code is the same in every edition, so the language is chosen when it runs, in this order:

1. ``TFCOURSE_EDITION`` in the environment (``make lab EDITION=zh`` sets it; the grader sets it
   to the edition of the submission it grades; the reader edition sets it for each page);
2. the edition recorded in the metadata of the notebook this kernel runs (a translated release
   writes ``{"tfcourse": {"edition": "zh"}}``), found through ``JPY_SESSION_NAME``, the path
   Jupyter Server gives every notebook's kernel: so a Chinese notebook opened anywhere (a hub
   included) speaks Chinese without any setting;
3. English.
"""

import json
import os
from pathlib import Path

EDITION_VARIABLE = "TFCOURSE_EDITION"
ENGLISH = "en"
EDITIONS = (ENGLISH, "zh")


def notebook_edition(path: Path) -> str | None:
    """The edition a notebook's metadata names, or None (no notebook there, unreadable, or none named)."""
    try:
        metadata = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return None
    named = metadata.get("tfcourse", {}).get("edition") if isinstance(metadata, dict) else None
    return named if named in EDITIONS else None


def edition() -> str:
    """``en`` or ``zh``: the language this run's messages, printouts and figures are in."""
    chosen = os.environ.get(EDITION_VARIABLE, "").strip()
    if chosen in EDITIONS:
        return chosen
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb"):
        return notebook_edition(Path(session)) or ENGLISH
    return ENGLISH
