"""The :class:`Memory` facade (placeholder until the gateway lands)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from swarmmem import config as _config


class Memory:
    """One project's memory: recall, propose, curate, record outcomes."""

    def __init__(self, root: Path, cfg: dict[str, Any]) -> None:
        self.root = root
        self.config = cfg

    @classmethod
    def open(
        cls,
        root: Path,
        config: None | Mapping[str, Any] | str | os.PathLike[str],
        *,
        context: Mapping[str, Any] | None = None,
        **adapters: Any,
    ) -> Memory:
        """See :func:`swarmmem.open`."""
        return cls(root.resolve(), _config.load(root, config))

    def close(self) -> None:
        """Release the store."""

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
