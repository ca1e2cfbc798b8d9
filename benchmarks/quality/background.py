"""Build the background word-frequency table that admission weighs query terms with.

    python -m benchmarks.quality.background [--min-df 3] [--out core/recall/background_table.py]

A store of 20 memories has no usable document frequencies of its own, so the admission stage
(:mod:`swarmmem.core.recall.admission`) weighs a query's words by how common they are in
writing about code in general: the document frequency of each Porter stem (the same stems the
stemmed BM25 channel indexes) over every docstring of the standard library of the Python that
runs this script, one docstring a document. Words such as "use", "run", "get", "value" or
"test" are in thousands of them; "ansi", "validator" or "frozen" in a few dozen at most.

The table keeps stems found in at least ``--min-df`` docstrings. It is written once, at
development time, as a Python module (``DOCUMENTS`` and ``FREQUENCIES``, ``stem count`` pairs
in one string, most frequent first) shipped with the package.
"""

from __future__ import annotations

import argparse
import ast
import sys
import textwrap
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.stdlib_docs import stdlib_docstrings
from swarmmem.core.recall.stemming import stemmed_tokens

_SKIPPED = {"test", "tests", "idlelib", "turtledemo", "lib2to3", "site-packages", "__pycache__"}
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "core" / "recall" / "background_table.py"
_HEADER = '''"""Background document frequencies of word stems (generated: do not edit).

Written by ``python -m benchmarks.quality.background`` from the docstrings of the standard
library of Python {version}: ``DOCUMENTS`` docstrings, and for each Porter stem found in at least
{min_df} of them, the number of docstrings holding it (``FREQUENCIES``: "stem count" pairs, most
frequent first). Read by :func:`swarmmem.core.recall.admission.background`.
"""

DOCUMENTS = {documents}
FREQUENCIES = """
'''


def document_frequencies() -> tuple[int, Counter[str]]:
    """How many docstrings there are, and in how many of them each stem occurs."""
    counts: Counter[str] = Counter()
    documents = 0
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for _path, _node, doc in stdlib_docstrings(
        lambda relative: any(part in _SKIPPED for part in relative.parts), kinds
    ):
        documents += 1
        counts.update(set(stemmed_tokens(doc)))
    return documents, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-df", type=int, default=3)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    documents, counts = document_frequencies()
    kept = sorted(
        ((stem, df) for stem, df in counts.items() if df >= args.min_df and stem.isascii()),
        key=lambda pair: (-pair[1], pair[0]),
    )
    header = _HEADER.format(
        version=".".join(map(str, sys.version_info[:2])),
        min_df=args.min_df,
        documents=documents,
    )
    pairs = [f"{stem} {df}" for stem, df in kept]
    lines = textwrap.wrap(" ".join(pairs), width=96, break_long_words=False)
    args.out.write_text(header + "\n".join(lines) + '\n"""\n', encoding="utf-8")
    print(f"{len(kept)} stems over {documents} docstrings -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
