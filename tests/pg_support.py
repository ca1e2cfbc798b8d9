"""A PostgreSQL server (with pgvector) for the tests: ``SWARMMEM_PG_DSN`` or one ``pgserver``.

``server_dsn()`` starts at most one server per test process, the first time a test needs it:
the server from ``SWARMMEM_PG_DSN`` when that is set, else a throw-away ``pgserver`` cluster
(PostgreSQL 16 with pgvector, from PyPI) in a temporary directory, stopped and deleted when
the process exits. Each test gets a schema of its own (``schema_for``), so tests never see
each other's rows. Without a server the PostgreSQL tests skip with the reason, unless
``SWARMMEM_PG_REQUIRED=1`` (then they fail).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import secrets
import shutil
import stat
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENV_DSN = "SWARMMEM_PG_DSN"
ENV_REQUIRED = "SWARMMEM_PG_REQUIRED"
_STATE: dict[str, Any] = {}


def _start_pgserver() -> str:
    """Start a temporary pgserver cluster and return its DSN (raises RuntimeError)."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise RuntimeError("psycopg is not installed (pip install '.[postgres]')") from exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        try:
            import pgserver
        except ImportError as exc:
            raise RuntimeError(f"neither {ENV_DSN} is set nor pgserver is installed") from exc
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # as root, pgserver runs PostgreSQL as a separate user whose initdb writes /dev/null
        try:
            mode = os.stat("/dev/null").st_mode
        except OSError as exc:
            raise RuntimeError(f"/dev/null is unusable: {exc}") from exc
        if not stat.S_ISCHR(mode):
            raise RuntimeError("/dev/null is not a character device, initdb cannot run")
    parent = Path(tempfile.mkdtemp(prefix="swarmmem-pg-"))
    atexit.register(shutil.rmtree, parent, ignore_errors=True)  # runs after pgserver's stop
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = pgserver.get_server(parent / "data", cleanup_mode="delete")
    _STATE["server"] = server
    return str(server.get_uri())


def _prepare(dsn: str) -> None:
    """Install pgvector in ``public`` when possible (the vector tests skip otherwise)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
            _STATE["vector"] = None
        except psycopg.Error as exc:
            _STATE["vector"] = f"pgvector is not available on the server: {exc}".strip()


def server_dsn() -> str | None:
    """The DSN of the test server, starting it on first use; ``None`` when there is none."""
    if "dsn" not in _STATE:
        dsn = os.environ.get(ENV_DSN) or None
        reason = None
        try:
            if dsn is None:
                dsn = _start_pgserver()
            _prepare(dsn)
        except Exception as exc:
            dsn, reason = None, f"no PostgreSQL server for the tests: {exc}"
        _STATE["dsn"], _STATE["reason"] = dsn, reason
        if dsn is not None and os.environ.get(ENV_DSN):
            atexit.register(_drop_schemas)
    return _STATE["dsn"]  # type: ignore[no-any-return]


def unavailable_reason() -> str:
    """Why there is no server (after ``server_dsn()`` returned ``None``)."""
    return str(_STATE.get("reason") or "no PostgreSQL server")


def require_dsn() -> str:
    """The test server's DSN, or skip (fail under ``SWARMMEM_PG_REQUIRED=1``)."""
    dsn = server_dsn()
    if dsn is None:
        if os.environ.get(ENV_REQUIRED) == "1":
            pytest.fail(unavailable_reason())
        pytest.skip(unavailable_reason())
    return dsn


def require_vector() -> str:
    """The DSN of a test server with pgvector, or skip."""
    dsn = require_dsn()
    if _STATE.get("vector"):
        pytest.skip(str(_STATE["vector"]))
    return dsn


def postgres_available() -> bool:
    """True when a server is (or can be) running for the tests."""
    return server_dsn() is not None


def schema_for(directory: Path | str) -> str:
    """A schema name that belongs to one test directory (the same directory, the same one)."""
    digest = hashlib.sha256(str(Path(directory).resolve()).encode("utf-8")).hexdigest()
    name = "t_" + digest[:24]
    _STATE.setdefault("schemas", set()).add(name)
    return name


