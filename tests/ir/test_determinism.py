"""One spec, one IR: resolution does not depend on where, when or how often it runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from assay.ir.model import dump
from assay.ir.resolve import compile_spec
from tests.support.corpus import DIRTY

# The richest spec there is: the vendored corpus.
SPEC = DIRTY / "spec"


def render(root) -> tuple[str, str]:
    project, diagnostics, _loaded = compile_spec(root)
    assert diagnostics == []
    return json.dumps(dump(project), sort_keys=True, indent=2), project.fingerprint


def test_resolving_twice_gives_the_same_ir() -> None:
    assert render(SPEC) == render(SPEC)


def test_a_copy_in_another_directory_gives_the_same_ir(tmp_path) -> None:
    copy = tmp_path / "somewhere" / "else"
    shutil.copytree(SPEC, copy)
    assert render(copy) == render(SPEC)


def test_a_relative_root_gives_the_same_ir(monkeypatch) -> None:
    expected = render(SPEC)
    monkeypatch.chdir(SPEC.parent)
    assert render(Path(SPEC.name)) == expected


def test_the_order_files_were_written_in_does_not_matter(tmp_path) -> None:
    copy = tmp_path / "spec"
    copy.mkdir()
    for path in sorted(SPEC.iterdir(), reverse=True):
        shutil.copy(path, copy / path.name)
    assert render(copy) == render(SPEC)


def test_the_fingerprint_follows_the_bytes_and_nothing_else(tmp_path) -> None:
    copy = tmp_path / "spec"
    shutil.copytree(SPEC, copy)
    first = sorted(copy.glob("*.yaml"))[0]
    first.write_text(first.read_text() + "# a comment changes the bytes, not the meaning\n")
    ir, fingerprint = render(copy)
    original_ir, original_fingerprint = render(SPEC)
    assert fingerprint != original_fingerprint
    assert ir.replace(fingerprint, "") == original_ir.replace(original_fingerprint, "")


def test_hash_seed_does_not_leak_into_the_ir() -> None:
    # Set iteration order changes with PYTHONHASHSEED; anything unsorted shows up here.
    script = (
        "import json, sys; from assay.ir.resolve import compile_spec; from assay.ir.model import dump; "
        "print(json.dumps(dump(compile_spec(sys.argv[1])[0]), sort_keys=True, indent=2))"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", script, str(SPEC)], env=env, capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.rstrip("\n") == render(SPEC)[0]


def test_entities_rules_and_mappings_are_sorted() -> None:
    project, _diagnostics, _loaded = compile_spec(SPEC)
    assert [e.name for e in project.entities] == sorted(e.name for e in project.entities)
    for entity in project.entities:
        assert [r.name for r in entity.rules] == sorted(r.name for r in entity.rules)
        assert [m.name for m in entity.mappings] == sorted(m.name for m in entity.mappings)
