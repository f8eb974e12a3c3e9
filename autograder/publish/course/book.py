"""The course gradebook: every assignment's gradebook and the roster, read together, one row per student.

Each assignment's grades come from its own gradebook.db, in the one folder the
course names for it (Course.grades_dir: grades/<id>/ unless course.toml says
otherwise; `gradebook --from` overrides it for one run): the counted
hand-in's score after lateness and adjustments, or the roster student's
`missing`, `not-yet` or `unresolved` row.  A student is a roster student, or,
when a hand-in matched nobody on the roster, that hand-in's own key, flagged:
no row is dropped.  The Test Student is kept apart, in no row and no figure.

Totals count every assignment that has a gradebook; `not-yet`, `not-graded`
and `unresolved` count as nothing yet (neither points nor possible points),
so a student's running total is out of what is known to be due.
"""

import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...core.assignment import load_assignment
from ...core.course import late_rules
from ...roster.store import Student
from ...gradebook.read import FeedbackError, gradebook_path
from ...gradebook.store import ABSENT, NO_SCORE, NOT_GRADED, UNRESOLVED, Gradebook, set_aside


@dataclass(frozen=True)
class AssignmentColumn:
    id: str
    title: str
    max_score: float
    deadline: str | None          # the course deadline, ISO 8601
    gradebook: Path | None        # None: not graded yet


@dataclass(frozen=True)
class Mark:
    """One student's grade for one assignment."""
    assignment: str
    score: float
    max_score: float
    status: str                   # a hand-in's status, or missing / not-yet / unresolved
    late: bool | None = None
    penalty: float = 0.0
    adjustment: float | None = None
    adjust_note: str = ""
    deadline: str = ""            # the student's own deadline
    handed_in_at: str = ""
    message: str = ""
    source: str = ""              # where the counted hand-in came from
    repository: str = ""          # the GitHub Classroom clone it came from (the gradebook keeps it)
    excused: str = ""             # why the student is excused from it ("" when not): in no mean or total
    slip_days: int | None = None  # slip days its counted hand-in spent (None: the course has none)

    @property
    def missing(self):
        return self.status == "missing"

    @property
    def due(self):
        """Counts in totals: anything but `not-yet`, `not-graded` (handed in, no grade yet: never a number),
        `unresolved` (a hand-in the roster cannot place may be theirs) and excused (handed in or not)."""
        return self.status not in NO_SCORE and not self.excused

    @property
    def not_graded(self):
        return self.status == NOT_GRADED


@dataclass(frozen=True)
class HistoryEvent:
    student: str
    assignment: str
    at: str                       # ISO 8601 ("" when unknown)
    event: str                    # handed-in, graded, extension, adjustment, withdrawn
    detail: str


@dataclass
class CourseRow:
    student: Student
    marks: dict = field(default_factory=dict)     # assignment id -> Mark (absent: no gradebook has them)
    slip_pool: int | None = None                  # the course's slip days and those granted (None: none)

    @property
    def total(self):
        return round(sum(m.score for m in self.marks.values() if m.due), 4)

    @property
    def possible(self):
        return round(sum(m.max_score for m in self.marks.values() if m.due), 4)

    @property
    def missing(self):
        return [a for a, m in self.marks.items() if m.missing]

    @property
    def late(self):
        return [a for a, m in self.marks.items() if m.late]

    @property
    def excused(self):
        return [a for a, m in self.marks.items() if m.excused]

    @property
    def slip_used(self):
        return sum(m.slip_days or 0 for m in self.marks.values())

    @property
    def slip_left(self):
        """Slip days left in the student's pool (None: the course gives none)."""
        return None if self.slip_pool is None else self.slip_pool - self.slip_used


@dataclass
class CourseBook:
    course: str
    assignments: list             # AssignmentColumn, in course order
    rows: list                    # CourseRow: roster students, then hand-ins that match nobody on it
    test_students: list           # Student: the LMS's test accounts, in no row
    history: list                 # HistoryEvent, by student then time
    points_per_assignment: float = 5.0
    unplaced: dict = field(default_factory=dict)   # assignment id -> [(key, name, source, why)]
    graded_apart: dict = field(default_factory=dict)   # assignment id -> [(key, name)] graded with other cases
    stale: dict = field(default_factory=dict)   # assignment id -> [(key, name)] graded under a former rubric

    @property
    def max_total(self):
        return round(sum(a.max_score for a in self.assignments), 4)

    def graded(self):
        return [a for a in self.assignments if a.gradebook is not None]

    def not_graded(self):
        """{assignment id: [CourseRow]} of students whose hand-in is not graded yet (a run stopped half way)."""
        return self._with_status(NOT_GRADED)

    def unresolved(self):
        """{assignment id: [CourseRow]} of roster students whose grade waits for a hand-in to be placed."""
        return self._with_status(UNRESOLVED)

    def _with_status(self, status):
        found = {}
        for row in self.rows:
            for assignment, mark in row.marks.items():
                if mark.status == status:
                    found.setdefault(assignment, []).append(row)
        return {a.id: found[a.id] for a in self.assignments if a.id in found}