def open_pg_store(directory: Path, clock: Any = None, **kwargs: Any) -> Any:
    """A PostgresStore in the schema of ``directory`` (skips without a server)."""
    from swarmmem.adapters.storage.postgres import PostgresStore

    dsn = require_dsn()
    return PostgresStore(dsn, clock=clock, schema=schema_for(directory), pool_size=2, **kwargs)


@contextlib.contextmanager
def login_roles(
    admin: str, directory: Path, *names: str
) -> Iterator[tuple[str, dict[str, str], dict[str, str]]]:
    """A migrated schema (``schema_for(directory)``, owned by ``admin``) and one fresh login
    role per name; yields the schema, the roles and their DSNs (both keyed by name) and drops
    the roles and what they own afterwards."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from swarmmem.adapters.storage.postgres import PostgresStore

    def role_dsn(role: str, password: str) -> str:
        params = conninfo_to_dict(admin)
        params.update(user=role, password=password)
        return make_conninfo("", **params)

    schema = schema_for(directory)
    PostgresStore(admin, schema=schema, pool_size=1, cache=False).close()
    suffix = secrets.token_hex(4)
    roles = {name: f"swarm_{name}_{suffix}" for name in names}
    password = secrets.token_hex(12)
    with psycopg.connect(admin, autocommit=True) as conn:
        for role in roles.values():
            conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
    try:
        yield schema, roles, {name: role_dsn(role, password) for name, role in roles.items()}
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for role in roles.values():
                conn.execute(f'DROP OWNED BY "{role}" CASCADE')
                conn.execute(f'DROP ROLE "{role}"')


def _drop_schemas() -> None:
    """Drop the per-test schemas from an external server (a pgserver cluster is deleted)."""
    import psycopg
    from psycopg import sql

    dsn = _STATE.get("dsn")
    schemas = sorted(_STATE.get("schemas", ()))
    if not dsn or not schemas:
        return
    with contextlib.suppress(Exception), psycopg.connect(dsn, autocommit=True) as conn:
        for name in schemas:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def chain_writer(dsn: str, schema: str, worker: int, count: int) -> None:
    """Child-process body of the concurrent writer test: ``count`` upserts and events."""
    from factories import make_memory

    from swarmmem.adapters.storage.postgres import PostgresStore

    store = PostgresStore(dsn, schema=schema, pool_size=1, cache=False)
    try:
        for i in range(count):
            store.upsert(make_memory(f"worker {worker} fact number {i}"))
            store.append_event("note", f"w{worker}-{i}", reason="concurrent writer")
    finally:
        store.close()


def recall_client(
    kind: str, location: str, schema: str | None, queries: list[str], rounds: int, barrier: Any
) -> float:
    """Child-process body of the concurrent recall benchmark: seconds for ``rounds`` recalls."""
    import time

    from swarmmem.core.model.records import MemoryScope, RecallRequest
    from swarmmem.core.recall.pipeline import run_recall

    if kind == "postgres":
        from swarmmem.adapters.storage.postgres import PostgresStore

        store: Any = PostgresStore(location, schema=schema, pool_size=1)
    else:
        from swarmmem.adapters.storage.sqlite import SqliteStore

        store = SqliteStore(location)
    scope = MemoryScope(type="repository", repo_id="bench")
    try:
        requests = [
            RecallRequest(query=q, scopes=(scope,), max_items=8, mode="manual") for q in queries
        ]
        run_recall(store, requests[0], now="2026-02-01T00:00:00.000Z")[0]  # warm caches
        barrier.wait(60)
        started = time.perf_counter()
        for i in range(rounds):
            run_recall(store, requests[i % len(requests)], now="2026-02-01T00:00:00.000Z")[0]
        return time.perf_counter() - started
    finally:
        store.close()


def timed_client(results: Any, *args: Any) -> None:
    """``recall_client`` in a process: puts its elapsed seconds on ``results``."""
    results.put(recall_client(*args))
