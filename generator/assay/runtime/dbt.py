"""Running the real dbt CLI of this environment, and reading why a run failed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from ..errors import ProjectError

# dbt prefixes every log line with a clock; an error shown to a user reads better without it.
_CLOCK = re.compile(r"^\d\d:\d\d:\d\d\s{1,2}")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: dbt's own lines of a failed run, which name nodes and files, never a value.
_DBT_OWN_LINE = re.compile(r"Completed with [0-9]+ error|Encountered an error|(Failure|Warning|Error) in [a-z]+ |"
                           r"[A-Za-z]+ (Error|Warning) in [a-z]+ |compiled code at |Done\.")
# A node whose own materialization refused to publish: a blocking check failed (dbt_package's
# assay_entity raises this), which is an outcome of the data, not a broken project.
CHECK_FAILED = "CHECK_FAILED"
# A table published and kept by a failing keep check, and a reader refused because a table it
# reads is kept (dbt_package/macros/kept): outcomes of checks too, each node failing with its word.
TABLE_KEPT = "TABLE_KEPT:"
KEPT_TABLE_REFUSED = "KEPT_TABLE_REFUSED:"
CHECK_OUTCOMES = (CHECK_FAILED, TABLE_KEPT, KEPT_TABLE_REFUSED)


def dbt_executable() -> str:
    """The dbt beside this Python (the same virtual environment), else the first on PATH."""
    here = Path(sys.executable).with_name("dbt")
    if here.exists():
        return str(here)
    found = shutil.which("dbt")
    if not found:
        raise ProjectError("dbt is not installed in this environment; install assay with the dbt extra: pip install -e '.[dbt]' in its checkout.")
    return found


@dataclass
class DbtRun:
    """One finished dbt invocation: its output, and the node results it recorded (if any)."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    results: list[dict] = field(default_factory=list)  # run_results.json (or sources.json) of this run
    invocation_id: str = ""  # dbt's id of this run (the run id `assay checks` takes); '' when it wrote no artifact

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def checks_failed(self) -> bool:
        """True when the run failed only because checks did not pass.

        That is: dbt finished normally (exit 1, not its exit 2 for a run that could not
        start) and every unsuccessful node is a failed test, a stale source, an entity
        whose blocking checks refused the publish (CHECK_FAILED), a table a keep check kept
        after its publish (TABLE_KEPT) or a reader refused because it reads a kept table
        (KEPT_TABLE_REFUSED). Anything else (a compilation error, a database error) is a
        problem with the project or warehouse.
        """
        if self.returncode != 1 or not self.results:
            return False
        bad = [r for r in self.results if r.get("status") not in ("success", "pass", "warn", "skipped", "no-op")]
        return bool(bad) and all(
            r.get("status") == "fail"
            or (r.get("status") == "error" and any(word in (r.get("message") or "") for word in CHECK_OUTCOMES))
            or (r.get("status") == "error" and self.args[:1] == ("source",))  # freshness: error_after exceeded
            for r in bad
        )

    def error_lines(self, limit: int = 40) -> list[str]:
        """dbt's own words for what went wrong, without clocks and colours.

        dbt ends a failed run with a `Completed with N errors` section naming each failure; a
        run that could not start says `Encountered an error` or prints to stderr (bad flags).
        Whichever is there is returned, at most `limit` lines.
        """
        out = [_CLOCK.sub("", _ANSI.sub("", line)).rstrip() for line in self.stdout.splitlines()]
        err = [_ANSI.sub("", line).rstrip() for line in self.stderr.splitlines() if line.strip()]
        picked: list[str] = []
        for i, line in enumerate(out):
            if line.startswith("Completed with") or line.startswith("Encountered an error"):
                picked = [x for x in out[i:] if x.strip() and not x.startswith("Done.")]
                break
        if not picked:
            picked = [x for x in out if re.search(r"\b(error|fail(ed|ure)?)\b", x, re.I)]
        lines = picked + err
        if not lines:
            lines = [x for x in out if x.strip()][-10:]
        return lines[:limit] + ([f"... ({len(lines) - limit} more lines)"] if len(lines) > limit else [])

    def private_error_lines(self, limit: int = 40) -> list[str]:
        """`error_lines` for a spec with pii fields or redactions: dbt's own lines, which name the
        nodes and files (`Failure in model x (models/x.sql)`, `compiled code at ...`), and of the
        engine's message only its kind (privacy.engine_message): the engine may give a refused
        value anywhere in the rest, its excerpt of the query included."""
        from ..privacy import engine_message

        kept: list[str] = []
        engine: list[str] = []
        for line in self.error_lines(limit):
            if _DBT_OWN_LINE.match(line.strip()):
                if engine:
                    kept.append("  " + engine_message("\n".join(engine)))
                    engine = []
                kept.append(line)
            else:
                engine.append(line)
        if engine:
            kept.append("  " + engine_message("\n".join(engine)))
        return kept

    def freshness_lines(self) -> list[str]:
        """The per-source result lines of `dbt source freshness`, without clocks."""
        return [_CLOCK.sub("", _ANSI.sub("", line)).strip() for line in self.stdout.splitlines()
                if "freshness of" in line and " START " not in line]

    def summary(self) -> str:
        """dbt's closing `Done. PASS=... ERROR=...` line, or ''."""
        done = [line for line in self.stdout.splitlines() if "Done." in line or "Completed successfully" in line]
        return _ANSI.sub("", done[-1]).split("  ", 1)[-1].strip() if done else ""