def read_course_book(course, records, gradebooks=None):
    """The CourseBook of `course`; `records` is its roster.CourseRecords (or None), `gradebooks` an optional
    {assignment id: out folder} that overrides where each gradebook is."""
    where = {k: Path(v) for k, v in (gradebooks or {}).items()}
    students = records.students(include_off_roster=True) if records is not None else []
    on_roster = [s for s in students if s.on_roster]
    test_keys = {s.key for s in students if s.test_student}
    rows = {s.key: CourseRow(s) for s in on_roster if not s.test_student}
    known = {s.key: s for s in students}
    columns, history, unplaced, apart, stale = [], [], {}, {}, {}
    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        folder = where.get(assignment_id, course.grades_dir(assignment_id))
        path = gradebook_path(folder)
        rules = late_rules(course, assignment_id)
        columns.append(AssignmentColumn(assignment_id, assignment.title, assignment.max_score,
                                        rules.deadline.isoformat() if rules.deadline else None,
                                        path if path.is_file() else None))
        if not path.is_file():
            continue
        gradebook = Gradebook(path)
        try:
            for grade in gradebook.grades(assignment_id):
                if grade.student in test_keys:
                    continue
                row = rows.get(grade.student)
                if row is None:    # off the roster now, or a hand-in that matched nobody: kept, flagged
                    student = known.get(grade.student) or Student(grade.student, grade.name or grade.student,
                                                                  on_roster=False)
                    row = rows[grade.student] = CourseRow(replace(student, on_roster=False))
                row.marks[assignment_id] = Mark(
                    assignment_id, grade.score, grade.max_score, grade.status, None if grade.late is None
                    else bool(grade.late), grade.penalty or 0.0, grade.adjustment, grade.adjust_note or "",
                    grade.deadline or "", grade.handed_in_at or "", grade.message or "", grade.source or "",
                    grade.repository or "", grade.excused or "", grade.slip_days)
            history += _handins(gradebook, assignment_id, test_keys)
            found = gradebook.unplaced(assignment_id, set_aside(records, assignment_id)) if records else []
            if found:
                unplaced[assignment_id] = found
            apart[assignment_id] = [(key, name) for key, name in gradebook.graded_apart(assignment_id)
                                    if key not in test_keys]
            stale[assignment_id] = [(key, name) for key, name in gradebook.stale(assignment_id,
                                                                                assignment.rubric_key())
                                    if key not in test_keys]
        except sqlite3.DatabaseError as error:
            raise FeedbackError(f"{path}: {error}") from None
        finally:
            gradebook.close()
    if course.slip_days is not None:
        granted = records.slip_choices()[1] if records is not None else {}
        for row in rows.values():
            row.slip_pool = course.slip_days.pool + granted.get(row.student.key, 0)
    if records is not None:
        history += _excuses_and_slip_days(records)
        for extension in records.extensions(all_of_them=True):
            history.append(HistoryEvent(extension.student, extension.assignment, extension.granted_at, "extension",
                                        f"until {extension.until}" + (f": {extension.reason}" if extension.reason
                                                                      else "") + f" (by {extension.granted_by})"))
            if extension.withdrawn_at:
                history.append(HistoryEvent(extension.student, extension.assignment, extension.withdrawn_at,
                                            "withdrawn", f"extension #{extension.id} (by {extension.withdrawn_by})"))
        for assignment_id, handin, student, reason, by, at in records.placement_rows():
            history.append(HistoryEvent(student or handin, assignment_id, at or "", "placed",
                                        f"hand-in {handin} placed on {records.who(student) if student else 'nobody on the roster'}"
                                        + (f": {reason}" if reason else "") + f" (by {by})"))
        for adjustment in records.adjustments(all_of_them=True):
            before = "" if adjustment.score_before is None else f", score before {adjustment.score_before:g}"
            history.append(HistoryEvent(adjustment.student, adjustment.assignment, adjustment.made_at, "adjustment",
                                        f"#{adjustment.id} {adjustment.describe()} (by {adjustment.made_by}{before})"))
            if adjustment.withdrawn_at:
                history.append(HistoryEvent(adjustment.student, adjustment.assignment, adjustment.withdrawn_at,
                                            "withdrawn", f"adjustment #{adjustment.id}"
                                            + (f": {adjustment.withdraw_reason}" if adjustment.withdraw_reason
                                               else "") + f" (by {adjustment.withdrawn_by})"))
    history = [h for h in history if h.student not in test_keys]
    history.sort(key=lambda h: (h.student, h.at or "", h.assignment))
    ordered = sorted(rows.values(), key=lambda r: (not r.student.on_roster,
                                                   (r.student.sortable_name or r.student.name).casefold(),
                                                   r.student.key))
    return CourseBook(course.name, columns, ordered, [s for s in students if s.test_student], history,
                      course.points_per_assignment, unplaced, {a: rows for a, rows in apart.items() if rows},
                      {a: rows for a, rows in stale.items() if rows})


