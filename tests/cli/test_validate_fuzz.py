"""`assay validate` on damaged copies of real specs: a refusal naming a file, never a traceback.

Each case copies one spec (the example shop project, the two vendored corpus specs), damages
one of its files the way editors, merges and transfers do (a line dropped, duplicated, swapped
or re-indented, a value replaced by junk, bytes that are not UTF-8, the file cut short), and
runs `assay validate` through Click as a user would. Whatever the damage, the command must end
with exit 0 (still valid) or 1 (refused), print no traceback, and name a file and line on every
line of a refusal. The seed is fixed, so a failure reproduces; `ASSAY_FUZZ_CASES` runs more.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.corpus import DIRTY, PRECEDENCE

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
SEED = 20261201
# Cases per spec: the shop example and the precedence spec validate in well under 0.1 s, the
# 13-entity dirty spec takes about 0.2 s, so it gets fewer cases to keep the test near 15 s.
CASES = {"shop": 110, "precedence": 110, "dirty": 40}
SPECS = {"shop": EXAMPLE, "precedence": PRECEDENCE / "spec", "dirty": DIRTY / "spec"}
SCALE = float(os.environ.get("ASSAY_FUZZ_CASES", "1"))

# Values a hand edit or a bad merge leaves behind, chosen to hit every YAML node kind, tags,
# anchors, numbers PyYAML reads specially, and text the grammar expects elsewhere.
JUNK = [
    "", "~", "null", "true", "no", "0", "-1", "1e999", ".nan", "0x1F", "0o17", "12:30:00", "2026-13-45",
    "2026-01-01T00:00:00Z", "[", "]", "{", "}", "[]", "{}", "[[]]", "[{}]", "{a: {b: c}}", "[1, [2, [3]]]",
    "'", '"', "'unterminated", '"\\x"', "|", ">-", "&anchor x", "*nowhere", "!!binary aGVsbG8=", "!!set {a, b}",
    "!!python/object:os.system", "!!int x", "!!float y", "!!timestamp 2001-12-14", "? a", "- a", "-", ":", "a: b: c",
    "%", "@at", "`tick`", "#", "x" * 300, "é", "😀", "\\u0000", "U+0041-U+005A", "$.", "$..x", "$.a.b.c.d",
    "drop", "fail", "quarantine", "flag", "latest_by", "type2", "decimal(40,50)", "decimal(x)", "90x", "0d",
    "[trim, upper, {to_decimal: [1]}]", "{rule: range}", "{rule: expression, expr: 'select 1'}",
    "{rule: pattern, regex: '(a+)+'}", "[order_id, order_id]", "{from: 1}", "{<<: {a: 1}}",
]
BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3", b"\x80", b"\xe2\x82", b"\x00", b"\x1b[0m", b"\xef\xbb\xbf", b"\xed\xa0\x80"]
PROBLEM_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<code>[A-Z][A-Z0-9_]*): (?P<message>\S.*)$")


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def damage(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One damaged version of a file's bytes, with the name of the damage."""
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    kind = rng.choice(["drop", "duplicate", "swap", "indent", "junk", "junk", "junk", "bytes", "truncate"])
    if kind == "drop":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "indent":
        lines[i] = (b" " * rng.choice([1, 2, 3, 4]) + lines[i]) if rng.random() < 0.6 else lines[i].lstrip(b" ")
    elif kind == "junk":
        with_value = [k for k, line in enumerate(lines) if re.search(rb":\s*\S", line)] or [i]
        k = rng.choice(with_value)
        head, sep, _rest = lines[k].partition(b": ")
        junk = rng.choice(JUNK).encode("utf-8")
        lines[k] = (head + sep + junk + b"\n") if sep else (lines[k].rstrip(b"\n") + b" " + junk + b"\n")
    elif kind == "bytes":
        blob = b"".join(lines)
        at = rng.randrange(len(blob) + 1)
        return kind, blob[:at] + rng.choice(BAD_BYTES) + blob[at:]
    else:
        blob = b"".join(lines)
        return kind, blob[: rng.randrange(len(blob) + 1)]
    return kind, b"".join(lines)


def _cases() -> list[tuple[str, int]]:
    return [(spec, n) for spec, count in CASES.items() for n in range(max(1, int(count * SCALE)))]


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".yml", ".yaml") and "bronze" not in p.parts)


def test_the_undamaged_specs_are_valid(runner):
    # The baseline: every refusal below is caused by the damage, not by the spec.
    for root in SPECS.values():
        result = runner.invoke(cli, ["validate", str(root)])
        assert result.exit_code == 0, result.output


def test_damaged_specs_are_refused_by_file_never_with_a_traceback(runner, tmp_path):
    failures = []
    for spec, n in _cases():
        rng = random.Random(f"{SEED}:{spec}:{n}")
        root = tmp_path / f"{spec}_{n}"
        shutil.copytree(SPECS[spec], root, ignore=shutil.ignore_patterns("bronze"))
        target = rng.choice(_files(root))
        kind, damaged = damage(target.read_bytes(), rng)
        target.write_bytes(damaged)
        result = runner.invoke(cli, ["validate", str(root)])
        where = f"{spec} case {n}: {kind} in {target.relative_to(root)}"
        problem = _judge(result, root)
        if problem:
            failures.append(f"{where}: {problem}")
        shutil.rmtree(root)
    assert not failures, "\n".join(failures[:20])


def _judge(result, root: Path) -> str:
    """'' when the run ended as the CLI contract says; otherwise what went wrong."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"raised {type(result.exception).__name__}: {result.exception}"
    if "Traceback" in result.output:
        return "printed a traceback"
    if result.exit_code not in (0, 1):
        return f"exit {result.exit_code}: {result.output[-500:]}"
    if result.exit_code == 1:
        lines = result.stdout.splitlines()
        if not lines:
            return "refused without naming a problem"
        for line in lines:
            m = PROBLEM_LINE.match(line)
            if not m:
                return f"a refusal line names no file and line: {line!r}"
            if not Path(m["file"]).is_file() or not Path(m["file"]).resolve().is_relative_to(root.resolve()):
                return f"a refusal names {m['file']!r}, which is not a file of the spec"
            if int(m["line"]) < 1:
                return f"a refusal names line {m['line']}: {line!r}"
    return ""
