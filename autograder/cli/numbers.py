"""Numbers at the command line's edge: finite and within range before anything is stored.

click's FloatRange lets `nan` and `inf` through (every comparison with NaN is false, and infinity is a float):
`adjust --points nan` stored NULL and broke every later `gradebook`, `--score 1e400` overflowed `release`.
Each option that takes a number uses Finite, which refuses both with a one-line usage error.
"""

import math

import click

from ..roster.store import MAX_EXTRA_SECONDS, MAX_POINTS


class Finite(click.ParamType):
    """A finite float in [low, high]."""

    name = "number"

    def __init__(self, low=None, high=None, unit=""):
        self.low, self.high, self.unit = low, high, unit

    def convert(self, value, param, ctx):
        if isinstance(value, float) and math.isfinite(value):
            number = value
        else:
            try:
                number = float(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            self.fail(f"{number:g} is not between {self.low:g} and {self.high:g}{self.unit}", param, ctx)
        return number

    def get_metavar(self, param, ctx=None):
        return "NUMBER"


POINTS_CHANGE = Finite(-MAX_POINTS, MAX_POINTS, " points")
SCORE = Finite(0, MAX_POINTS, " points")
POINTS = Finite(0, MAX_POINTS, " points")
DAYS = Finite(0, MAX_EXTRA_SECONDS / 86400, " days")
HOURS = Finite(0, MAX_EXTRA_SECONDS / 3600, " hours")
SECONDS = Finite(0.01, 7 * 86400, " seconds")
FACTOR = Finite(1, 1e6)
