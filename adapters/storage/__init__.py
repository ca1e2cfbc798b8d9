"""Storage providers: in-memory, JSONL, and the SQL stores (SQLite, PostgreSQL)."""
