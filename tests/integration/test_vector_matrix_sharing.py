"""The sqlite-vec index keeps the matrix it loaded for the next index opened on the same file
in this process (the prompt hook's helper opens the store afresh for every prompt), and never
serves a stale one: a write by another index, another process, the same id embedded again, a
store whose file was replaced are all seen by the next search."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.adapters.vectors.local import SqliteVecIndex
from swarmmem.core.model.errors import EmbeddingUnavailableError

DIM = 8


def unit(*values: float) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    SqliteStore(path).close()
    try:
        SqliteVecIndex(path, DIM).close()
    except EmbeddingUnavailableError as exc:
        pytest.skip(str(exc))
    return path


def index_on(db: Path) -> SqliteVecIndex:
    return SqliteVecIndex(db, DIM)


def test_a_second_index_on_the_file_takes_the_loaded_matrix(db: Path) -> None:
    first = index_on(db)
    first.upsert(["a", "b"], np.stack([unit(1), unit(0, 1)]))
    assert [key for key, _ in first.search(unit(1), 1)] == ["a"]
    loaded = first._matrix()[1]
    second = index_on(db)
    assert second._matrix()[1] is loaded  # not read again
    assert second.search(unit(0, 1), 1)[0][0] == "b"
    first.close()
    second.close()


def test_a_write_by_another_index_in_this_process_is_seen(db: Path) -> None:
    reader, writer = index_on(db), index_on(db)
    writer.upsert(["a"], unit(1).reshape(1, DIM))
    assert [k for k, _ in reader.search(unit(1), 5)] == ["a"]
    writer.upsert(["b"], unit(1, 0.1).reshape(1, DIM))
    assert [k for k, _ in reader.search(unit(1), 5)] == ["a", "b"]
    assert [k for k, _ in index_on(db).search(unit(1), 5)] == ["a", "b"]
    writer.delete(["a"])
    assert [k for k, _ in index_on(db).search(unit(1), 5)] == ["b"]


def test_the_same_id_embedded_again_is_seen(db: Path) -> None:
    """The replaced vector keeps the id and the row count: only the version says it moved."""
    writer = index_on(db)
    writer.upsert(["a", "b"], np.stack([unit(1), unit(0, 1)]))
    assert index_on(db).search(unit(1), 1)[0][0] == "a"
    writer.upsert(["a"], unit(0, 0, 1).reshape(1, DIM))
    hits = dict(index_on(db).search(unit(0, 0, 1), 2))
    assert hits["a"] == pytest.approx(1.0)


def test_a_write_by_another_process_is_seen(db: Path) -> None:
    index = index_on(db)
    index.upsert(["a"], unit(1).reshape(1, DIM))
    assert [k for k, _ in index_on(db).search(unit(1), 5)] == ["a"]
    code = (
        "import sys, numpy as np\n"
        "from swarmmem.adapters.vectors.local import SqliteVecIndex\n"
        f"v = np.zeros((1, {DIM}), np.float32); v[0, 1] = 1\n"
        f"SqliteVecIndex(sys.argv[1], {DIM}).upsert(['b'], v)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db)], check=True)
    assert sorted(k for k, _ in index_on(db).search(unit(1), 5)) == ["a", "b"]


def test_a_store_without_a_version_is_read_anew_until_its_next_write(db: Path) -> None:
    """Vectors written before the version existed are not shared (nothing says when they
    change); opening writes nothing, and the next write gives the file a version."""
    index = index_on(db)
    index.upsert(["a"], unit(1).reshape(1, DIM))
    index._conn.execute("DELETE FROM embedding_config WHERE key = 'vectors_version'")
    first = index_on(db)
    assert index_on(db)._matrix()[1] is not first._matrix()[1]
    assert (
        index._conn.execute(
            "SELECT 1 FROM embedding_config WHERE key = 'vectors_version'"
        ).fetchone()
        is None
    )
    index.upsert(["b"], unit(0, 1).reshape(1, DIM))
    second = index_on(db)
    assert index_on(db)._matrix()[1] is second._matrix()[1]
    assert [k for k, _ in second.search(unit(0, 1), 1)] == ["b"]


def test_a_replaced_file_is_read_anew(db: Path, tmp_path: Path) -> None:
    index_on(db).upsert(["a"], unit(1).reshape(1, DIM))
    assert [k for k, _ in index_on(db).search(unit(1), 5)] == ["a"]
    other = tmp_path / "other.db"
    SqliteStore(other).close()
    index_on(other).upsert(["z"], unit(1).reshape(1, DIM))
    db.unlink()
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    other.rename(db)
    assert [k for k, _ in index_on(db).search(unit(1), 5)] == ["z"]
