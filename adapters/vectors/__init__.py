"""Vector indexes: an in-process numpy scan, sqlite-vec and pgvector."""
