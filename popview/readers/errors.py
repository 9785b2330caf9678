"""Errors a reader raises for input it cannot use."""


class InputError(Exception):
    """Bad input: the message names the file, the line or record, and what was wrong."""
