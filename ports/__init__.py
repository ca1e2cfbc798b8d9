"""Contracts (``typing.Protocol``) between the domain and its adapters."""