def _excuses_and_slip_days(records):
    """Every excuse and slip-day decision, withdrawn ones too: the audit trail, as adjustments have it."""
    events = []
    for excuse in records.excuses(all_of_them=True):
        events.append(HistoryEvent(excuse.student, excuse.assignment, excuse.made_at, "excused",
                                   f"#{excuse.id} {excuse.reason} (by {excuse.made_by})"))
        if excuse.withdrawn_at:
            events.append(HistoryEvent(excuse.student, excuse.assignment, excuse.withdrawn_at, "withdrawn",
                                       f"excuse #{excuse.id}" + (f": {excuse.withdraw_reason}" if excuse.withdraw_reason
                                                                 else "") + f" (by {excuse.withdrawn_by})"))
    for decision in records.slip_decisions(all_of_them=True):
        events.append(HistoryEvent(decision.student, decision.assignment or "", decision.made_at, "slip days",
                                   f"#{decision.id} {decision.describe()} (by {decision.made_by})"))
        if decision.withdrawn_at:
            events.append(HistoryEvent(decision.student, decision.assignment or "", decision.withdrawn_at,
                                       "withdrawn", f"slip days #{decision.id}"
                                       + (f": {decision.withdraw_reason}" if decision.withdraw_reason else "")
                                       + f" (by {decision.withdrawn_by})"))
    return events


def _handins(gradebook, assignment_id, test_keys):
    """The history of each hand-in: `handed-in` at the time the LMS recorded (or "time unknown", never the time
    of grading), then one `regraded` event for each later grading of the same file."""
    counted = {(r[0], r[1], r[2]): (r[3], None) for r in gradebook.db.execute(
        "SELECT student, source, sha256, counted FROM submissions WHERE assignment = ?",
        (assignment_id,))}
    log = gradebook.db.execute(
        "SELECT student, source, sha256, submitted_at, graded_at, score, max_score, status FROM grading_log "
        "WHERE assignment = ? ORDER BY student, source, sha256, graded_at, rowid", (assignment_id,)).fetchall()
    seen_in_log = {(r[0], r[1], r[2]) for r in log}
    # Rows graded before the log existed: one grading each, from the submission itself.
    log += [(student, source, sha, submitted_at, graded_at, score, max_score, status)
            for student, source, sha, submitted_at, graded_at, score, max_score, status in gradebook.db.execute(
                "SELECT student, source, sha256, submitted_at, graded_at, score, max_score, status FROM submissions "
                "WHERE assignment = ?", (assignment_id,)) if (student, source, sha) not in seen_in_log]
    events, first = [], set()
    for student, source, sha, submitted_at, graded_at, score, max_score, status in log:
        if student in test_keys:
            continue
        result = f"{score or 0:g} / {max_score or 0:g} {status}"
        if (student, source, sha) in first:
            events.append(HistoryEvent(student, assignment_id, graded_at or "", "regraded", f"{source}: {result}"))
            continue
        first.add((student, source, sha))
        is_counted, _ = counted.get((student, source, sha), (0, None))
        events.append(HistoryEvent(student, assignment_id, submitted_at or "", "handed-in",
                                   ("" if submitted_at else "time unknown (the LMS recorded none): ")
                                   + f"{source}: {result}"
                                   + ("" if is_counted else " (not counted: a newer hand-in counts)")))
    return events


__all__ = ["ABSENT", "AssignmentColumn", "CourseBook", "CourseRow", "HistoryEvent", "Mark", "read_course_book"]
