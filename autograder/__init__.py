"""A notebook autograder: assignments are data (a reference notebook and its cases)."""

__version__ = "0.1.0"
