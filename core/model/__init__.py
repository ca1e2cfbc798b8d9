"""The domain model: records, scopes, ids and hashing, the record codec, typed events, errors.

Everything else in the package builds on these values; this package imports nothing of swarmmem
outside itself."""
