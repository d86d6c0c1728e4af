"""A real PostgreSQL server for tests: initdb + pg_ctl in a temporary folder, stopped and removed afterwards.

A plain module (tests/conftest.py puts tests/ on sys.path). The server
listens on 127.0.0.1 at a free port and on a unix socket in its folder, with
password authentication for user `tfx`. As root it runs as the `postgres`
user (initdb refuses root), which Debian's `postgresql` package creates.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from ports import free_port

__all__ = ["INSTALL", "postgres_bin", "running_postgres", "postgres_engine"]

INSTALL = "apt-get install -y postgresql (scripts/install_system_packages.sh does it)"
PASSWORD = "s3cret-pw"


def postgres_bin() -> str | None:
    """The folder holding Debian's initdb and pg_ctl (the newest version installed), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return os.path.dirname(found[-1]) if found else None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextmanager
def running_postgres() -> Iterator[str]:
    """Starts a server; yields its SQLAlchemy URL (database `postgres`, user `tfx`, password `PASSWORD`)."""
    bin_dir = postgres_bin()
    assert bin_dir, f"PostgreSQL is not installed: {INSTALL}"
    folder = tempfile.mkdtemp(prefix="yaml-tfx-pg-")
    data = os.path.join(folder, "data")
    port = free_port()
    try:
        with open(os.path.join(folder, "pw"), "w", encoding="utf-8") as handle:
            handle.write(PASSWORD)
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            for path in (folder, os.path.join(folder, "pw")):
                os.chown(path, user.pw_uid, user.pw_gid)
        subprocess.run(
            _as_server_user(
                [f"{bin_dir}/initdb", "-D", data, "-U", "tfx", "--auth=scram-sha-256", f"--pwfile={folder}/pw"]
            ),
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -k {folder} -h 127.0.0.1"
        subprocess.run(
            _as_server_user([f"{bin_dir}/pg_ctl", "-D", data, "-o", options, "-l", f"{folder}/log", "-w", "start"]),
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql://tfx:{PASSWORD}@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                _as_server_user([f"{bin_dir}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"]), capture_output=True
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def postgres_engine() -> Iterator[tuple[str, object]]:
    """A running server's URL and a SQLAlchemy engine on it (disposed after); skips the test without PostgreSQL."""
    import pytest

    if postgres_bin() is None:
        pytest.skip(f"PostgreSQL is not installed: {INSTALL}")
    import sqlalchemy

    with running_postgres() as url:
        engine = sqlalchemy.create_engine(url)
        try:
            yield url, engine
        finally:
            engine.dispose()
