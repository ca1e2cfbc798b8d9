"""Opt-in recall-quality runner on public memory benchmarks (see README.md here)."""
