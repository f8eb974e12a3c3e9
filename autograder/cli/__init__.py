"""The `autograder` command: one thin module per verb, each parsing its options, calling one function and printing."""

from .main import main

__all__ = ["main"]
