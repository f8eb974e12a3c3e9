"""The gradebook: SQLite in the output folder, committed one hand-in at a time.

A run killed halfway loses nothing already graded; `grade` again skips every
hand-in whose file, cases and expected values are unchanged (unless asked to
regrade).  grades.csv is exported from here: one row per student, the newest
hand-in counting, and the same bytes for the same gradebook.

A student is keyed by the LMS's own id where there is one (intake/identity.py),
with their name beside it.  Each hand-in keeps when it was handed in, where that
time came from and the LMS's own late mark; `apply_lateness` derives late,
how late, the penalty and the score after it from the raw score, so a changed
deadline or policy needs no regrading.  New columns are added to an old
gradebook when it is opened (and its rows re-keyed as their hand-ins come in).
"""

import functools
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone

from ..core import lateness
from ..core.csv_cells import csv_text
from ..core.errors import AutograderError

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, assignment TEXT, started_at TEXT, finished_at TEXT,
    command TEXT, jobs INTEGER, isolation TEXT);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY, run_id INTEGER REFERENCES runs(id),
    student TEXT NOT NULL, assignment TEXT NOT NULL, source TEXT,
    sha256 TEXT NOT NULL, submitted_at TEXT, graded_at TEXT,
    score REAL, max_score REAL, status TEXT, message TEXT, seconds REAL,
    counted INTEGER NOT NULL DEFAULT 0,
    grader_key TEXT, student_seconds REAL);
CREATE TABLE IF NOT EXISTS case_results (
    submission_id INTEGER REFERENCES submissions(id) ON DELETE CASCADE, position INTEGER,
    name TEXT, function TEXT, hidden INTEGER, description TEXT,
    call TEXT,  -- NULL for hidden cases: their inputs stay out of every export
    points REAL, max_points REAL, status TEXT, message TEXT, received TEXT,
    traceback TEXT, seconds REAL,
    PRIMARY KEY (submission_id, position));
-- A notebook cell that raised an error or was stopped while the hand-in ran
-- (added later: CREATE IF NOT EXISTS gives old gradebooks the table too).
CREATE TABLE IF NOT EXISTS cell_errors (
    submission_id INTEGER REFERENCES submissions(id) ON DELETE CASCADE, position INTEGER,
    cell INTEGER,   -- 1-based number among the notebook's code cells
    source TEXT,    -- its first lines
    error TEXT,
    PRIMARY KEY (submission_id, position));
CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions (assignment, student);
"""

# Added to `submissions` after its first version; ALTER TABLE adds them to an older gradebook.
# key_version: NULL for rows written before students were keyed by LMS ids.
ADDED_COLUMNS = (("name", "TEXT"), ("email", "TEXT"), ("late_mark", "INTEGER"), ("time_source", "TEXT"),
                 ("raw_score", "REAL"), ("late", "INTEGER"), ("late_seconds", "REAL"), ("penalty", "REAL"),
                 ("late_note", "TEXT"), ("key_version", "INTEGER"),
                 # A file's modification time: orders two downloads of one hand-in; never judges lateness.
                 ("file_time", "TEXT"),
                 # Why the hand-in ran a second time with the generous cell limit ("" when it did not).
                 ("rerun", "TEXT"))
KEY_VERSION = 2

CSV_COLUMNS = ("student", "assignment", "score", "max_score", "status", "message", "name", "handed_in_at",
               "time_source", "late", "penalty", "late_note", "source", "handins", "isolation", "rerun")


class GradebookError(AutograderError):
    """The gradebook file cannot be opened or written."""


def _now():
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def text(value):
    """Any text a hand-in produced, as SQLite and every CSV reader can take it.

    A notebook may hold a lone surrogate ('\\ud800', valid in JSON and in a
    Python str, not in UTF-8) or a NUL; each becomes U+FFFD instead of
    failing the row."""
    if not isinstance(value, str):
        return value
    return _UNSTORABLE.sub("\ufffd", value)


_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")
# The columns each table must have: a gradebook edited by hand is refused in one line, not a traceback.
REQUIRED_COLUMNS = {
    "runs": {"id", "assignment", "started_at", "finished_at", "command", "jobs", "isolation"},
    "submissions": {"id", "run_id", "student", "assignment", "source", "sha256", "submitted_at", "graded_at",
                    "score", "max_score", "status", "message", "seconds", "counted", "grader_key",
                    "student_seconds"},
    "case_results": {"submission_id", "position", "name", "function", "hidden", "description", "call",
                     "points", "max_points", "status", "message", "received", "traceback", "seconds"},
    "cell_errors": {"submission_id", "position", "cell", "source", "error"},
}


def check_file(db, path):
    """Refuse a damaged or hand-edited gradebook with one line that says what to do."""
    problem = db.execute("PRAGMA quick_check(1)").fetchone()[0]
    if problem != "ok":
        raise GradebookError(f"{path} is damaged (SQLite: {problem}). Move it aside (e.g. `mv {path} "
                             f"{path}.damaged`) and grade again, which grades every hand-in afresh, "
                             "or restore it from a backup")
    for table, columns in REQUIRED_COLUMNS.items():
        have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if have and not columns <= have:
            missing = ", ".join(sorted(columns - have))
            raise GradebookError(f"{path}: table {table} lacks column(s) {missing}: was it edited by hand or "
                                 "by another program? Restore it from a backup, or move it aside and grade "
                                 "again")


def _one_line_errors(method):
    """Any SQLite failure after opening (a disk that fills, a file changed underneath) is a GradebookError."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as error:
            raise GradebookError(f"{self.path}: {error}") from None
    return wrapper


