"""Slip days: a pool of late days each student spends across the semester, as a course policy.

course.toml:

    [slip_days]
    pool = 4                 # days each student has for the semester
    max_per_assignment = 2   # the most one assignment may take
    unit_hours = 24          # what one day is: a started 24 h after the deadline and the grace costs one
    grace_minutes = 15       # late by this much or less costs nothing and is on time

A hand-in late past the student's own deadline (extensions and accommodations come first) needs one day per
started unit after the grace.  Days are spent by one rule, computed again from the counted hand-ins whenever
lateness is (never added up as hand-ins come, so a regrade or a later upload can never spend a day twice):

  * a day the teaching team chose for a student and assignment (`autograder slip --days N`) is spent as
    chosen, before anything else; a choice replaces the one before it, never adds to it;
  * the rest of the pool, with the days the teaching team granted on top (`slip --grant N`), goes to the
    student's other late hand-ins in deadline order, each taking what it needs up to max_per_assignment;
  * under late_policy "per-day" a hand-in takes the days it can and is late by the rest; under the other
    policies days that would leave it late buy nothing, so none are spent;
  * a hand-in with no notebook that could be graded, or late by the LMS's mark alone (no hand-in time, so
    nothing says how late), spends nothing unless the teaching team chooses.

A group's hand-in is each member's: every member spends their own days for it.
"""

import math
from dataclasses import dataclass

MAX_POOL = 366          # days: more is a typo
HOUR = 3600.0


class SlipDaysError(ValueError):
    """course.toml's [slip_days] cannot be used as written."""


@dataclass(frozen=True)
class SlipPolicy:
    pool: int
    max_per_assignment: int
    unit_hours: float = 24.0
    grace_minutes: float = 0.0

    @property
    def unit_seconds(self):
        return self.unit_hours * HOUR

    @property
    def grace_seconds(self):
        return self.grace_minutes * 60.0

    def needed(self, seconds_late):
        """Days a hand-in `seconds_late` past the student's own deadline needs to be on time (None: unknown)."""
        if seconds_late is None:
            return None
        beyond = seconds_late - self.grace_seconds
        return 0 if beyond <= 0 else math.ceil(beyond / self.unit_seconds - 1e-9)

    def shift_seconds(self, days):
        """How far `days` spent (and the grace) move the student's deadline."""
        return self.grace_seconds + days * self.unit_seconds

    def describe(self):
        unit = "day" if self.unit_hours == 24 else f"unit of {self.unit_hours:g} h"
        grace = f", after a grace of {self.grace_minutes:g} min" if self.grace_minutes else ""
        return (f"slip days: {self.pool} per student, at most {self.max_per_assignment} per assignment, one per "
                f"started {unit} late{grace}")


def read_policy(table, where):
    """The SlipPolicy of course.toml's [slip_days] table (None when there is none)."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise SlipDaysError(f"{where}: [slip_days] must be a table (pool = 4, max_per_assignment = 2)")
    known = {"pool", "max_per_assignment", "unit_hours", "grace_minutes"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise SlipDaysError(f"{where}: [slip_days] has no setting {unknown[0]!r} (known: {', '.join(sorted(known))})")

    def whole(key, low, high, default=None):
        value = table.get(key, default)
        if value is None:
            raise SlipDaysError(f"{where}: [slip_days] needs {key}")
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise SlipDaysError(f"{where}: [slip_days] {key} must be a whole number from {low} to {high}, "
                                f"not {value!r}")
        return value

    def number(key, low, high, default):
        value = table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not low <= value <= high:
            raise SlipDaysError(f"{where}: [slip_days] {key} must be a number from {low:g} to {high:g}, "
                                f"not {value!r}")
        return float(value)

    pool = whole("pool", 0, MAX_POOL)
    most = whole("max_per_assignment", 0, MAX_POOL, default=pool)
    return SlipPolicy(pool, most, number("unit_hours", 1, 24 * 14, 24), number("grace_minutes", 0, 24 * 60, 0))


@dataclass(frozen=True)
class Need:
    """One student's counted hand-in of one assignment, as slip days see it."""
    assignment: str
    days: int | None              # days it needs to be on time; None: not known (late by the LMS's mark alone)
    gradable: bool = True         # it held a notebook that could be graded
    excused: bool = False


@dataclass(frozen=True)
class Spent:
    days: int                     # spent on this assignment
    chosen: bool                  # by the teaching team (`autograder slip --days`)
    left: int                     # of the student's pool after this assignment (deadline order)
    pool: int                     # the student's pool: the course's and what was granted
    needed: int | None            # what the hand-in needed (None: not known)


def allocate(policy, order, needs, choices, granted=0, per_day=lambda assignment: False):
    """{assignment: Spent} of one student.

    `order`: every assignment id in deadline order; `needs`: {assignment: Need} of the graded ones;
    `choices`: {assignment: days the teaching team chose}; `granted`: days added to the pool;
    `per_day(assignment)`: whether its late policy takes points per day (days that leave it late still help)."""
    pool = policy.pool + granted
    balance = pool - sum(choices.values())
    spent = {}
    for assignment in order:
        need = needs.get(assignment)
        if assignment in choices:
            days, chosen = choices[assignment], True
        elif need is None or need.excused or not need.gradable or not need.days:
            days, chosen = 0, False
        else:
            days = max(0, min(need.days, policy.max_per_assignment, balance))
            if days < need.days and not per_day(assignment):
                days = 0          # it stays late whatever is spent: nothing bought, nothing spent
            chosen = False
            balance -= days
        spent[assignment] = Spent(days, chosen, 0, pool, None if need is None else need.days)
    left = pool
    for assignment in order:                 # the balance after each, in deadline order
        left -= spent[assignment].days
        spent[assignment] = Spent(spent[assignment].days, spent[assignment].chosen, left, pool,
                                  spent[assignment].needed)
    return spent
