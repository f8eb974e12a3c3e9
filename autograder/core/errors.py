"""Errors a command reports in one line, without a traceback.

Every failure a user can cause or fix (a missing file, a wrong option, a
gradebook that is not one) is an AutograderError; the command line prints
its message as `autograder: error: ...` and exits 1.  Anything else is a bug
and keeps its traceback.
"""


class AutograderError(Exception):
    """A known failure, told in one line (plus `details`, one per line, when there are several)."""

    details: tuple = ()


class BuildError(AutograderError):
    """The reference notebook or its cases cannot be built into student files."""
