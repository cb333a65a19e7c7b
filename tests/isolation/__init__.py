"""Isolation tests in the manner of Hermitage: two real database connections, one per thread,
whose steps interleave in an explicit order, at the database's default isolation level."""
