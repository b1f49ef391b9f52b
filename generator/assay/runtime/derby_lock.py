"""Whether another process has a Spark project's embedded Derby metastore open, asked of the
kernel before a JVM starts.

Derby admits one process per database. While a process has it open, Derby holds an exclusive
POSIX record lock (Java's `FileChannel.tryLock`, which is `fcntl`) on `dbex.lck` in the database's
directory; the kernel drops it when that process ends, so a lock found is a live holder, never a
stale file. `F_GETLK` asks who holds a lock without taking one, so asking cannot make a dbt
command that starts at the same moment fail. A JVM that finds the lock fails after 15-20 s of
start-up with Derby's XSDB6; asked first, a command refuses in milliseconds and names the holder.

Only 64-bit Linux's `struct flock` layout is spelled here; elsewhere (and when the profile names
no Derby database by an absolute path) nothing is asked and the JVM's own failure says it.
"""

from __future__ import annotations

import os
import struct
import sys
import time
from pathlib import Path
from typing import Optional

from .derby_url import CONNECTION_URL, database

# struct flock on 64-bit Linux (x86_64, aarch64): l_type, l_whence, l_start, l_len, l_pid, padding
_FLOCK = "hhqqi4x"
_LOCK_FILE = "dbex.lck"  # Derby's exclusive lock file (db.lck only holds the owner's UUID)


def metastore_dir(settings: dict[str, str]) -> Optional[Path]:
    """The Derby database directory a Spark session with these settings opens, when the profile names
    it by an absolute path (`jdbc:derby:;databaseName=/abs/metastore_db` or `jdbc:derby:/abs/...`); a
    relative name depends on `derby.system.home` and is not guessed."""
    found = database(settings.get(CONNECTION_URL, ""))
    return Path(found.name) if found and Path(found.name).is_absolute() else None


def holder(settings: dict[str, str]) -> Optional[int]:
    """The process id holding the metastore these Spark settings open (-1 when the kernel does not
    say which process), or None when no process holds it or it cannot be asked here."""
    database = metastore_dir(settings)
    if database is None or not sys.platform.startswith("linux") or struct.calcsize("P") != 8:
        return None
    import fcntl  # POSIX only

    try:
        fd = os.open(database / _LOCK_FILE, os.O_RDONLY)
    except OSError:  # no database yet, or never opened: nothing holds it
        return None
    try:
        # l_len 0: the whole file, whatever range the holder locked
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    except OSError:
        return None
    finally:
        os.close(fd)
    kind, _, _, _, pid = struct.unpack(_FLOCK, answer)
    return None if kind == fcntl.F_UNLCK else pid


# How long a holder may take to let go: a dbt command returns while its Spark JVM (a child of the
# process) is still ending, and an `assay` command started right after found it (an outside
# tester, session 36). Only a holder whose parent has gone is waited for (the JVM of a dbt that
# returned is handed to init); a live one (a build running) is named at once.
SETTLE_SECONDS = 10.0


def _orphaned(pid: int) -> bool:
    """Whether process `pid` has lost its parent (Linux: its parent is now init, or gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ppid = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:")), None)
    return ppid is not None and (ppid <= 1 or not Path(f"/proc/{ppid}").exists())


def holder_after_settling(settings: dict[str, str], within: float = SETTLE_SECONDS) -> Optional[int]:
    """`holder`; while it is an orphaned process (ending), asked again every quarter second for up
    to `within` seconds."""
    found = holder(settings)
    deadline = time.monotonic() + within
    while found is not None and found > 0 and _orphaned(found) and time.monotonic() < deadline:
        time.sleep(0.25)
        found = holder(settings)
    return found
