"""Connection strings without their secret.

The DSN password is kept out of the pool's connection string and of every message:
:func:`parse_dsn` splits it off (it is passed to the driver as a separate argument), the
shown form has none, and :meth:`Dsn.scrub` removes it (plain or URL-quoted) from driver
errors before they surface.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import TYPE_CHECKING

import attrs
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from swarmmem.core.model.errors import ConfigError

if TYPE_CHECKING:
    from swarmmem.core.config import PostgresConfig


@attrs.frozen
class Dsn:
    """A password-free connection string, the password, and the form shown in messages."""

    conninfo: str
    password: str | None
    shown: str

    def scrub(self, text: str) -> str:
        """``text`` with the password (plain or URL-quoted) replaced by ``***``."""
        if not self.password:
            return text
        for secret in {self.password, urllib.parse.quote(self.password, safe="")}:
            if secret:
                text = text.replace(secret, "***")
        return text


def parse_dsn(dsn: str) -> Dsn:
    """Split a DSN into a password-free connection string and the password."""
    if not isinstance(dsn, str) or not dsn.strip():
        raise ConfigError("memory.postgres.dsn must be a non-empty connection string")
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        raise ConfigError("memory.postgres.dsn is not a valid PostgreSQL connection string")
    password = params.pop("password", None)
    conninfo = make_conninfo("", **params)
    return Dsn(conninfo=conninfo, password=str(password) if password else None, shown=conninfo)


def configured_dsn(section: PostgresConfig) -> str:
    """``memory.postgres.dsn``, else the ``SWARMMEM_PG_DSN`` environment variable.

    Raises:
        ConfigError: neither is set.
    """
    dsn = section.dsn or os.environ.get("SWARMMEM_PG_DSN")
    if not dsn:
        raise ConfigError(
            "memory.postgres.dsn is required for provider postgres "
            "(or set the SWARMMEM_PG_DSN environment variable)"
        )
    return dsn