class Gradebook:
    def __init__(self, path):
        self.path = path
        try:
            self.db = sqlite3.connect(path, check_same_thread=False)
            check_file(self.db, path)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.executescript(SCHEMA)
            check_file(self.db, path)
            self._migrate()
        except sqlite3.DatabaseError as error:
            raise GradebookError(f"{path}: not a usable gradebook ({error}); move it aside and grade again, "
                                 "or restore it from a backup") from None

    @_one_line_errors
    def _migrate(self):
        have = {row[1] for row in self.db.execute("PRAGMA table_info(submissions)")}
        with self.db:
            for column, kind in ADDED_COLUMNS:
                if column not in have:
                    self.db.execute(f"ALTER TABLE submissions ADD COLUMN {column} {kind}")
            self.db.execute("UPDATE submissions SET raw_score = score WHERE raw_score IS NULL")
            self.db.execute("UPDATE submissions SET name = student WHERE name IS NULL")
        self._legacy = self.db.execute("SELECT 1 FROM submissions WHERE key_version IS NULL LIMIT 1").fetchone()

    def close(self):
        self.db.close()

    @_one_line_errors
    def start_run(self, assignment, command, jobs, isolation):
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO runs (assignment, started_at, command, jobs, isolation) VALUES (?, ?, ?, ?, ?)",
                (assignment, _now(), command, jobs, isolation))
        return cursor.lastrowid

    @_one_line_errors
    def finish_run(self, run_id):
        with self.db:
            self.db.execute("UPDATE runs SET finished_at = ? WHERE id = ?", (_now(), run_id))

    @_one_line_errors
    def students(self, assignment):
        return {r[0] for r in self.db.execute("SELECT DISTINCT student FROM submissions WHERE assignment = ?",
                                              (assignment,))}

    @_one_line_errors
    def assignments(self):
        return [r[0] for r in self.db.execute("SELECT DISTINCT assignment FROM submissions ORDER BY assignment")]

    @_one_line_errors
    def sources(self, assignment, limit=3):
        return [r[0] for r in self.db.execute(
            "SELECT DISTINCT source FROM submissions WHERE assignment = ? ORDER BY source LIMIT ?",
            (assignment, limit))]

    @_one_line_errors
    def adopt(self, assignment, handin):
        """Re-key rows written before LMS ids were keys: the same file from the same place is this student's."""
        if not self._legacy:
            return
        # The old key was the name (or the key itself): a group's shared file stays with each member.
        match = ("assignment = ? AND source = ? AND key_version IS NULL AND student IN (?, ?)",
                 (assignment, handin.source, handin.name, handin.student))
        old = [r[0] for r in self.db.execute(f"SELECT DISTINCT student FROM submissions WHERE {match[0]}",
                                             match[1])]
        if not old:
            return
        with self.db:
            self.db.execute(f"UPDATE submissions SET student = ?, name = ?, key_version = ? WHERE {match[0]}",
                            (handin.student, handin.name, KEY_VERSION, *match[1]))
            for student in {handin.student, *old}:
                self._recount(assignment, student)

    @_one_line_errors
    def is_graded(self, assignment, handin, grader_key):
        """Has this exact file been graded, with these cases and expected values?"""
        row = self.db.execute(
            "SELECT 1 FROM submissions WHERE assignment = ? AND student = ? AND source = ? AND sha256 = ? "
            "AND grader_key = ? AND status != 'grader-error'",  # the grader failed on it: try again
            (assignment, handin.student, handin.source, handin.sha256, grader_key)).fetchone()
        return row is not None

    @_one_line_errors
    def record(self, run_id, handin, result, grader_key):
        """Store one graded hand-in and its cases, replacing an earlier grading of the same file."""
        with self.db:
            self.db.execute("DELETE FROM submissions WHERE assignment = ? AND student = ? AND source = ? "
                            "AND sha256 = ?", (result.assignment, handin.student, handin.source, handin.sha256))
            cursor = self.db.execute(
                "INSERT INTO submissions (run_id, student, assignment, source, sha256, submitted_at, graded_at, "
                "score, max_score, status, message, seconds, grader_key, student_seconds, name, email, late_mark, "
                "time_source, raw_score, key_version, file_time, rerun) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                tuple(map(text, (run_id, handin.student, result.assignment, handin.source, handin.sha256,
                                 handin.submitted_at, _now(), result.score, result.max_score, result.status,
                                 result.message, result.seconds, grader_key, result.student_seconds,
                                 handin.name or handin.student, handin.email, _flag(handin.late_mark),
                                 handin.time_source, result.score, KEY_VERSION,
                                 getattr(handin, "file_time", None), getattr(result, "rerun", "")))))
            submission_id = cursor.lastrowid
            self.db.executemany(
                "INSERT INTO case_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [tuple(map(text, (submission_id, position, c.name, c.function, int(c.hidden), c.description,
                                  None if c.hidden else c.call, c.points, c.max_points, c.status, c.message,
                                  c.received, c.traceback, c.seconds)))
                 for position, c in enumerate(result.cases)])
            self.db.executemany(
                "INSERT INTO cell_errors VALUES (?, ?, ?, ?, ?)",
                [tuple(map(text, (submission_id, position, e["cell"], e["source"], e["error"])))
                 for position, e in enumerate(result.cell_errors)])
            self._recount(result.assignment, handin.student)
        return submission_id

    def _recount(self, assignment, student):
        # The newest hand-in that could be graded counts; if none could, the newest of all.  "Newest" by
        # the hand-in time where one is known, else by the file's time (a browser's later download).
        rows = self.db.execute(
            "SELECT id, status, COALESCE(submitted_at, file_time), source FROM submissions "
            "WHERE assignment = ? AND student = ?", (assignment, student)).fetchall()
        if not rows:
            return
        usable = [r for r in rows if r[1] not in UNGRADABLE] or rows
        newest = max(usable, key=lambda r: (r[2] or "", r[3] or "", r[0]))  # ties: the later grading
        self.db.execute("UPDATE submissions SET counted = (id = ?) WHERE assignment = ? AND student = ?",
                        (newest[0], assignment, student))

    @_one_line_errors
    def apply_lateness(self, assignment, rules):
        """Late or not, how late, the penalty and the score after it, for every hand-in of `assignment`.

        Returns the counted hand-ins that were late: [(student, name, note)].
        """
        rows = self.db.execute("SELECT id, submitted_at, late_mark, raw_score, status FROM submissions "
                               "WHERE assignment = ?", (assignment,)).fetchall()
        with self.db:
            for sid, submitted_at, late_mark, raw_score, status in rows:
                found = lateness.assess(submitted_at, None if late_mark is None else bool(late_mark),
                                        raw_score or 0.0, rules)
                self.db.execute("UPDATE submissions SET score = ?, late = ?, late_seconds = ?, penalty = ?, "
                                "late_note = ? WHERE id = ?",
                                (found.score, _flag(found.late), found.seconds, found.penalty, found.note, sid))
        return self.db.execute("SELECT student, name, late_note FROM submissions WHERE assignment = ? "
                               "AND counted = 1 AND late = 1 ORDER BY student", (assignment,)).fetchall()

    @_one_line_errors
    def grades(self, assignment):
        """One GradeRow per student, the counted hand-in's, ordered by student."""
        rows = self.db.execute(
            "SELECT s.student, s.assignment, s.score, s.max_score, s.status, s.message, s.name, s.submitted_at, "
            "s.time_source, s.late, s.penalty, s.late_note, s.source, (SELECT COUNT(*) FROM submissions t "
            "WHERE t.assignment = s.assignment AND t.student = s.student), "
            # The isolation layer of the run that graded it: "none" marks an unprotected grading.
            "(SELECT r.isolation FROM runs r WHERE r.id = s.run_id), s.rerun "
            "FROM submissions s WHERE s.assignment = ? AND s.counted = 1 ORDER BY s.student",
            (assignment,)).fetchall()
        return [GradeRow(*row) for row in rows]

    @_one_line_errors
    def export_csv(self, assignment, path):
        rows = [(r.student, r.assignment, f"{r.score:g}", f"{r.max_score:g}", r.status, r.message or "",
                 r.name or r.student, r.handed_in_at or "", r.time_source or "", late_word(r.late),
                 f"{r.penalty or 0:g}",
                 r.late_note or "", r.source or "", r.handins, r.isolation or "", r.rerun or "")
                for r in self.grades(assignment)]
        path.write_text(csv_text(CSV_COLUMNS, rows), encoding="utf-8")


@dataclass(frozen=True)
class GradeRow:
    """A student's row of grades.csv: the counted hand-in (fields in CSV_COLUMNS' order)."""
    student: str
    assignment: str
    score: float
    max_score: float
    status: str
    message: str | None
    name: str | None
    handed_in_at: str | None
    time_source: str | None       # where handed_in_at (or the late mark) came from, for people
    late: int | None              # 1 late, 0 on time, None: nothing says
    penalty: float | None
    late_note: str | None
    source: str | None
    handins: int                  # hand-ins of this student for this assignment
    isolation: str | None         # the layer of the run that graded it
    rerun: str | None = None      # why it ran again with the generous cell limit


def late_word(late):
    return {1: "yes", 0: "no"}.get(late, "")


def _flag(value):
    return None if value is None else int(bool(value))


# Statuses of hand-ins that had nothing to grade; a gradable hand-in beats them even if older.
UNGRADABLE = {"invalid-notebook", "empty", "unreadable", "wrong-file-type", "unsafe-path", "too-large",
              "invalid-zip", "no-notebook", "wrong-assignment", "wrong-language"}
