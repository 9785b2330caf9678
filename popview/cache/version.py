"""The cache's schema version, apart from schema.py so that reading a cache's
stored summary (summary.py) checks it without importing numpy.

Bump it whenever a table, column or derived dataset changes meaning: caches
of another version are re-converted, never trusted."""

SCHEMA_VERSION = 23
