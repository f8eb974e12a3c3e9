"""Read graded hand-ins from DIR/gradebook.db, read-only.

Only the counted hand-in of each student (`counted = 1`) is read: it is the
one grades.csv reports.  Hidden cases come back with `call = None` (the
gradebook never stores their inputs).  A gradebook of an earlier version is
first brought to this one (schema.py) when this user may write it; one that
stays older is read as it is, and what it never kept comes back as None.
"""

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ..core import database
from ..core.errors import AutograderError
from ..core.sharing import check_access
from . import schema
from .code import read_code
from .schema import check_file
from .store import Gradebook, GradebookError, graded_apart, rubrics_of, stale_of


class FeedbackError(AutograderError):
    """A feedback, report or release step cannot work at all (one line for the user)."""


@dataclass(frozen=True)
class CaseRow:
    position: int
    name: str
    function: str
    hidden: bool
    description: str
    call: str | None
    points: float
    max_points: float
    status: str
    message: str
    received: str
    traceback: str
    seconds: float


@dataclass(frozen=True)
class SubmissionRow:
    student: str
    assignment: str
    source: str
    submitted_at: str
    score: float
    max_score: float
    status: str
    message: str
    seconds: float
    student_seconds: float
    handins: int
    cases: tuple = field(default=())
    name: str = ""              # the student's name for people (student is the key: an LMS id where there is one)
    email: str = ""
    late: bool | None = None    # None: unknown (no deadline, no LMS mark)
    penalty: float = 0.0        # points the late policy took off (score is after it)
    late_note: str = ""         # what was decided about lateness, in plain words
    raw_score: float | None = None
    cell_errors: tuple = field(default=())   # CellError, in the order the cells ran
    deadline: str = ""          # the student's own deadline (ISO 8601), when there is one
    deadline_note: str = ""     # why it is not the course's (an extension, an accommodation), "" when it is
    adjustment: float | None = None   # what the standing adjustments changed (score includes it)
    adjust_note: str = ""       # their reasons
    late_score: float | None = None   # the score before the adjustments
    # Who the LMS said handed it in (gradebook/schema.py, version 2); all None in an older gradebook this
    # user could not upgrade, where nothing says (release refuses then).
    lms: str | None = ""
    lms_id: str | None = ""
    lms_prefix: str | None = ""
    repository: str | None = ""
    on_roster: int | None = None      # 1 on the roster, 0 a hand-in that matches nobody on it, None: no roster
    excused: str = ""                 # why the student is excused from the assignment ("" when not)
    slip_days: int | None = None      # slip days this hand-in spent (None: the course has none)
    slip_note: str = ""               # how many, and what the student's pool holds after this assignment

    @property
    def display_name(self):
        return self.name or self.student


@dataclass(frozen=True)
class CellError:
    cell: int          # 1-based number among the notebook's code cells
    source: str        # its first lines
    error: str


def _optional(db, *columns):
    """The columns newer gradebooks have, NULL for an older one (this reader never changes the file)."""
    have = {row[1] for row in db.execute("PRAGMA table_info(submissions)")}
    return ", ".join(f"s.{c}" if c in have else "NULL" for c in columns)


def gradebook_path(out_dir):
    return Path(out_dir) / "gradebook.db"


def _connect(out_dir):
    """The gradebook, read-only, brought first to this version's schema when this user may write it."""
    path = gradebook_path(out_dir)
    if not path.is_file():
        raise FeedbackError(f"no gradebook at {path}: run `autograder grade --out {out_dir}` first")
    check_access(path, write=False)
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        check_file(db, path, FeedbackError)
        db.execute("SELECT 1 FROM submissions LIMIT 1")
        if database.schema_version(db) < schema.VERSION and _may_write(path):
            db.close()
            _upgrade(path)
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.DatabaseError as error:
        raise FeedbackError(f"{path}: not a usable gradebook ({error}); move it aside and grade again, "
                            "or restore it from a backup") from None
    return db


def _may_write(path):
    """SQLite writes a journal beside the file, so the folder must be writable too."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)


def _upgrade(path):
    try:
        Gradebook(path).close()
    except GradebookError as error:
        raise FeedbackError(str(error)) from None


_one_line_errors = database.one_line_errors(FeedbackError, where=lambda out_dir, *_: gradebook_path(out_dir),
                                            note=" (was it edited by hand?)")


@_one_line_errors
def assignments_in(out_dir):
    """The assignment ids that have counted hand-ins in the gradebook."""
    db = _connect(out_dir)
    try:
        return [r[0] for r in db.execute(
            "SELECT DISTINCT assignment FROM submissions WHERE counted = 1 ORDER BY assignment")]
    finally:
        db.close()


def choose_assignment(out_dir, assignment_id):
    """`assignment_id`, or the gradebook's only assignment when it is None."""
    known = assignments_in(out_dir)
    if assignment_id is None:
        if len(known) == 1:
            return known[0]
        if not known:
            raise FeedbackError(f"{gradebook_path(out_dir)} holds no graded hand-ins")
        raise FeedbackError(f"{gradebook_path(out_dir)} holds several assignments ({', '.join(known)}): "
                            "choose one with --assignment")
    if assignment_id not in known:
        raise FeedbackError(f"{gradebook_path(out_dir)} has no hand-ins for {assignment_id!r} "
                            f"(it has: {', '.join(known) or 'none'})")
    return assignment_id


