"""Maintenance reports (pending, value-log, recall-log, stale) and compaction planning."""
