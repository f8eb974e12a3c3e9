"""Errors a command reports in one line, without a traceback."""


class BuildError(Exception):
    """The reference notebook or its cases cannot be built into student files."""