IDENTITY = ("lms", "lms_id", "lms_prefix", "repository")
# Read when the gradebook has them (older versions lack some): NULL otherwise.
OPTIONAL_COLUMNS = ("name", "email", "late", "penalty", "late_note", "raw_score", "deadline", "deadline_note",
                    "adjustment", "adjust_note", "late_score", "on_roster", "excused", "slip_days", "slip_note",
                    *IDENTITY)


@_one_line_errors
def load_submissions(out_dir, assignment_id):
    """Every student's counted hand-in with its cases, ordered by student."""
    db = _connect(out_dir)
    try:
        rows = db.execute(
            "SELECT s.id, s.student, s.assignment, s.source, s.submitted_at, s.score, s.max_score, s.status, "
            "s.message, s.seconds, s.student_seconds, (SELECT COUNT(*) FROM submissions t "
            "WHERE t.assignment = s.assignment AND t.student = s.student), "
            f"{_optional(db, *OPTIONAL_COLUMNS)} "
            "FROM submissions s WHERE s.assignment = ? AND s.counted = 1 ORDER BY s.student",
            (assignment_id,)).fetchall()
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        known = "lms" in database.columns(db, "submissions")
        result = []
        for (sid, student, assignment, source, submitted_at, score, max_score, status, message, seconds,
             student_seconds, handins, name, email, late, penalty, late_note, raw_score, deadline, deadline_note,
             adjustment, adjust_note, late_score, on_roster, excused, slip_days, slip_note, *who) in rows:
            cell_errors = tuple(CellError(cell=r[0] or 0, source=r[1] or "", error=r[2] or "") for r in db.execute(
                "SELECT cell, source, error FROM cell_errors WHERE submission_id = ? ORDER BY position",
                (sid,))) if "cell_errors" in tables else ()
            cases = tuple(
                CaseRow(position=r[0], name=r[1] or "", function=r[2] or "", hidden=bool(r[3]),
                        description=r[4] or "", call=None if r[3] else r[5], points=r[6] or 0.0,
                        max_points=r[7] or 0.0, status=r[8] or "", message=r[9] or "", received=r[10] or "",
                        traceback=r[11] or "", seconds=r[12] or 0.0)
                for r in db.execute(
                    "SELECT position, name, function, hidden, description, call, points, max_points, status, "
                    "message, received, traceback, seconds FROM case_results WHERE submission_id = ? "
                    "ORDER BY position", (sid,)))
            result.append(SubmissionRow(
                student=student, assignment=assignment, source=source or "", submitted_at=submitted_at or "",
                score=score or 0.0, max_score=max_score or 0.0, status=status or "", message=message or "",
                seconds=seconds or 0.0, student_seconds=student_seconds or 0.0, handins=handins, cases=cases,
                name=name or student, email=email or "", late=None if late is None else bool(late),
                penalty=penalty or 0.0, late_note=late_note or "", raw_score=raw_score,
                cell_errors=cell_errors, deadline=deadline or "", deadline_note=deadline_note or "",
                adjustment=adjustment, adjust_note=adjust_note or "", late_score=late_score, on_roster=on_roster,
                excused=excused or "", slip_days=slip_days, slip_note=slip_note or "",
                **dict(zip(IDENTITY, [value or "" for value in who] if known else [None] * len(IDENTITY)))))
        return result
    finally:
        db.close()


@dataclass(frozen=True)
class AbsentRow:
    """A roster student with no hand-in: `missing` (their deadline passed), `not-yet`, or `unresolved` (it passed,
    but a hand-in the roster cannot place may be theirs: no score)."""
    student: str
    name: str
    status: str
    score: float
    max_score: float
    deadline: str
    deadline_note: str
    adjust_note: str
    note: str = ""      # why it is what it is: an excuse's reason, a late joiner's date


