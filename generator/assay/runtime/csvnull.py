"""Read CSV keeping the difference between an unquoted empty field (NULL) and `""` (empty text)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional


def read_csv(path: Path | str) -> tuple[list[str], list[list[Optional[str]]]]:
    text = Path(path).read_text(encoding="utf-8")
    rows: list[list[Optional[str]]] = []
    row: list[Optional[str]] = []
    field: list[str] = []
    quoted = False
    in_quotes = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if in_quotes:
            if ch == '"':
                if i + 1 < n and text[i + 1] == '"':
                    field.append('"')
                    i += 2
                    continue
                in_quotes = False
            else:
                field.append(ch)
            i += 1
            continue
        if ch == '"':
            in_quotes = True
            quoted = True
        elif ch == ",":
            row.append("".join(field) if (field or quoted) else None)
            field, quoted = [], False
        elif ch in "\r\n":
            if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            row.append("".join(field) if (field or quoted) else None)
            rows.append(row)
            row, field, quoted = [], [], False
        else:
            field.append(ch)
        i += 1
    if field or quoted or row:
        row.append("".join(field) if (field or quoted) else None)
        rows.append(row)
    header = [h or "" for h in rows[0]]
    return header, rows[1:]


def write_csv(path: Path | str, header: list[str], rows: list[list[Optional[str]]]) -> None:
    """Write what `read_csv` reads back: every value quoted, NULL as an unquoted empty field."""

    def field(value: Optional[str]) -> str:
        return "" if value is None else '"' + value.replace('"', '""') + '"'

    lines = [",".join(field(h) for h in header)] + [",".join(field(v) for v in row) for row in rows]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
