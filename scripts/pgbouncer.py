"""A private PgBouncer in transaction mode in front of a PostgreSQL server, for the tests and
the benchmark that run the service through a connection pooler.

PgBouncer comes from the system's package manager: when the binary is absent and this process
is root with ``apt-get``, ``install()`` installs Debian's ``pgbouncer`` package (as
``scripts/test.sh`` does with Chromium); otherwise it says what to install. The package's own
service is never started or touched: every PgBouncer started here is a private process with its
configuration, authentication file, log and pid file in one directory of its own, listening on
127.0.0.1 on a port of its own (no Unix socket), in ``pool_mode = transaction``, with
``auth_type = trust`` for the upstream's user (the upstream's password, if its URL has one, goes
to the server side only). Its pool holds ``2 × cores`` server connections (at least 4) per
database, so PostgreSQL sees the pool, not the clients.

PgBouncer refuses to run as root: under uid 0 it runs as ``nobody`` (setpriv), which then owns
the directory.

As a command (the URL printed is the upstream's with PgBouncer's host and port)::

    python scripts/pgbouncer.py install
    python scripts/pgbouncer.py start DIR UPSTREAM_URL [PORT]   # prints the DATABASE_URL
    python scripts/pgbouncer.py stop DIR

It imports nothing of the project or of Django, so the tests and ``benchmarks/harness`` import
it (``scripts.pgbouncer``) before or beside the settings.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

PACKAGE = "pgbouncer"
# Where Debian's package puts the binary (/usr/sbin is not on every user's PATH).
BINARY_PATHS = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer")
UNPRIVILEGED_USER = "nobody"
LISTEN_HOST = "127.0.0.1"
MIN_POOL_SIZE = 4
START_TIMEOUT = 15.0  # seconds for the listener to accept connections
STOP_TIMEOUT = 10.0
APT_LOCK_TIMEOUT = 300  # seconds apt-get waits for another install's lock
CONFIG_NAME = "pgbouncer.ini"
PID_NAME = "pgbouncer.pid"
LOG_NAME = "pgbouncer.log"
USERS_NAME = "userlist.txt"


class PgBouncerError(RuntimeError):
    """PgBouncer could not be installed, started or stopped; the message says why."""


def binary() -> str | None:
    """The ``pgbouncer`` executable, None when it is not installed."""
    found = shutil.which(PACKAGE)
    if found:
        return found
    return next((path for path in BINARY_PATHS if os.access(path, os.X_OK)), None)


def install() -> str:
    """The ``pgbouncer`` executable, installed with apt-get first when absent and this process
    may (root, apt-get present); raises ``PgBouncerError`` saying what to install otherwise."""
    found = binary()
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise PgBouncerError(
            f"PgBouncer is not installed; install it with the system's package manager "
            f"(Debian: apt-get install {PACKAGE})."
        )
    lock = f"DPkg::Lock::Timeout={APT_LOCK_TIMEOUT}"
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "-o", lock, "update", "-qq"],
        ["apt-get", "-o", lock, "install", "-y", "-qq", PACKAGE],
    ):
        result = subprocess.run(  # noqa: S603 - fixed commands
            command, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=environment
        )
        if result.returncode != 0:
            raise PgBouncerError(
                f"PgBouncer: {' '.join(command)} failed (exit {result.returncode}): "
                f"{(result.stderr or result.stdout).strip()[-2000:]}"
            )
    found = binary()
    if not found:
        raise PgBouncerError(f"PgBouncer: apt-get installed {PACKAGE} but no binary was found.")
    return found


def pool_size_default() -> int:
    """Server connections per database: twice the cores PostgreSQL shares this machine with."""
    return max(MIN_POOL_SIZE, 2 * (os.cpu_count() or 1))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LISTEN_HOST, 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Upstream:
    """The PostgreSQL server PgBouncer connects to, read from a ``DATABASE_URL``."""

    host: str  # a host name or address, or a Unix socket directory
    port: int
    user: str
    password: str
    database: str

    @classmethod
    def from_url(cls, url: str) -> Upstream:
        parts = urlsplit(url)
        if parts.scheme not in ("postgres", "postgresql", "pgsql"):
            raise PgBouncerError(f"PgBouncer: {parts.scheme}:// is not a PostgreSQL URL.")
        host = unquote(parts.hostname or "")
        socket_dir = parse_qs(parts.query).get("host", [""])[0]
        return cls(
            host=socket_dir or host or "127.0.0.1",
            port=parts.port or 5432,
            user=unquote(parts.username or "postgres"),
            password=unquote(parts.password or ""),
            database=unquote(parts.path.lstrip("/")) or "postgres",
        )

    def connect_string(self, database: str | None) -> str:
        """A ``[databases]`` entry's value: ``database`` of this server, or the client's
        database name when None."""
        fields = [f"host={self.host}", f"port={self.port}", f"user={self.user}"]
        if database is not None:
            fields.append(f"dbname={database}")
        if self.password:
            fields.append(f"password={self.password}")
        return " ".join(fields)


def config_text(
    directory: Path,
    *,
    upstream: Upstream,
    databases: Sequence[str],
    port: int,
    pool_size: int,
) -> str:
    """``pgbouncer.ini``: the named databases (and any other one of the same server, ``*``),
    transaction pooling, trust for the upstream's user from 127.0.0.1 only."""
    entries = [f"{name} = {upstream.connect_string(name)}" for name in dict.fromkeys(databases)]
    lines = [
        "[databases]",
        *entries,
        f"* = {upstream.connect_string(None)}",
        "",
        "[pgbouncer]",
        f"listen_addr = {LISTEN_HOST}",
        f"listen_port = {port}",
        "unix_socket_dir =",
        "auth_type = trust",
        f"auth_file = {directory / USERS_NAME}",
        f"admin_users = {upstream.user}",
        f"stats_users = {upstream.user}",
        "pool_mode = transaction",
        f"default_pool_size = {pool_size}",
        f"max_db_connections = {pool_size * 2}",
        "reserve_pool_size = 0",
        "max_client_conn = 1000",
        # psycopg and Django send nothing else at startup; a client that does is not refused.
        "ignore_startup_parameters = extra_float_digits,options",
        "log_connections = 0",
        "log_disconnections = 0",
        f"logfile = {directory / LOG_NAME}",
        f"pidfile = {directory / PID_NAME}",
        "",
    ]
    return "\n".join(lines)


