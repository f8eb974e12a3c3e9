"""What the course's policies make of one assignment's rows, beyond its own deadline: who is excused, who is
`missing`, and the slip days each counted hand-in spends.

One rule, applied by every refresh of a gradebook (Gradebook.apply_lateness), whatever command runs it, so the
same facts give the same status in every file:

  * a roster student with no hand-in is `not-yet` before their own deadline, and after it `missing`, unless
    excused: by `autograder excuse` (with a reason), or because they joined the roster after the deadline and
    the course leaves late joiners excused (course.toml's [course] late_joiners, "excused" by default);
    `unresolved` while a hand-in the roster cannot place may be theirs;
  * an excuse stands over a hand-in too: it is graded and its feedback released, but its score counts nowhere;
  * slip days (core/slip_days.py) are allocated again from every assignment's counted hand-ins, in deadline
    order, each time: the earlier assignments' needs are read from their own gradebooks (read-only).
"""

import math
import sqlite3
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from ..core import lateness
from ..core.slip_days import Need, allocate

UNGRADABLE_STATUSES = {"invalid-notebook", "empty", "unreadable", "wrong-file-type", "unsafe-path", "too-large",
                       "invalid-zip", "no-notebook", "wrong-assignment", "wrong-language"}


@dataclass
class Semester:
    """The course's policies and decisions that one assignment's refresh applies."""
    assignment: str
    policy: object = None              # core.slip_days.SlipPolicy, None: no slip days
    late_joiners: str = "excused"
    excuses: dict = field(default_factory=dict)      # student -> roster.store.Excuse (standing)
    joined: dict = field(default_factory=dict)       # student -> when they joined a roster that had students
    order: list = field(default_factory=list)        # every assignment id, in deadline (course) order
    earlier: dict = field(default_factory=dict)      # student -> {assignment: Need} of the other gradebooks
    chosen: dict = field(default_factory=dict)       # student -> {assignment: days the teaching team chose}
    granted: dict = field(default_factory=dict)      # student -> days granted on top of the pool
    per_day: dict = field(default_factory=dict)      # assignment -> its late policy takes points per day

    def excused(self, student):
        """Why `student` is excused from this assignment by the teaching team ("" when not)."""
        excuse = self.excuses.get(student)
        return f"excused: {excuse.reason} (by {excuse.made_by})" if excuse is not None else ""

    def absent_status(self, student, deadline, passed, unplaced):
        """(status, note) of a roster student with no hand-in for this assignment."""
        said = self.excused(student)
        if said:
            return "excused", said
        if not passed:
            return "not-yet", ""
        if unplaced:
            return "unresolved", ""
        joined = _instant(self.joined.get(student))
        if joined is not None and deadline is not None and joined > deadline:
            note = (f"joined the course on {joined.date().isoformat()}, after the deadline "
                    f"({deadline.isoformat()})")
            if self.late_joiners == "excused":
                return "excused", f"excused: {note}"
            return "missing", f"{note}; the course counts late joiners missing (course.toml's late_joiners)"
        return "missing", ""

    def with_slip_days(self, student, found, status, handed_in_at, late_mark, raw_score, rules, deadline, why):
        """(Lateness, days spent or None, note) of a student's counted hand-in, its slip days applied."""
        if self.policy is None:
            return found, None, None
        need = self.need(found, status)
        mine = dict(self.earlier.get(student, {}))
        mine[self.assignment] = Need(self.assignment, need, status not in UNGRADABLE_STATUSES,
                                     bool(self.excused(student)))
        spent = allocate(self.policy, self.order, mine, self.chosen.get(student, {}),
                         self.granted.get(student, 0), lambda a: self.per_day.get(a, False))[self.assignment]
        days = spent.days
        who = "chosen by the teaching team" if spent.chosen else "spent"
        balance = f"{spent.left} of {spent.pool} slip day(s) left after this assignment"
        if not found.late and not days:
            return found, 0, balance
        if found.late and found.seconds is None and not days:
            return found, 0, ("no slip day spent: nothing says how late it was (the LMS gave no hand-in time); "
                              f"{balance}")
        if found.late and found.seconds is None:       # chosen for a hand-in late by the LMS's mark alone
            return (lateness.Lateness(False, None, raw_score, 0.0, f"on time with {days} slip day(s) {who}"),
                    days, f"{days} slip day(s) {who}; {balance}")
        shifted = deadline + timedelta(seconds=self.policy.shift_seconds(days)) if deadline is not None else None
        moved_by = [why] if why else []
        moved_by += [f"moved by {days} slip day(s) {who}"] if days else []
        moved_by += [f"a grace of {self.policy.grace_minutes:g} min"] if self.policy.grace_minutes else []
        moved = lateness.assess(handed_in_at, late_mark, raw_score, replace(rules, deadline=shifted),
                                extended="; ".join(moved_by) or "slip days")
        late_by = f"{lateness.duration(found.seconds)} after the deadline"
        if moved.late:
            note = moved.note + ("" if days else f"; no slip day spent ({_why_none(self.policy, need, spent)})")
        elif days:
            note = f"on time with {days} slip day(s) {who} ({late_by})"
        else:
            note = f"on time within the grace of {self.policy.grace_minutes:g} min ({late_by})"
        return replace(moved, note=note), days, f"{days} slip day(s) {who}; {balance}" if days else balance

    def need(self, found, status):
        """Days this hand-in needs to be on time: 0 on time, None when nothing says how late."""
        if not found.late:
            return 0
        if found.seconds is None:
            return None
        return self.policy.needed(found.seconds)


