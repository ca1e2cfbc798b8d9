"""Which SQLite module to use, and what it can do (FTS5, loading sqlite-vec)."""

from __future__ import annotations

import functools
import importlib.util
import os
from types import ModuleType
from typing import Any


def sqlite_module() -> ModuleType:
    """``pysqlite3`` when installed (it can load extensions), else the standard ``sqlite3``."""
    try:
        import pysqlite3 as module
    except ImportError:
        import sqlite3 as module
    return module  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1)
def sqlite_capabilities() -> dict[str, Any]:
    """SQLite version, FTS5 support and whether sqlite-vec loads (with the reason if not)."""
    module = sqlite_module()
    conn = module.connect(":memory:")
    try:
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            fts5 = True
        except module.DatabaseError:
            fts5 = False
        vec, reason = load_vec(conn)
        return {
            "module": module.__name__,
            "version": module.sqlite_version,
            "fts5": fts5,
            "sqlite_vec": vec,
            "sqlite_vec_reason": reason,
        }
    finally:
        conn.close()


def load_vec(conn: Any) -> tuple[bool, str | None]:
    """Load sqlite-vec into ``conn``; ``(loaded, reason_if_not)``."""
    if not hasattr(conn, "enable_load_extension"):
        return False, "this Python's sqlite3 cannot load extensions (install pysqlite3-binary)"
    # the extension lies beside the package's __init__ (as its loadable_path() says); found
    # without importing the package, whose import also imports numpy
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        return False, "sqlite-vec is not installed"
    try:
        conn.enable_load_extension(True)
        conn.load_extension(os.path.join(os.path.dirname(spec.origin), "vec0"))
        conn.enable_load_extension(False)
    except Exception as exc:
        return False, f"sqlite-vec failed to load: {exc}"
    return True, None
