"""JSON whose numbers keep every digit: rows a build kept as JSON text are read back with their
numbers as `Decimal` and written again digit for digit (decisions 0101/0532: numbers are written
exactly). Python's `json` reads a number with a fraction as a float and writes a float's repr,
which rounds `1234567890123456789012345678.1234567891` to 17 significant digits."""

from __future__ import annotations

import json
import re
import uuid
from decimal import Decimal
from typing import Any


def loads(text: str) -> Any:
    """Parse JSON text; numbers with a fraction or an exponent become `Decimal`."""
    return json.loads(text, parse_float=Decimal)


def dumps(value: Any, **kwargs: Any) -> str:
    """`json.dumps`, with each `Decimal` written as the number it is, not as a float or a string."""
    numbers: list[str] = []
    nonce = uuid.uuid4().hex  # so that no string of the value can read as a marker

    def exact(o: Any) -> str:
        if isinstance(o, Decimal):
            numbers.append(format(o, "f"))  # positional: 0.0000000001, not 1E-10
            return f"{nonce}:{len(numbers) - 1}"
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")

    text = json.dumps(value, default=exact, **kwargs)
    return re.sub(f'"{nonce}:(\\d+)"', lambda m: numbers[int(m.group(1))], text)
