"""runtime/derby_lock.py asks the kernel who holds a Derby metastore's lock file, without a JVM:
a real lock taken by another process (as Java's FileChannel.tryLock takes Derby's), then gone."""

from __future__ import annotations

import select
import struct
import subprocess
import sys
import textwrap

import pytest

from assay.runtime.derby_lock import holder, metastore_dir

URL = "spark.hadoop.javax.jdo.option.ConnectionURL"

# Another process locks dbex.lck as Derby's JVM does (fcntl, whole file), says so, and holds it
# until its input closes.
LOCKER = textwrap.dedent("""
    import fcntl, os, sys
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("locked", flush=True)
    sys.stdin.read()
""")


@pytest.mark.skipif(not sys.platform.startswith("linux") or struct.calcsize("P") != 8, reason="derby_lock asks only on 64-bit Linux")
def test_a_lock_another_process_holds_names_it_and_is_gone_with_it(tmp_path):
    database = tmp_path / "spark" / "metastore_db"
    database.mkdir(parents=True)
    settings = {URL: f"jdbc:derby:;databaseName={database};create=true"}
    assert metastore_dir(settings) == database
    assert holder(settings) is None  # no lock file yet: a metastore never opened
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(database / "dbex.lck")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        # a deadline on the locker's word, and on its end below: a hang fails here, naming it
        assert select.select([locker.stdout], [], [], 60)[0], "the locking process said nothing in 60 s"
        assert locker.stdout.readline() == "locked\n"
        assert holder(settings) == locker.pid
        assert holder(settings) == locker.pid  # asking took nothing: the holder still holds it
    finally:
        locker.stdin.close()
        locker.wait(timeout=30)
    # the kernel drops the lock with its process: the file stays, nobody holds it
    assert (database / "dbex.lck").exists() and holder(settings) is None


def test_a_profile_without_a_derby_database_is_not_asked():
    assert metastore_dir({}) is None and holder({}) is None
    assert holder({URL: "jdbc:mysql://db/metastore"}) is None
    # Derby's attributes in another order still name the database
    assert str(metastore_dir({URL: "jdbc:derby:;create=true;databaseName=/x/metastore_db"})) == "/x/metastore_db"
    assert str(metastore_dir({URL: "jdbc:derby:/x/metastore_db;create=true"})) == "/x/metastore_db"
    # a relative name is relative to derby.system.home, which the JVM decides: not guessed
    assert metastore_dir({URL: "jdbc:derby:;databaseName=metastore_db;create=true"}) is None


@pytest.mark.skipif(not sys.platform.startswith("linux") or struct.calcsize("P") != 8, reason="derby_lock asks only on 64-bit Linux")
def test_a_holder_that_is_ending_is_waited_for_and_a_live_one_named(tmp_path):
    """An outside tester (session 36): an `assay` command started as dbt returned found dbt's Spark
    JVM still ending (its parent gone), and refused; such a holder is waited for while it lets go,
    a holder whose parent runs is named at once."""
    import time

    from assay.runtime.derby_lock import holder_after_settling

    database = tmp_path / "metastore_db"
    database.mkdir()
    settings = {URL: f"jdbc:derby:;databaseName={database};create=true"}
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(database / "dbex.lck")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert select.select([locker.stdout], [], [], 60)[0], "the locking process said nothing in 60 s"
        assert locker.stdout.readline() == "locked\n"
        started = time.monotonic()
        assert holder_after_settling(settings) == locker.pid  # its parent (this test) runs: named at once
        assert time.monotonic() - started < 5
    finally:
        locker.stdin.close()
        locker.wait(timeout=30)
    # an orphan that holds the lock a second longer, as a JVM ending after dbt returned
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import fcntl, os, time; fd = os.open({str(database / 'dbex.lck')!r}, os.O_RDWR); "
                                  "fcntl.lockf(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(1.5)"], stdout=subprocess.PIPE, text=True)
        print(child.stdout.readline().strip(), child.pid, flush=True)
    """)], stdout=subprocess.PIPE, text=True)
    said, pid = parent.stdout.readline().split()
    parent.wait(timeout=30)  # the parent is gone: its child is an orphan still holding the lock
    assert said == "locked" and holder_after_settling(settings, within=30) is None
