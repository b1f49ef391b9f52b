"""One child Spark per click command (decision 0840), without a JVM: the lifecycle of
`connect_spark`'s children, with SparkChild replaced by a recorder.

The real child's start and stop are exercised on Spark by tests/cli/test_init_spark.py (the demo
holds one and it is gone when the demo returns; the operator commands share the module's held one).
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from assay.runtime import spark_conn


class Recorder:
    """Stands in for SparkChild: records its starts and stops."""

    started: list = []
    stopped: list = []

    def __init__(self, project_dir, profiles_dir, target, describe, before=None):
        self.key = (str(project_dir), str(profiles_dir or ""), target or "")
        self._alive = True
        Recorder.started.append(self.key)

    @property
    def alive(self) -> bool:
        return self._alive

    def stop(self) -> None:
        self._alive = False
        Recorder.stopped.append(self.key)


@pytest.fixture
def recorder(monkeypatch):
    Recorder.started, Recorder.stopped = [], []
    monkeypatch.setattr(spark_conn, "SparkChild", Recorder)
    return Recorder


def _command(name: str, work):
    @click.command(name)
    def command():
        work()
        click.echo(f"during: {len(Recorder.started)} started, {len(Recorder.stopped)} stopped")
    return command


def test_connections_of_one_command_share_one_child_stopped_when_it_ends(recorder, tmp_path):
    def work():
        for _ in range(3):  # the three questions of `assay check rows`
            conn = spark_conn.connect_spark(tmp_path, None, None, "the test's", read_only=True)
            conn.close()  # a shared child outlives its connection
    result = CliRunner().invoke(_command("check", work))
    assert result.exit_code == 0, result.output
    assert result.output == "during: 1 started, 0 stopped\n"
    assert recorder.started == recorder.stopped == [(str(Path(tmp_path).resolve()), "", "")]


def test_another_profiles_dir_is_another_child(recorder, tmp_path):
    def work():
        spark_conn.connect_spark(tmp_path, None, None, "the test's", read_only=True)
        spark_conn.connect_spark(tmp_path, tmp_path / "other", None, "the test's", read_only=True)
    assert CliRunner().invoke(_command("table", work)).exit_code == 0
    assert len(recorder.started) == 2 and sorted(recorder.stopped) == sorted(recorder.started)


def test_a_held_child_serves_the_command_and_outlives_it(recorder, tmp_path, monkeypatch):
    held = Recorder(tmp_path, None, None, "held")
    monkeypatch.setitem(spark_conn._HELD, spark_conn._key(tmp_path, None, None), held)
    connected = []
    assert CliRunner().invoke(_command("report", lambda: connected.append(
        spark_conn.connect_spark(tmp_path, None, None, "the test's", read_only=True)))).exit_code == 0
    assert connected[0]._child is held and recorder.started == [held.key] and recorder.stopped == []


def test_outside_a_command_the_connection_owns_its_child(recorder, tmp_path):
    conn = spark_conn.connect_spark(tmp_path, None, None, "the test's", read_only=True)
    assert len(recorder.started) == 1 and recorder.stopped == []
    conn.close()
    assert recorder.stopped == recorder.started


def test_a_writing_command_is_refused_before_a_child_starts(recorder, tmp_path):
    def work():
        spark_conn.connect_spark(tmp_path, None, None, "the test's", read_only=False)
    result = CliRunner().invoke(_command("maintain", work))
    assert result.exit_code == 1 and "cannot run on the Spark warehouse of the test's" in str(result.exception)
    assert recorder.started == []
