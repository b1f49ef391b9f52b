"""What assay prints reaches the terminal as text, never as a control sequence of the terminal.

Values in what the commands print come from bronze data and from spec text (a key value in a
check's measured value, a name in a diagnostic). An outside tester (session 44) put `ESC[2J`, an
`ESC]0;...BEL` title change, `\\r` and U+202E (right-to-left override) into a key: `assay checks` and
`assay table get` cleared the screen, retitled the window and let the data overwrite a line with a
fake "all checks passed". click strips ANSI sequences only when the output is not a terminal.
Every control character except the line feed and the tab, and the Unicode controls that reorder
or hide text, is written as the escape `\\uXXXX` (decision 1158), on stdout and stderr alike;
`--json` output is unchanged in meaning (JSON reads the escape as the same character).
"""

from __future__ import annotations

import io
import sys
from typing import Any, TextIO

_CODES = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0),  # C0, DEL, C1
          0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]  # bidi marks, overrides, isolates
_INERT = {code: f"\\u{code:04x}" for code in _CODES if code not in (0x0A, 0x09)}


def inert(text: str) -> str:
    """`text` with every character a terminal would act on written as `\\uXXXX`."""
    return text.translate(_INERT)


class InertStream(io.TextIOBase):
    """A text stream that writes `inert(text)` to the stream it wraps."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(inert(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    @property
    def errors(self) -> Any:  # type: ignore[override]
        return getattr(self._stream, "errors", None)


def install() -> None:
    """Make the process's stdout and stderr inert (the console script `assay` calls it)."""
    if not isinstance(sys.stdout, InertStream):
        sys.stdout = InertStream(sys.stdout)
    if not isinstance(sys.stderr, InertStream):
        sys.stderr = InertStream(sys.stderr)
