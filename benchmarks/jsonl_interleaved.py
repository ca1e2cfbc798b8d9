"""The whole JSONL ``Memory.recall``, compiled kernels against their pure twins, in lockstep.

``test_selective_recall_bench.py -k jsonl_memory`` times each build in its own process, one
after the other, so a change of the machine's speed between the two runs moves their ratio
(by a factor of two on a shared machine). Here two worker processes, one per build, each open
their own copy of the same 5,000-fact project, and the parent asks them the same selective
query in turns (each of the two first every other round), so both see the same moment of the
machine. Not a test; run by hand::

    python benchmarks/jsonl_interleaved.py --size 5000 --rounds 2000

Asked one query a turn, each build answers right after the other ran, so its caches are cold
(a recall of a server that waited on its client). ``--burst N`` asks N queries in a row a
turn and keeps the times of all but the first, so the two builds are compared warm, as
``pytest-benchmark`` times them, while still taking turns on the same machine moment.

Each worker checks which build it runs (``KERNEL_IMPL``) before it answers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# the benchmarks' conftest and the tests' factories it reads
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

CONFIG = {"enabled": True, "provider": "local-jsonl", "projectId": "bench-selective"}


def build(root: Path, size: int) -> None:
    """A project of ``size`` facts on the JSONL provider (as the pytest fixture builds it)."""
    from test_selective_recall_bench import _texts

    import swarmmem

    with swarmmem.open(root, config=CONFIG) as mem:
        mem.import_records(
            {"kind": "project_fact", "text": text, "source": {"type": "file", "filePath": path}}
            for text, path in _texts(size)
        )


def worker(root: Path, size: int, impl: str) -> int:
    """Answer one recall per line of stdin (a query number) with its time in seconds."""
    from test_selective_recall_bench import selective_queries

    import swarmmem
    from swarmmem._speedups import lexical

    if impl != lexical.KERNEL_IMPL:
        print(f"expected the {impl} build, got {lexical.KERNEL_IMPL}", file=sys.stderr)
        return 2
    queries = selective_queries(size)
    mem = swarmmem.open(root, config=CONFIG, context={"session_id": "bench"})
    for query in queries:  # warm: the feature table is built by the first recall
        mem.recall(query)
    print("ready", flush=True)
    for line in sys.stdin:
        first, count = map(int, line.split())
        times = []
        for number in range(first, first + count):
            query = queries[number % len(queries)]
            started = time.perf_counter()
            bundle = mem.recall(query)
            times.append(time.perf_counter() - started)
            if not bundle.items:
                print(f"no items for {query!r}", file=sys.stderr)
                return 2
        print(" ".join(map(str, times)), flush=True)
    mem.close()
    return 0


def spawn(root: Path, size: int, impl: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.pop("SWARMMEM_NO_EXTENSIONS", None)
    if impl == "python":
        env["SWARMMEM_NO_EXTENSIONS"] = "1"
    command = [sys.executable, __file__, "--worker", impl, "--root", str(root), "--size"]
    proc = subprocess.Popen(
        [*command, str(size)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"the {impl} worker did not start")
    return proc


def ask(proc: subprocess.Popen[str], first: int, count: int) -> list[float]:
    """The times of queries ``first`` to ``first + count - 1``, asked in a row."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{first} {count}\n")
    proc.stdin.flush()
    answer = proc.stdout.readline()
    if not answer:
        raise SystemExit("a worker stopped")
    return [float(value) for value in answer.split()]


def measure(directory: Path, size: int, rounds: int, burst: int = 1) -> None:
    from test_selective_recall_bench import selective_queries

    source = directory / "project"
    if not (source / ".swarm").exists():
        source.mkdir(parents=True, exist_ok=True)
        build(source, size)
    copies = {}
    for impl in ("compiled", "python"):
        copies[impl] = directory / impl
        shutil.rmtree(copies[impl], ignore_errors=True)
        shutil.copytree(source, copies[impl])
    count = len(selective_queries(size))
    workers = {impl: spawn(path, size, impl) for impl, path in copies.items()}
    times: dict[str, list[float]] = {impl: [] for impl in workers}
    try:
        for n in range(rounds):
            first = (n // 2) * burst % count
            order = ("compiled", "python") if n % 2 == 0 else ("python", "compiled")
            for impl in order:
                answered = ask(workers[impl], first, burst)
                times[impl].extend(answered[1:] if burst > 1 else answered)
    finally:
        for proc in workers.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
    from selective_interleaved import ratios, summary

    for impl, values in times.items():
        print(summary(impl, values))
    print(f"the twins take {ratios(times['python'], times['compiled'])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument(
        "--burst",
        type=int,
        default=1,
        help="queries asked in a row a turn (all but the first timed)",
    )
    parser.add_argument("--dir", type=Path, default=None, help="keep the project here")
    parser.add_argument("--worker", choices=("compiled", "python"), help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.burst < 1:
        parser.error("--burst must be at least 1")
    if args.worker:
        return worker(args.root, args.size, args.worker)
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        measure(args.dir, args.size, args.rounds, args.burst)
        return 0
    with tempfile.TemporaryDirectory(prefix="swarmmem-jsonl-interleaved-") as tmp:
        measure(Path(tmp), args.size, args.rounds, args.burst)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