@_one_line_errors
def load_absent(out_dir, assignment_id):
    """The roster students with no hand-in for `assignment_id`, ordered by student (none without a roster)."""
    db = _connect(out_dir)
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'absent'").fetchone():
            return []
        note = "note" if "note" in database.columns(db, "absent") else "NULL"
        return [AbsentRow(r[0], r[1] or r[0], r[2], r[3] or 0.0, r[4] or 0.0, r[5] or "", r[6] or "", r[7] or "",
                          r[8] or "")
                for r in db.execute("SELECT student, name, status, score, max_score, deadline, deadline_note, "
                                    f"adjust_note, {note} FROM absent WHERE assignment = ? ORDER BY student",
                                    (assignment_id,))]
    finally:
        db.close()


@dataclass(frozen=True)
class CodeRow:
    """A student's counted hand-in and its code as grading kept it (gradebook/code.py)."""
    student: str
    name: str
    status: str
    source: str
    pieces: tuple           # ((kind, name, text, cut), ...); () when none was kept


@_one_line_errors
def load_code(out_dir, assignment_id):
    """Every student's counted hand-in with its code, ordered by student (read-only)."""
    db = _connect(out_dir)
    try:
        kept = db.execute("SELECT 1 FROM sqlite_master WHERE name = 'handin_code'").fetchone() is not None
        rows = db.execute(f"SELECT s.student, COALESCE({_optional(db, 'name')}, s.student), s.status, s.source, "
                          "s.sha256 FROM submissions s WHERE s.assignment = ? AND s.counted = 1 ORDER BY s.student",
                          (assignment_id,)).fetchall()
        return [CodeRow(student, name, status, source, read_code(db, sha256) if kept else ())
                for student, name, status, source, sha256 in rows]
    finally:
        db.close()


@dataclass(frozen=True)
class PendingRow:
    """A hand-in set out to be graded and not graded yet (a run stopped half way)."""
    student: str
    name: str
    lms: str | None = ""       # None: an older gradebook this user could not upgrade
    lms_id: str | None = ""


@_one_line_errors
def load_unplaced(out_dir, assignment_id, set_aside=()):
    """[(key, name, source, why)] of hand-ins the roster cannot place (gradebook/store.py, Gradebook.unplaced),
    but those set aside as nobody's on the roster (`set_aside`: their keys)."""
    db = _connect(out_dir)
    try:
        have = {row[1] for row in db.execute("PRAGMA table_info(submissions)")}
        if "unplaced" not in have:
            return []
        found = db.execute("SELECT DISTINCT student, name, source, unplaced FROM submissions WHERE assignment = ? "
                           "AND unplaced != '' ORDER BY 1, 3", (assignment_id,)).fetchall()
        waiting = {row[1] for row in db.execute("PRAGMA table_info(pending)")}
        if "unplaced" in waiting:
            found += db.execute("SELECT DISTINCT student, name, source, unplaced FROM pending WHERE assignment = ? "
                                "AND unplaced != '' ORDER BY 1, 3", (assignment_id,)).fetchall()
        return [row for row in dict.fromkeys(found) if row[0] not in set(set_aside)]
    finally:
        db.close()


def _reading(out_dir, read):
    """What `read(db)` finds in the gradebook, read-only."""
    db = _connect(out_dir)
    try:
        return read(db)
    finally:
        db.close()


@_one_line_errors
def load_graded_files(out_dir, assignment_id):
    """{student: sha256 of the file graded} of the counted hand-ins."""
    return _reading(out_dir, lambda db: dict(db.execute(
        "SELECT student, sha256 FROM submissions WHERE assignment = ? AND counted = 1", (assignment_id,))))


@_one_line_errors
def load_graded_apart(out_dir, assignment_id):
    """[(student, name)] graded with other cases, expected values or limits than most of the class (store.py)."""
    return _reading(out_dir, lambda db: graded_apart(rubrics_of(db, assignment_id)))


@_one_line_errors
def load_stale(out_dir, assignment_id, rubric):
    """[(student, name)] graded under a rubric that is no longer the assignment's (`rubric`, store.stale_of)."""
    return _reading(out_dir, lambda db: stale_of(db, assignment_id, rubric))


@_one_line_errors
def load_pending(out_dir, assignment_id):
    """[PendingRow] of hand-ins not graded yet, one per student, ordered by student."""
    db = _connect(out_dir)
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'pending'").fetchone():
            return []
        known = "lms" in database.columns(db, "pending")
        rows = db.execute("SELECT student, name, " + ("lms, lms_id" if known else "NULL, NULL")
                          + " FROM pending WHERE assignment = ? ORDER BY student, source", (assignment_id,))
        found = {}
        for student, name, lms, lms_id in rows:
            found.setdefault(student, PendingRow(student, name or student, (lms or "") if known else None,
                                                 (lms_id or "") if known else None))
        return list(found.values())
    finally:
        db.close()
