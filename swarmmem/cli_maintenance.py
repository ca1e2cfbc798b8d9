"""Maintenance commands: value-log, recall-log, stale, compact, reflect, audit-verify, ..."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
