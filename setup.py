"""Build the Cython kernels and map the folders (``src/swarmmem``, ``core``, ``ports``,
``adapters``, ``_speedups``, ``fixtures``) into the single ``swarmmem`` package.

Environment:
    SWARMMEM_CYTHON_DEBUG=1  bounds checks, wraparound and line tracing back on.
    SWARMMEM_NO_EXTENSIONS=1 skip compiling; the pure-Python twins are used.
    CI=<anything>            a failed compile is an error instead of a loud fallback.
"""

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

PACKAGE_DIR = {
    "swarmmem": "src/swarmmem",
    "swarmmem.core": "core",
    "swarmmem.ports": "ports",
    "swarmmem.adapters": "adapters",
    "swarmmem._speedups": "_speedups",
    "swarmmem.fixtures": "fixtures",
}


def _packages():
    """Every package under the mapped folders (``core/model`` -> ``swarmmem.core.model``...)."""
    found = []
    for name, folder in PACKAGE_DIR.items():
        found.append(name)
        for init in sorted(Path(folder).rglob("__init__.py")):
            rel = init.parent.relative_to(folder)
            if rel.parts and "build" not in rel.parts:
                found.append(".".join((name, *rel.parts)))
    return found


PACKAGES = _packages()
KERNELS = ["fusion", "lexical", "jaccard", "bm25"]

DEBUG = os.environ.get("SWARMMEM_CYTHON_DEBUG") == "1"
DIRECTIVES = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
    "linetrace": DEBUG,
}


def _extensions():
    if os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        _fallback("Cython is not installed")
        return []
    from setuptools import Extension

    macros = [("CYTHON_TRACE_NOGIL", "1")] if DEBUG else []
    exts = [
        Extension(
            f"swarmmem._speedups._{name}_c",
            [str(Path("_speedups") / f"_{name}_c.pyx")],
            define_macros=macros,
            extra_compile_args=["-O2"] if not DEBUG else ["-O0", "-g"],
        )
        for name in KERNELS
    ]
    return cythonize(exts, compiler_directives=DIRECTIVES, quiet=True)


def _fallback(why):
    if os.environ.get("CI"):
        raise SystemExit(f"swarmmem: compiling the Cython kernels failed ({why}) and CI is set")
    bar = "!" * 78
    print(
        f"\n{bar}\nswarmmem: Cython kernels NOT built ({why}).\n"
        f"The pure-Python twins will be used; recall is much slower.\n{bar}\n",
        file=sys.stderr,
    )


class OptionalBuildExt(build_ext):
    """Fall back to the pure twins when a compiler is missing, except under CI."""

    def run(self):
        try:
            super().run()
        except Exception as exc:
            _fallback(str(exc))

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            _fallback(f"{ext.name}: {exc}")


setup(
    package_dir=PACKAGE_DIR,
    packages=PACKAGES,
    ext_modules=_extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
)
