"""Numbers a person gives the grader, on the command line or in a file they edit, checked the same way.

Python's float() reads far more than a person means: `nan`, `inf`, `1e400` (infinity), `1_0` (ten) and
full-width digits (`５`).  A NaN compares false with every bound, so a range check alone lets it through:
course.toml's `late_penalty = nan` once took "nan" points per day off, a 0 that reached the LMS.  Every number
here is plain ASCII decimal notation, finite, and within the range its setting allows.
"""

import math
import re

# The most points any number the grader stores or applies may be: far past any assignment's points, near
# enough that a typo (1e308, inf) is refused before it is stored.
MAX_POINTS = 1000.0
# Time limits and extra time: a case or a hand-in runs at most a week; extra time is within a year.
MAX_LIMIT_SECONDS = 7 * 86400.0
MAX_EXTRA_SECONDS = 366 * 86400.0

_PLAIN = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class NumberError(ValueError):
    """Not a finite number in range; the message says what was expected."""


def plain_number(text):
    """The float that `text` writes in plain ASCII decimal notation (`5`, `-0.5`, `2.5e1`), or NumberError:
    no `nan`, `inf`, `1_0` or full-width digits."""
    value = str(text).strip()
    if _PLAIN.fullmatch(value):
        return float(value)
    try:
        odd = not math.isfinite(float(value))
    except ValueError:
        odd = False
    raise NumberError(f"{text!r} is not a finite number" if odd else
                      f"{text!r} is not a number written in plain decimal digits (e.g. 2.5)")


def checked(value, low, high, unit=""):
    """`value` (a number, or text in plain notation) as a float when it is finite and in [low, high], else
    NumberError saying so.  A bool is not a number here, though Python counts True as 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise NumberError(f"{value!r} is not a number")
    number = plain_number(value) if isinstance(value, str) else float(value)
    if not math.isfinite(number):
        raise NumberError(f"{value!r} is not a finite number")
    if not low <= number <= high:
        raise NumberError(f"{number:g} is not between {low:g} and {high:g}{unit}")
    return number


def shown(number):
    """A number as short as `{:g}` writes it, with every digit it needs: 5.0000001 is never shown as 5."""
    short = f"{number:g}"
    return short if float(short) == number else repr(float(number))
