"""Text padded to a width in display columns, for the tables the notebooks print with f-strings.

``f"{name:18}"`` pads to 18 *characters*; a Chinese character takes two columns on screen, so a column of
Chinese names printed that way does not line up. :func:`pad` counts columns
(:func:`tfcourse.messages.display_width`), as ``tr`` does for the widths in its own messages.
"""

from typing import Literal

from tfcourse.messages import display_width


def pad(text: str, width: int, align: Literal["<", ">"] = "<") -> str:
    """``text`` with spaces added to fill ``width`` display columns: after it (``<``) or before it (``>``).

    Text already as wide or wider comes back unchanged, as ``str.format`` leaves it.
    """
    gap = " " * max(0, width - display_width(text))
    return gap + text if align == ">" else text + gap