def _account() -> pwd.struct_passwd | None:
    """The account to run as: None for this process's own, ``nobody`` for root."""
    if os.geteuid() != 0:
        return None
    return pwd.getpwnam(UNPRIVILEGED_USER)


def _command(executable: str, config: Path, account: pwd.struct_passwd | None) -> list[str]:
    command = [executable, "-d", "-q", str(config)]
    if account is None:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise PgBouncerError(
            f"PgBouncer: running as root needs setpriv (util-linux) to start it as "
            f"{UNPRIVILEGED_USER}."
        )
    return [
        setpriv,
        f"--reuid={account.pw_uid}",
        f"--regid={account.pw_gid}",
        "--clear-groups",
        *command,
    ]


def _wait_listening(port: int, deadline: float, log: Path) -> None:
    while True:
        try:
            with socket.create_connection((LISTEN_HOST, port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                tail = log.read_text()[-2000:] if log.exists() else "(no log)"
                raise PgBouncerError(
                    f"PgBouncer did not listen on {LISTEN_HOST}:{port}: {tail}"
                ) from None
            time.sleep(0.05)


def client_url(upstream: Upstream, port: int, database: str | None = None) -> str:
    """A ``DATABASE_URL`` of ``database`` (the upstream's by default) through PgBouncer."""
    name = quote(database or upstream.database, safe="")
    return f"postgres://{quote(upstream.user, safe='')}@{LISTEN_HOST}:{port}/{name}"


def start(
    directory: Path,
    *,
    upstream: Upstream | str,
    databases: Sequence[str] = (),
    port: int = 0,
    pool_size: int = 0,
) -> str:
    """Writes the configuration into ``directory`` and starts PgBouncer (installing it first
    when absent and allowed); returns the ``DATABASE_URL`` of the upstream's database through
    it. ``upstream`` is the server's ``DATABASE_URL`` or its parts; ``port`` 0 picks a free
    one; ``pool_size`` 0 sizes the pool to the cores."""
    executable = install()
    if isinstance(upstream, str):
        upstream = Upstream.from_url(upstream)
    stop(directory)
    directory.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    config = directory / CONFIG_NAME
    (directory / USERS_NAME).write_text(f'"{upstream.user}" ""\n')
    config.write_text(
        config_text(
            directory,
            upstream=upstream,
            databases=[upstream.database, *databases],
            port=port,
            pool_size=pool_size or pool_size_default(),
        )
    )
    (directory / LOG_NAME).unlink(missing_ok=True)
    account = _account()
    if account is not None:
        for path in (directory, *directory.iterdir()):
            os.chown(path, account.pw_uid, account.pw_gid)
    result = subprocess.run(  # noqa: S603 - our configuration, the system's binary
        _command(executable, config, account),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise PgBouncerError(
            f"PgBouncer failed to start (exit {result.returncode}): "
            f"{(result.stderr or result.stdout).strip()}"
        )
    _wait_listening(port, time.monotonic() + START_TIMEOUT, directory / LOG_NAME)
    return client_url(upstream, port)


def pid(directory: Path) -> int | None:
    """The running PgBouncer of ``directory``, None when none runs."""
    try:
        number = int((directory / PID_NAME).read_text().strip())
        cmdline = Path(f"/proc/{number}/cmdline").read_bytes()
    except (FileNotFoundError, ValueError):
        return None
    return number if str(directory / CONFIG_NAME).encode() in cmdline else None


def stop(directory: Path) -> None:
    """Stops the PgBouncer of ``directory`` if one runs (SIGTERM: immediate shutdown; its
    clients' open transactions are rolled back by PostgreSQL)."""
    number = pid(directory)
    if number is None:
        return
    os.kill(number, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while pid(directory) is not None:
        if time.monotonic() > deadline:
            os.kill(number, signal.SIGKILL)
            break
        time.sleep(0.05)


def main(argv: list[str]) -> int:
    usage = "usage: python scripts/pgbouncer.py install | start DIR UPSTREAM_URL [PORT] | stop DIR"
    try:
        if argv == ["install"]:
            print(install())
        elif len(argv) in (3, 4) and argv[0] == "start":
            port = int(argv[3]) if len(argv) == 4 else 0
            print(start(Path(argv[1]).resolve(), upstream=argv[2], port=port))
        elif len(argv) == 2 and argv[0] == "stop":
            stop(Path(argv[1]).resolve())
        else:
            print(usage, file=sys.stderr)
            return 2
    except PgBouncerError as error:
        print(error, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
