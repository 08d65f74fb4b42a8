"""Errors shared across the command line."""


class UserError(Exception):
    """A problem with the user's input, reported as one line (no traceback)."""
