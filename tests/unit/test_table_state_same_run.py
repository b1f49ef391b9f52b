"""A table set back by a dbt run is `set_back` whatever the clocks of that run say (session 44).

An entity with no checks of its own records no check result, so its latest build is the mart's
newest run, timed by that run's first recorded check result. Another table of the same run may
record its results after this table's TABLE_ROLLED_BACK event: an outside tester's `agent`, set
back by KEY_UNIQUE at 10:33:20.217, read as `published` because `claim` recorded its checks at
10:33:20.841 in the same run."""

from __future__ import annotations

from assay.runtime.table_states import _state

RUN = "42bf4e8e"
BACK = ("TABLE_ROLLED_BACK", RUN, "agent", "KEY_UNIQUE", "previous_version_kept", "2026-12-07 10:33:20.217579")


def test_a_failure_of_the_newest_run_is_the_latest_builds():
    said = _state("agent", True, True, None, BACK, None, started="2026-12-07T10:33:20.841535Z", started_run=RUN)
    assert (said["state"], said["run"], said["check"]) == ("set_back", RUN, "KEY_UNIQUE")


def test_a_failure_of_an_earlier_run_is_not():
    said = _state("agent", True, True, None, BACK, None, started="2026-12-07T10:40:00Z", started_run="later")
    assert said["state"] == "published"
