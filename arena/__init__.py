"""arena: a referee and tournament runner for Coup bot contests."""

__version__ = "0.1.0"
