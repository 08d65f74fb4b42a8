"""Tournaments: schedules, ratings and reports (pure functions; the runner does the I/O)."""
