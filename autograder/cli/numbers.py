"""Numbers at the command line's edge: finite and within range before anything is stored.

click's FloatRange lets `nan` and `inf` through (every comparison with NaN is false, and infinity is a float):
`adjust --points nan` stored NULL and broke every later `gradebook`, `--score 1e400` overflowed `release`.
Each option that takes a number uses Finite, which refuses both with a one-line usage error, and reads only
plain ASCII decimal notation (core/numbers.py): `1_0` and a full-width `５` are not numbers a person typed.
"""

import click

from ..core.numbers import MAX_EXTRA_SECONDS, MAX_LIMIT_SECONDS, MAX_POINTS, NumberError, checked


class Finite(click.ParamType):
    """A finite float in [low, high]."""

    name = "number"

    def __init__(self, low=None, high=None, unit=""):
        self.low, self.high, self.unit = low, high, unit

    def convert(self, value, param, ctx):
        low = -float("inf") if self.low is None else self.low
        high = float("inf") if self.high is None else self.high
        try:
            return checked(value, low, high, self.unit)
        except NumberError as error:
            self.fail(str(error), param, ctx)

    def get_metavar(self, param, ctx=None):
        return "NUMBER"


POINTS_CHANGE = Finite(-MAX_POINTS, MAX_POINTS, " points")
SCORE = Finite(0, MAX_POINTS, " points")
POINTS = Finite(0, MAX_POINTS, " points")
DAYS = Finite(0, MAX_EXTRA_SECONDS / 86400, " days")
HOURS = Finite(0, MAX_EXTRA_SECONDS / 3600, " hours")
SECONDS = Finite(0.01, MAX_LIMIT_SECONDS, " seconds")
FACTOR = Finite(1, 1e6)
