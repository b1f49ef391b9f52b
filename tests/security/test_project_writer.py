"""The one writer (`generator/assay/artifacts.py`) writes only regular files inside the project and
removes only files it owns there (decision 1157). A project is a directory others commit to (in
`assay init`'s layout the spec's author writes `models/` too); an outside tester (session 44)
committed a link at `models/assay/<entity>/<entity>__staged.sql` to a Python `.pth` file, and a spec
value holding a newline and `import os; ...` then ran as code at the next Python start; and a
manifest naming `../x` or `/x` with that file's digest made `assay generate` delete it."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from click.testing import CliRunner

from assay.artifacts import MANIFEST, owned_path, write_project
from assay.cli.main import cli

def test_a_link_where_a_file_is_written_refuses_the_whole_generation(tmp_path):
    project, outside = tmp_path / "p", tmp_path / "outside"
    (project / "models").mkdir(parents=True)
    outside.mkdir()
    os.symlink(outside / "planted.pth", project / "models" / "a.sql")  # dangling: the write would create it
    report = write_project(project, {"models/a.sql": "select 1\nimport os\n", "models/b.sql": "select 2\n"}, "dbt", "f")
    assert report.refused and report.links == ["models/a.sql"] and report.written == []
    assert not (outside / "planted.pth").exists() and not (project / "models" / "b.sql").exists()


def test_a_linked_directory_above_a_file_is_refused_too(tmp_path):
    project, outside = tmp_path / "p", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    os.symlink(outside, project / "models")
    report = write_project(project, {"models/x/a.sql": "select 1\n"}, "dbt", "f")
    assert report.refused and report.links == ["models"] and list(outside.iterdir()) == []


def test_a_linked_manifest_is_refused(tmp_path):
    project, outside = tmp_path / "p", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    os.symlink(outside, project / ".assay")
    report = write_project(project, {"models/a.sql": "select 1\n"}, "dbt", "f")
    assert report.refused and report.links == [".assay"] and list(outside.iterdir()) == []


@pytest.mark.parametrize("entry", ["../victim.txt", "/ABS", "models/../../victim.txt", "a\\..\\..\\victim.txt", ""])
def test_a_manifest_entry_outside_the_project_is_never_removed(tmp_path, entry):
    project = tmp_path / "p"
    project.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("yours\n")
    entry = entry.replace("/ABS", str(victim))
    (project / ".assay").mkdir()
    (project / MANIFEST).write_text(json.dumps({"files": {entry: hashlib.sha256(b"yours\n").hexdigest()}}))
    report = write_project(project, {"models/a.sql": "select 1\n"}, "dbt", "f")
    assert not report.refused and report.removed == [] and victim.read_text() == "yours\n"
    assert owned_path(project, entry) is None


def test_a_manifest_entry_through_a_link_is_never_removed(tmp_path):
    project, outside = tmp_path / "p", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "victim.txt").write_text("yours\n")
    os.symlink(outside, project / "old")
    (project / ".assay").mkdir()
    (project / MANIFEST).write_text(json.dumps({"files": {"old/victim.txt": hashlib.sha256(b"yours\n").hexdigest()}}))
    report = write_project(project, {"models/a.sql": "select 1\n"}, "dbt", "f")
    assert report.removed == [] and (outside / "victim.txt").read_text() == "yours\n"


def test_generate_says_which_link_and_writes_nothing(tmp_path):
    """`assay generate dbt` in `assay init`'s layout, with the staged model's path linked away."""
    project = tmp_path / "shop"
    assert CliRunner().invoke(cli, ["init", str(project)]).exit_code == 0
    cwd = os.getcwd()
    try:
        os.chdir(project)
        assert CliRunner().invoke(cli, ["generate", "dbt"]).exit_code == 0
        staged = next(project.glob("models/assay/*/*__staged.sql"))
        rel = staged.relative_to(project).as_posix()
        staged.unlink()
        os.symlink(tmp_path / "planted.pth", staged)
        result = CliRunner().invoke(cli, ["generate", "dbt"])
    finally:
        os.chdir(cwd)
    assert result.exit_code == 1, result.output
    assert "is a symbolic link" in result.output and rel in result.output and "Traceback" not in result.output
    assert not (tmp_path / "planted.pth").exists()
