"""What assay prints reaches the terminal as text (decision 1158): an outside tester (session 44)
put `ESC[2J`, an `ESC]0;...BEL` title change, `\\r` and U+202E into a key value and into spec text,
and `assay checks`, `assay table get` and `assay validate` wrote them to the terminal raw (click
strips ANSI sequences only when the output is not a terminal)."""

from __future__ import annotations

import os
import subprocess
import sys

from assay.cli.terminal import inert

HOSTILE = "a\x1b[2J\x1b]0;TITLE\x07b\rFAKE\u202eZ\x9b\u2066"


def test_every_control_a_terminal_acts_on_is_escaped():
    assert inert(HOSTILE) == "a\\u001b[2J\\u001b]0;TITLE\\u0007b\\u000dFAKE\\u202eZ\\u009b\\u2066"
    assert inert("line one\n\tline two é ü 漢") == "line one\n\tline two é ü 漢"


def test_the_console_script_prints_no_control_character(write_spec):
    """The console script's own streams, as a terminal would receive them: through a pipe, which
    click treats as no terminal, so its ANSI stripping would not show a raw `\\r`, BEL or U+202E."""
    spec = write_spec({})
    path = spec / "entity_orders.yaml"
    path.write_text(path.read_text().replace(
        "    quarantine: {retention: 90d}\n",
        '    quarantine: {retention: 90d}\n    checks:\n      - {check_id: "' + HOSTILE.encode("unicode_escape").decode().replace("\\x", "\\x")
        + '", kind: row_expectation, enforcement: required, min_rows: 1}\n'))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", "from assay.cli.main import main; main()", "validate", "--spec", str(spec)],
                         capture_output=True, text=True, env=env, cwd=spec, timeout=120)
    assert out.returncode == 1, out
    printed = out.stdout + out.stderr
    assert "check_id" in printed and "\\u000dFAKE\\u202eZ" in printed, printed
    assert not any(ch in printed for ch in "\x1b\x07\r\u202e\x9b\u2066"), repr(printed)