def run_dbt(project_dir: Path, *args: str, capture: bool = True, unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`dbt <args>` in a project whose profiles.yml sits beside dbt_project.yml.

    The project directory is made absolute first: dbt runs with that directory as its working
    directory, where a relative `--project-dir` would no longer point at it. `unset` names
    environment variables dbt must not see (they would point it at another place).
    """
    project_dir = Path(project_dir).resolve()
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    env.setdefault("DBT_USE_COLORS", "false")
    cmd = [dbt_executable(), *args, "--project-dir", str(project_dir), "--profiles-dir", str(project_dir)]
    pipe = subprocess.PIPE if capture else None
    with subprocess.Popen(cmd, cwd=project_dir, env=env, stdout=pipe, stderr=pipe, text=True) as proc:
        try:
            out, err = proc.communicate()
        except KeyboardInterrupt:
            stop_child(proc)
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


# How long dbt may take to end its own way after Ctrl-C (it cancels its queries and writes its
# artifacts) before it is killed: assay never returns while its dbt still runs.
STOP_GRACE_SECONDS = 10


def stop_child(proc: subprocess.Popen) -> None:
    """Stop a dbt child on Ctrl-C: SIGINT (as a terminal sends), then kill after STOP_GRACE_SECONDS."""
    import signal

    if proc.poll() is not None:
        return
    try:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except KeyboardInterrupt:  # a second Ctrl-C: no more waiting
        proc.kill()
        proc.wait()


def run_dbt_step(project_dir: Path, *args: str, run=run_dbt) -> DbtRun:
    """Run dbt and collect what it recorded: node results of this run from target/ (none for `deps`).

    `run(project_dir, *args)` runs it: the CLI by default; the Spark demo passes its Spark child's
    `dbt`, which runs dbt on the Spark it already holds."""
    project_dir = Path(project_dir).resolve()
    started = time.time()
    proc = run(project_dir, *args)
    artifact = project_dir / "target" / ("sources.json" if args[:1] == ("source",) else "run_results.json")
    results: list[dict] = []
    invocation = ""
    # Only an artifact written by this very run says anything about it.
    if artifact.exists() and artifact.stat().st_mtime >= started - 1:
        try:
            data = json.loads(artifact.read_text(encoding="utf-8"))
            results = list(data.get("results", []))
            invocation = str((data.get("metadata") or {}).get("invocation_id") or "")
        except (OSError, ValueError, AttributeError):
            results = []
    return DbtRun(tuple(args), proc.returncode, proc.stdout or "", proc.stderr or "", results, invocation)


@dataclass(frozen=True)
class LastInvocation:
    """What dbt's last invocation in a project left in target/run_results.json: its id and the
    nodes that did not succeed (name, status), worst first."""

    invocation_id: str
    not_ok: tuple[tuple[str, str], ...]
    command: str = ""  # dbt's subcommand (`build`, `run`, `source` for freshness, `run-operation`, ...)
    succeeded: tuple[str, ...] = ()  # the models and snapshots it built, by name

    @property
    def built(self) -> bool:
        """Whether it was a build of models (`dbt build` or `dbt run`), whose tables record checks."""
        return self.command in ("build", "run")

    def stopped_by(self) -> str:
        """The nodes that stopped it, as a sentence part: `test X failed, model Y errored`."""
        verbs = {"fail": "failed", "error": "errored", "runtime error": "errored"}
        said = [f"{name} {verbs[status]}" for name, status in self.not_ok if status in verbs]
        return ", ".join(said) if said else "nothing failed in it"


def last_invocation(project_dir: Path, profiles_dir: Optional[Path] = None,
                    target: Optional[str] = None) -> "LastInvocation | None":
    """dbt's last invocation in `project_dir` when it ran against the profile target a command
    reads (`target`, default the profile's own); None without a readable target/run_results.json,
    or when that invocation built another target (`dbt build --target dev`, then `assay checks
    --target prod`: dev's invocation says nothing of prod's warehouse). Names and statuses only:
    dbt's messages may quote the data."""
    try:
        doc = json.loads((Path(project_dir) / "target" / "run_results.json").read_text(encoding="utf-8"))
        invocation = str(doc["metadata"]["invocation_id"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if invocation_target(doc, project_dir, profiles_dir, target) is not None:
        return None
    order = ("error", "runtime error", "fail")
    bad = [(str(r.get("unique_id", "")).split(".")[-1], str(r.get("status"))) for r in doc.get("results") or []
           if isinstance(r, dict) and r.get("status") in order
           and not str(r.get("unique_id", "")).startswith("source.")]  # `dbt source freshness` builds nothing
    bad.sort(key=lambda b: (order.index(b[1]), b[0]))
    args = doc.get("args") if isinstance(doc.get("args"), dict) else {}
    built = sorted({str(r.get("unique_id", "")).split(".")[-1] for r in doc.get("results") or []
                    if isinstance(r, dict) and r.get("status") == "success"
                    and str(r.get("unique_id", "")).startswith(("model.", "snapshot."))})
    return LastInvocation(invocation, tuple(bad), str(args.get("which") or ""), tuple(built))


def invocation_target(doc: dict, project_dir: Path, profiles_dir: Optional[Path], target: Optional[str]) -> "str | None":
    """None when the invocation of run_results.json `doc` used the profile target a command given
    `target` reads; else the target it used, for the command to say so. dbt writes `args.target`
    only when the invocation named one; otherwise it used the profile's default, as the command
    does without `--target`. Without a readable profile there is nothing to compare: the
    invocation is taken as the command's."""
    from .warehouse import profile_target

    args = doc.get("args") if isinstance(doc.get("args"), dict) else {}
    try:
        default = profile_target(project_dir, profiles_dir, None).target
    except Exception:  # noqa: BLE001 - no readable profile: the invocation is all there is
        return None
    used = args.get("target") or default
    return None if used == (target or default) else str(used)