def _why_none(policy, need, spent):
    if need is not None and spent.left <= 0:
        return "none left"
    return "the days it needs would leave it late, which only a per-day late policy counts"


def _instant(text):
    try:
        moment = datetime.fromisoformat(text) if text else None
    except ValueError:
        return None
    return moment if moment is not None and moment.tzinfo is not None else None


def semester_of(course, records, assignment_id, read_gradebook):
    """The Semester of `assignment_id` in `course`; `read_gradebook(folder)` opens another assignment's
    gradebook read-only (a sqlite3 connection) or returns None."""
    if course is None:
        semester = Semester(assignment_id)
    else:
        semester = Semester(assignment_id, course.slip_days, course.late_joiners)
    if records is not None:
        semester.excuses = {e.student: e for e in records.excuses(assignment_id)}
        semester.joined = {s.key: s.joined_at for s in records.students(include_off_roster=True) if s.joined_at}
    if semester.policy is None:
        return semester
    from ..core.course import late_rules                # (core: no cycle)
    semester.order = course.assignment_ids()
    if assignment_id not in semester.order:
        semester.order.append(assignment_id)
    for other in semester.order:
        try:
            semester.per_day[other] = late_rules(course, other).policy == "per-day"
        except Exception:                               # noqa: BLE001 - a broken table is refused by its own runs
            semester.per_day[other] = False
    if records is not None:
        semester.chosen, semester.granted = records.slip_choices()
        excused = {(e.assignment, e.student) for e in records.excuses()}
    else:
        excused = set()
    for other in semester.order:
        if other == assignment_id:
            continue
        db = read_gradebook(course.grades_dir(other))
        if db is None:
            continue
        try:
            for student, status, seconds, late in db.execute(
                    "SELECT student, status, late_seconds, late FROM submissions WHERE assignment = ? AND "
                    "counted = 1", (other,)):
                # late_seconds: how late against the student's own deadline, before slip days (0: on time).
                days = (semester.policy.needed(seconds) if _positive(seconds) else 0 if seconds is not None
                        else None if late == 1 else 0)
                semester.earlier.setdefault(student, {})[other] = Need(
                    other, days, status not in UNGRADABLE_STATUSES, (other, student) in excused)
        except sqlite3.DatabaseError:
            continue
        finally:
            db.close()
    return semester


def _positive(value):
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0
