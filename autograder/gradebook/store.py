"""The gradebook: SQLite in the output folder, committed one hand-in at a time.

A run killed halfway loses nothing already graded; `grade` again skips every
hand-in whose file, cases and expected values are unchanged (unless asked to
regrade).  grades.csv is exported from here: one row per student, the newest
hand-in counting, and the same bytes for the same gradebook.
"""

import csv
import io
import sqlite3
from datetime import datetime, timezone

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
CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions (assignment, student);
"""

CSV_COLUMNS = ("student", "assignment", "score", "max_score", "status", "message", "submitted_at",
               "source", "handins")


class GradebookError(Exception):
    """The gradebook file cannot be opened or written."""


def _now():
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


class Gradebook:
    def __init__(self, path):
        try:
            self.db = sqlite3.connect(path, check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as error:
            raise GradebookError(f"{path}: {error}") from None

    def close(self):
        self.db.close()

    def start_run(self, assignment, command, jobs, isolation):
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO runs (assignment, started_at, command, jobs, isolation) VALUES (?, ?, ?, ?, ?)",
                (assignment, _now(), command, jobs, isolation))
        return cursor.lastrowid

    def finish_run(self, run_id):
        with self.db:
            self.db.execute("UPDATE runs SET finished_at = ? WHERE id = ?", (_now(), run_id))

    def is_graded(self, assignment, handin, grader_key):
        """Has this exact file been graded, with these cases and expected values?"""
        row = self.db.execute(
            "SELECT 1 FROM submissions WHERE assignment = ? AND student = ? AND source = ? AND sha256 = ? "
            "AND grader_key = ?", (assignment, handin.student, handin.source, handin.sha256, grader_key)).fetchone()
        return row is not None

    def record(self, run_id, handin, result, grader_key):
        """Store one graded hand-in and its cases, replacing an earlier grading of the same file."""
        with self.db:
            self.db.execute("DELETE FROM submissions WHERE assignment = ? AND student = ? AND source = ? "
                            "AND sha256 = ?", (result.assignment, handin.student, handin.source, handin.sha256))
            cursor = self.db.execute(
                "INSERT INTO submissions (run_id, student, assignment, source, sha256, submitted_at, graded_at, "
                "score, max_score, status, message, seconds, grader_key, student_seconds) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, handin.student, result.assignment, handin.source, handin.sha256, handin.submitted_at,
                 _now(), result.score, result.max_score, result.status, result.message, result.seconds,
                 grader_key, result.student_seconds))
            submission_id = cursor.lastrowid
            self.db.executemany(
                "INSERT INTO case_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(submission_id, position, c.name, c.function, int(c.hidden), c.description,
                  None if c.hidden else c.call, c.points, c.max_points, c.status, c.message,
                  c.received, c.traceback, c.seconds)
                 for position, c in enumerate(result.cases)])
            self._recount(result.assignment, handin.student)
        return submission_id

    def _recount(self, assignment, student):
        # The newest hand-in that could be graded counts; if none could, the newest of all.
        rows = self.db.execute(
            "SELECT id, status, submitted_at, source FROM submissions WHERE assignment = ? AND student = ?",
            (assignment, student)).fetchall()
        usable = [r for r in rows if r[1] not in UNGRADABLE] or rows
        newest = max(usable, key=lambda r: (r[2] or "", r[3] or "", r[0]))  # ties: the later grading
        self.db.execute("UPDATE submissions SET counted = (id = ?) WHERE assignment = ? AND student = ?",
                        (newest[0], assignment, student))

    def grades(self, assignment):
        """One row per student: the counted hand-in."""
        return self.db.execute(
            "SELECT s.student, s.assignment, s.score, s.max_score, s.status, s.message, s.submitted_at, "
            "s.source, (SELECT COUNT(*) FROM submissions t WHERE t.assignment = s.assignment "
            "AND t.student = s.student) FROM submissions s WHERE s.assignment = ? AND s.counted = 1 "
            "ORDER BY s.student", (assignment,)).fetchall()

    def export_csv(self, assignment, path):
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for row in self.grades(assignment):
            student, assignment_id, score, max_score, status, message, submitted_at, source, count = row
            writer.writerow((student, assignment_id, f"{score:g}", f"{max_score:g}", status, message or "",
                             submitted_at or "", source or "", count))
        path.write_text(buffer.getvalue(), encoding="utf-8")


# Statuses of hand-ins that had nothing to grade; a gradable hand-in beats them even if older.
UNGRADABLE = {"invalid-notebook", "empty", "unreadable", "wrong-file-type", "unsafe-path", "too-large",
              "invalid-zip", "no-notebook"}
