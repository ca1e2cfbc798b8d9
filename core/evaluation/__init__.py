"""Offline evaluation: recall metrics, golden fixtures, the held-out corpus and regression gates."""
