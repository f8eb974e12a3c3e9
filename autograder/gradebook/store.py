"""The gradebook: SQLite in the output folder, committed one hand-in at a time.

A run killed halfway loses nothing already graded; `grade` again skips every
hand-in whose file, cases and expected values are unchanged (unless asked to
regrade).  grades.csv is exported from here: one row per student, the newest
hand-in counting, and the same bytes for the same gradebook.

A student is keyed by the LMS's own id where there is one (intake/identity.py),
with their name beside it.  Each hand-in keeps when it was handed in, where that
time came from and the LMS's own late mark; `apply_lateness` derives late,
how late, the penalty and the score after it from the raw score, so a changed
deadline or policy needs no regrading.  A gradebook of an earlier version is
brought to this one when it is opened (schema.py), and rows keyed before LMS ids
were keys are re-keyed as their hand-ins come in.
"""

import functools
import re
import sqlite3
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from ..core import database, lateness
from ..core.assignment import rubric_of
from . import code, schema
from ..core.course import LateRules
from ..roster.store import apply_adjustments
from .semester import semester_of
from ..core.csv_cells import Number, csv_text
from ..core.errors import AutograderError
from ..core.sharing import check_access, new_database

KEY_VERSION = 2

CSV_COLUMNS = ("student", "assignment", "score", "max_score", "status", "message", "name", "handed_in_at",
               "time_source", "late", "penalty", "late_note", "source", "handins", "isolation", "rerun",
               "deadline", "adjustment", "adjust_reason", "on_roster", "excused", "slip_days", "slip_note")


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
_one_line_errors = database.one_line_errors(GradebookError, where=lambda gradebook, *_: gradebook.path)


class Gradebook:
    def __init__(self, path):
        self.path = path
        try:
            check_access(path)
            new_database(path)
            self.db = sqlite3.connect(path, check_same_thread=False)
            schema.check_file(self.db, path, GradebookError)
            self.db.execute("PRAGMA foreign_keys = ON")
            # A gradebook of any earlier version is brought to this one (schema.py says what each step adds).
            database.upgrade(self.db, schema.STEPS, path, GradebookError)
            schema.check_file(self.db, path, GradebookError)
        except sqlite3.DatabaseError as error:
            raise GradebookError(f"{path}: not a usable gradebook ({error}); move it aside and grade again, "
                                 "or restore it from a backup") from None
        self._legacy = self._has_legacy_keys()

    @_one_line_errors
    def _has_legacy_keys(self):
        """Rows keyed by name, from before students were keyed by LMS ids: `adopt` re-keys them."""
        return self.db.execute("SELECT 1 FROM submissions WHERE key_version IS NULL LIMIT 1").fetchone()

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
        """Has this exact file been graded, with these cases and expected values, and not been set out to be
        graded again by a run that stopped before it got to it (a `--regrade` interrupted)?"""
        key = (assignment, handin.student, handin.source, handin.sha256)
        row = self.db.execute(
            "SELECT 1 FROM submissions WHERE assignment = ? AND student = ? AND source = ? AND sha256 = ? "
            "AND grader_key = ? AND status NOT IN ('grader-error', 'superseded')",  # failed on it, or not run
            (*key, grader_key)).fetchone()
        waiting = self.db.execute("SELECT 1 FROM pending WHERE assignment = ? AND student = ? AND source = ? "
                                  "AND sha256 = ?", key).fetchone()
        return row is not None and waiting is None

    @_one_line_errors
    def expect(self, run_id, assignment, handins, max_score):
        """Note, before grading starts, every hand-in this run will grade: until each is recorded, its student
        is `not-graded`."""
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO pending (assignment, student, name, source, sha256, submitted_at, "
                "max_score, run_id, lms, lms_id, unplaced) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [tuple(map(text, (assignment, h.student, h.name or h.student, h.source, h.sha256, h.submitted_at,
                                  max_score, run_id, h.lms, h.lms_id, getattr(h, "unplaced", ""))))
                 for h in handins])

    @_one_line_errors
    def pending(self, assignment):
        """[(student, name, source)] of hand-ins set out to be graded and not graded yet, ordered by student."""
        return self.db.execute("SELECT student, name, source FROM pending WHERE assignment = ? "
                               "ORDER BY student, source", (assignment,)).fetchall()

    @_one_line_errors
    def set_time(self, assignment, handin):
        """A graded hand-in's time from the LMS's record (`grade --times`), without grading it again: lateness
        follows at the next refresh.  Returns whether anything changed."""
        if not handin.submitted_at:
            return False
        with self.db:
            cursor = self.db.execute(
                "UPDATE submissions SET submitted_at = ?, time_source = ? WHERE assignment = ? AND student = ? "
                "AND source = ? AND sha256 = ? AND (submitted_at IS NOT ? OR time_source IS NOT ?)",
                tuple(map(text, (handin.submitted_at, handin.time_source, assignment, handin.student, handin.source,
                                 handin.sha256, handin.submitted_at, handin.time_source))))
            if cursor.rowcount:
                self._recount(assignment, handin.student)
        return bool(cursor.rowcount)

    @_one_line_errors
    def set_placement(self, assignment, handin):
        """Whether a hand-in graded before is placed on the roster, as matching says now (roster/match.py)."""
        with self.db:
            self.db.execute("UPDATE submissions SET unplaced = ? WHERE assignment = ? AND student = ? AND source = ? "
                            "AND sha256 = ?", tuple(map(text, (getattr(handin, "unplaced", ""), assignment,
                                                               handin.student, handin.source, handin.sha256))))

    @_one_line_errors
    def record(self, run_id, handin, result, grader_key):
        """Store one graded hand-in and its cases, replacing an earlier grading of the same file."""
        key = (result.assignment, handin.student, handin.source, handin.sha256)
        with self.db:
            # A regrade keeps when the hand-in was first given (what orders it among the student's others), and
            # its hand-in time when this run has none: one an earlier --times gave is as true of the same file now
            # (a regrade without --times dropped it, and with it the late penalty, from the LMS file).
            before = self.db.execute("SELECT given, submitted_at, time_source FROM submissions WHERE assignment = ? "
                                     "AND student = ? AND source = ? AND sha256 = ?", key).fetchone()
            started = self.db.execute("SELECT started_at FROM runs WHERE id = ?", (run_id,)).fetchone()
            given = before[0] if before and before[0] else \
                f"{started[0] if started else _now()}#{getattr(handin, 'position', 0):04d}"
            submitted_at, time_source = handin.submitted_at, handin.time_source
            if not submitted_at and before and before[1]:
                submitted_at, time_source = before[1], before[2]
            self.db.execute("DELETE FROM submissions WHERE assignment = ? AND student = ? AND source = ? "
                            "AND sha256 = ?", key)
            cursor = self.db.execute(
                "INSERT INTO submissions (run_id, student, assignment, source, sha256, submitted_at, graded_at, "
                "score, max_score, status, message, seconds, grader_key, student_seconds, name, email, late_mark, "
                "time_source, raw_score, key_version, file_time, rerun, lms, lms_id, lms_prefix, repository, "
                "unplaced, lms_order, given) "
                f"VALUES ({', '.join('?' * 29)})",
                tuple(map(text, (run_id, handin.student, result.assignment, handin.source, handin.sha256,
                                 submitted_at, _now(), result.score, result.max_score, result.status,
                                 result.message, result.seconds, grader_key, result.student_seconds,
                                 handin.name or handin.student, handin.email, _flag(handin.late_mark),
                                 time_source, result.score, KEY_VERSION,
                                 getattr(handin, "file_time", None), getattr(result, "rerun", ""),
                                 handin.lms, handin.lms_id, handin.lms_prefix, handin.repository,
                                 getattr(handin, "unplaced", ""), getattr(handin, "lms_order", None), given))))
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
            code.store_code(self.db, handin.sha256, getattr(result, "code", ()), text)
            self.db.execute("INSERT INTO grading_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            tuple(map(text, (result.assignment, handin.student, handin.source, handin.sha256,
                                             submitted_at, time_source, _now(), run_id, result.score,
                                             result.max_score, result.status))))
            self.db.execute("DELETE FROM pending WHERE assignment = ? AND student = ? AND source = ? AND sha256 = ?",
                            (result.assignment, handin.student, handin.source, handin.sha256))
            self._recount(result.assignment, handin.student)
        return submission_id

    @_one_line_errors
    def has_code(self, sha256):
        return code.has_code(self.db, sha256)

    @_one_line_errors
    def keep_code(self, sha256, pieces):
        """Keep a hand-in's code (gradebook/code.py) graded before code was kept."""
        with self.db:
            code.store_code(self.db, sha256, pieces, text)

    def _recount(self, assignment, student):
        # The newest hand-in that could be graded counts; if none could, the newest of all.  "Newest" by the
        # hand-in time where one is known, else by the LMS's order (Canvas's attachment ids), else by the
        # file's time (a browser's later download), else by the download given to `grade` later: never by
        # its score.  The notebooks of one submission tie on all of these (intake/assemble.py): of them, the
        # best counts.
        # Only what every one of them has orders them (order_keys): a time an earlier run's --times gave one
        # hand-in does not outrank a later upload graded without one.
        rows = self.db.execute(
            f"SELECT id, status, {ORDER_COLUMNS}, source, raw_score FROM submissions WHERE assignment = ? AND "
            "student = ?", (assignment, student)).fetchall()
        if not rows:
            return
        usable = [r for r in rows if r[1] not in UNGRADABLE] or rows
        keys = order_keys([r[2:6] for r in usable], self._zone(assignment))
        newest = max(zip(keys, usable), key=lambda pair: (*pair[0], pair[1][7] or 0.0, pair[1][6] or "",
                                                           pair[1][0]))[1]
        self.db.execute("UPDATE submissions SET counted = (id = ?) WHERE assignment = ? AND student = ?",
                        (newest[0], assignment, student))

    @_one_line_errors
    def apply_lateness(self, assignment, rules, records=None, max_score=None, course=None):
        """Late or not, how late, the slip days spent, the penalty, the adjustments and the score after them, for
        every hand-in of `assignment`; and, with a roster, a `missing`, `not-yet`, `excused` or `unresolved` row
        for each roster student with none (semester.py has the one rule): `unresolved` (no score) instead of
        `missing` while a hand-in the roster cannot place may be theirs (the teaching team places each with
        `autograder roster place`, or sets it aside as nobody's).

        `records` is the course's roster.CourseRecords (None: the course keeps none); `course` gives the course's
        policies (late joiners, slip days) and the other assignments' gradebooks slip days are counted across.
        Returns the counted hand-ins that were late: [(student, name, note)].
        """
        self._save_rules(assignment, rules)
        with self.db:
            # The deadline's zone reads the hand-in times without an offset that order a student's hand-ins.
            for (student,) in self.db.execute("SELECT student FROM submissions WHERE assignment = ? GROUP BY "
                                              "student HAVING COUNT(*) > 1", (assignment,)).fetchall():
                self._recount(assignment, student)
        standing = _Standing.of(assignment, rules, records, semester_of(course, records, assignment, _read_only))
        rows = self.db.execute("SELECT id, student, submitted_at, late_mark, raw_score, status, counted, max_score "
                               "FROM submissions WHERE assignment = ?", (assignment,)).fetchall()
        with self.db:
            for row in rows:
                self._score_after_lateness(standing, *row[:-1])
            if max_score is None:     # the first hand-in that has one
                max_score = next((row[-1] for row in rows if row[-1] is not None), None)
            # A hand-in not graded yet (a run stopped half way) was handed in all the same: never `missing`.
            handed_in = {r[1] for r in rows} | {r[0] for r in self.pending(assignment)}
            self._record_absent(standing, handed_in, max_score)
        return self.db.execute("SELECT student, name, late_note FROM submissions WHERE assignment = ? "
                               "AND counted = 1 AND late = 1 ORDER BY student", (assignment,)).fetchall()

    def _score_after_lateness(self, standing, sid, student, submitted_at, late_mark, raw_score, status, counted):
        """One hand-in's lateness against the student's own deadline, slip days spent, adjustments, score."""
        rules, semester = standing.rules, standing.semester
        deadline, why = standing.own_deadline(student)
        mark = None if late_mark is None else bool(late_mark)
        found = lateness.assess(submitted_at, mark, raw_score or 0.0, replace(rules, deadline=deadline), extended=why)
        seconds = found.seconds      # how late against the student's own deadline, before slip days
        slip_days = slip_note = None
        if counted:
            found, slip_days, slip_note = semester.with_slip_days(
                student, found, status, submitted_at, mark, raw_score or 0.0, rules, deadline, why)
        mine = standing.adjustments.get(student, [])
        score = apply_adjustments(found.score, mine)
        self.db.execute(
            "UPDATE submissions SET score = ?, late = ?, late_seconds = ?, penalty = ?, late_note = ?, "
            "late_score = ?, adjustment = ?, adjust_note = ?, deadline = ?, deadline_note = ?, "
            "on_roster = ?, slip_days = ?, slip_note = ?, excused = ? WHERE id = ?",
            (score, _flag(found.late), seconds, found.penalty, found.note, found.score,
             round(score - found.score, 4) if mine else None, _adjust_note(mine),
             deadline.isoformat() if deadline else None, why,
             None if standing.records is None or not standing.on_roster else int(student in standing.on_roster),
             slip_days, slip_note, semester.excused(student) or None, sid))

    def _record_absent(self, standing, handed_in, max_score):
        """A `missing`, `not-yet`, `excused` or `unresolved` row for each roster student with no hand-in."""
        assignment = standing.assignment
        self.db.execute("DELETE FROM absent WHERE assignment = ?", (assignment,))
        roster = standing.roster
        unplaced = self.unplaced(assignment, set_aside(standing.records, assignment)) if roster else []
        moment = datetime.now(timezone.utc)
        for student in roster:
            if student.key in handed_in or student.test_student:
                continue
            deadline, why = standing.own_deadline(student.key)
            passed = deadline is not None and deadline <= moment
            status, note = standing.semester.absent_status(student.key, deadline, passed, bool(unplaced))
            mine = standing.adjustments.get(student.key, [])
            score = (None if status in (UNRESOLVED, EXCUSED) else apply_adjustments(0.0, mine)
                     if passed or mine else 0.0)
            self.db.execute("INSERT INTO absent (assignment, student, name, status, score, max_score, deadline, "
                            "deadline_note, adjustment, adjust_note, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (assignment, student.key, student.name, status, score,
                             max_score or 0.0, deadline.isoformat() if deadline else None, why,
                             score if mine and score is not None else None, _adjust_note(mine), note or None))

    @_one_line_errors
    def unplaced(self, assignment, set_aside=()):
        """[(key, name, source, why)] of the hand-ins (graded or waiting) the roster cannot place, but those the
        teaching team set aside as nobody's on the roster (`set_aside`: their keys)."""
        found = self.db.execute(
            "SELECT DISTINCT student, name, source, unplaced FROM submissions WHERE assignment = ? AND unplaced != '' "
            "UNION SELECT DISTINCT student, name, source, unplaced FROM pending WHERE assignment = ? "
            "AND unplaced != '' ORDER BY 1, 3", (assignment, assignment)).fetchall()
        return [row for row in found if row[0] not in set(set_aside)]

    def _save_rules(self, assignment, rules):
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO late_rules VALUES (?, ?, ?, ?, ?)",
                            (assignment, rules.deadline.isoformat() if rules.deadline else None, rules.policy,
                             rules.penalty, rules.cap))

    def _zone(self, assignment):
        """The zone a hand-in time without a UTC offset is read in: the deadline's, as lateness reads it."""
        row = self.db.execute("SELECT deadline FROM late_rules WHERE assignment = ?", (assignment,)).fetchone()
        try:
            return datetime.fromisoformat(row[0]).tzinfo if row and row[0] else None
        except ValueError:
            return None

    @_one_line_errors
    def upgrade_key(self, assignment, legacy, key):
        """Hand-ins an older version graded under the key it stored, `legacy`, which is today's `key`: the same
        rubric and options, so they keep their grading and get the key that says so (Assignment.grader_key)."""
        with self.db:
            self.db.execute("UPDATE submissions SET grader_key = ? WHERE assignment = ? AND grader_key = ?",
                            (key, assignment, legacy))

    @_one_line_errors
    def regrade_reasons(self, assignment, handins, key):
        """Why each of `handins` is graded again (this run's grader `key`), in words for people:
        {reason: [hand-in]}; a hand-in never graded before is in none."""
        found = {}
        rubric = rubric_of(key)
        for handin in handins:
            rows = self.db.execute("SELECT grader_key, status FROM submissions WHERE assignment = ? AND student = ? "
                                   "AND source = ? AND sha256 = ?", (assignment, handin.student, handin.source,
                                                                     handin.sha256)).fetchall()
            waiting = self.db.execute("SELECT 1 FROM pending WHERE assignment = ? AND student = ? AND source = ? "
                                      "AND sha256 = ?", (assignment, handin.student, handin.source,
                                                         handin.sha256)).fetchone()
            if not rows:
                continue
            old_key, status = rows[0]
            if waiting:
                why = "set out to be graded again by a run that stopped before it got to them"
            elif old_key != key and rubric_of(old_key) is None:
                why = "graded by an earlier version of the grader, which did not record the rubric it graded under"
            elif rubric_of(old_key) != rubric:
                why = ("graded under cases, points, expected values or limits that are no longer the assignment's "
                       "(cases.toml, expected.json or timing.json changed since)")
            elif old_key != key:
                why = "graded with other options (--timeout, --limit-floor, --limit-factor, --submission-timeout)"
            elif status == "grader-error":
                why = "the grader failed on them last time"
            else:
                why = "--regrade"
            found.setdefault(why, []).append(handin)
        return found

    @_one_line_errors
    def stale(self, assignment, rubric):
        """[(student, name)] whose counted hand-in was graded under a rubric no longer the assignment's."""
        return stale_of(self.db, assignment, rubric)

    @_one_line_errors
    def graded_with_roster(self, assignment):
        """Was `assignment` graded against the course's roster (a row says whether it is on it, or a roster
        student's row without a hand-in is kept)?  Not a `--no-roster` run's, nor one before any roster."""
        return bool(self.db.execute("SELECT 1 FROM submissions WHERE assignment = ? AND on_roster IS NOT NULL "
                                    "UNION SELECT 1 FROM absent WHERE assignment = ? LIMIT 1",
                                    (assignment, assignment)).fetchone())

    @_one_line_errors
    def graded_apart(self, assignment):
        """[(student, name)] whose counted hand-in was graded with other cases or limits than most (graded_apart)."""
        return graded_apart(rubrics_of(self.db, assignment))

    @_one_line_errors
    def saved_rules(self, assignment):
        """The late rules the last run applied to `assignment` (None before any): for a refresh."""
        row = self.db.execute("SELECT deadline, policy, penalty, cap FROM late_rules WHERE assignment = ?",
                              (assignment,)).fetchone()
        if row is None:
            return None
        return LateRules(datetime.fromisoformat(row[0]) if row[0] else None, row[1], row[2] or 0.0, row[3])

    @_one_line_errors
    def absent(self, assignment):
        """[(student, name, status, deadline)] of roster students with no hand-in."""
        return self.db.execute("SELECT student, name, status, deadline FROM absent WHERE assignment = ? "
                               "ORDER BY student", (assignment,)).fetchall()

    @_one_line_errors
    def rekey(self, assignment, old, new, name, source=None):
        """A hand-in's rows move to the roster's key for its student (matched after an earlier run); with
        `source`, only that hand-in's (a D2L namesake's submission, kept apart from the others of its name)."""
        if old == new:
            return
        where, params = "assignment = ? AND student = ?", [assignment, old]
        if source is not None:
            where, params = where + " AND source = ?", params + [source]
        with self.db:
            for table in ("submissions", "pending"):
                self.db.execute(f"UPDATE {table} SET student = ?, name = ? WHERE {where}", (new, name, *params))
            self.db.execute(f"UPDATE grading_log SET student = ? WHERE {where}", (new, *params))
            self._recount(assignment, new)
            self._recount(assignment, old)

    @_one_line_errors
    def place(self, assignment, key, students):
        """The teaching team's placement of the hand-ins keyed `key` (`roster place`), without grading again:
        [(student key, name)] gets them (the first by re-keying, each other member a copy of the rows), or,
        when empty, they stay as they are, set aside.  Either way they are no longer unplaced."""
        with self.db:
            self.db.execute("UPDATE submissions SET unplaced = '' WHERE assignment = ? AND student = ?",
                            (assignment, key))
            self.db.execute("UPDATE pending SET unplaced = '' WHERE assignment = ? AND student = ?",
                            (assignment, key))
        if not students:
            return
        if key in {student for student, _ in students}:     # a group's hand-in, already its representative's
            for student, name in students:
                if student != key:
                    self._copy(assignment, key, student, name)
            return
        for student, name in students[1:]:
            self._copy(assignment, key, student, name)
        self.rekey(assignment, key, *students[0])

    def _copy(self, assignment, old, new, name):
        """Every row of `old`'s hand-ins, and their cases and cell errors, also as `new`'s."""
        columns = [r[1] for r in self.db.execute("PRAGMA table_info(submissions)") if r[1] not in ("id", "student",
                                                                                                 "name")]
        listed = ", ".join(columns)
        with self.db:
            self.db.execute("DELETE FROM submissions WHERE assignment = ? AND student = ? AND (source, sha256) IN "
                            "(SELECT source, sha256 FROM submissions WHERE assignment = ? AND student = ?)",
                            (assignment, new, assignment, old))
            for sid, in self.db.execute("SELECT id FROM submissions WHERE assignment = ? AND student = ?",
                                        (assignment, old)).fetchall():
                cursor = self.db.execute(f"INSERT INTO submissions (student, name, {listed}) SELECT ?, ?, {listed} "
                                         "FROM submissions WHERE id = ?", (new, name, sid))
                for table in ("case_results", "cell_errors"):
                    rest = [r[1] for r in self.db.execute(f"PRAGMA table_info({table})") if r[1] != "submission_id"]
                    self.db.execute(f"INSERT INTO {table} (submission_id, {', '.join(rest)}) SELECT ?, "
                                    f"{', '.join(rest)} FROM {table} WHERE submission_id = ?", (cursor.lastrowid, sid))
            self._recount(assignment, new)

    @_one_line_errors
    def grades(self, assignment):
        """One GradeRow per student, ordered by student: the counted hand-in's, or a roster student's
        `missing` or `not-yet` row."""
        rows = self.db.execute(
            "SELECT s.student, s.assignment, s.score, s.max_score, s.status, s.message, s.name, s.submitted_at, "
            "s.time_source, s.late, s.penalty, s.late_note, s.source, (SELECT COUNT(*) FROM submissions t "
            "WHERE t.assignment = s.assignment AND t.student = s.student), "
            # The isolation layer of the run that graded it: "none" marks an unprotected grading.
            "(SELECT r.isolation FROM runs r WHERE r.id = s.run_id), s.rerun, s.deadline, s.adjustment, "
            "s.adjust_note, s.on_roster, s.repository, s.excused, s.slip_days, s.slip_note "
            "FROM submissions s WHERE s.assignment = ? AND s.counted = 1 ORDER BY s.student",
            (assignment,)).fetchall()
        found = _not_graded(self.db, assignment, [self._said_how_it_counts(GradeRow(*row)) for row in rows])
        for student, name, status, score, max_score, deadline, adjustment, adjust_note, note in self.db.execute(
                "SELECT student, name, status, score, max_score, deadline, adjustment, adjust_note, note FROM absent "
                "WHERE assignment = ?", (assignment,)):
            message = ABSENT_MESSAGES.get(status, status).format(assignment=assignment)
            if note:
                message = note if status == EXCUSED else f"{message}; {note}"
            found.append(GradeRow(student, assignment, score or 0.0, max_score or 0.0, status, message, name, None,
                                  None, None, None, None, None, 0, None, None, deadline, adjustment, adjust_note,
                                  1, None, note if status == EXCUSED else None))
        return sorted(found, key=lambda row: row.student)

    def _said_how_it_counts(self, row):
        """The row, its message saying what chose it among the student's hand-ins when no time did."""
        if row.handins < 2:
            return row
        found = self.db.execute(f"SELECT counted, status, {ORDER_COLUMNS} FROM submissions WHERE assignment = ? "
                                "AND student = ?", (row.assignment, row.student)).fetchall()
        counted = next((r[2:] for r in found if r[0]), None)
        # (An older submission not run, `superseded`, was set aside by these same keys: it says what chose.)
        others = [r[2:] for r in found if not r[0] and (r[1] not in UNGRADABLE or r[1] == "superseded")]
        note = order_note(counted, others, self._zone(row.assignment)) if counted is not None else ""
        return replace(row, message="\n".join(filter(None, [note, row.message]))) if note else row

    @_one_line_errors
    def export_csv(self, assignment, path):
        rows = [(r.student, r.assignment, "" if r.status in NO_SCORE else f"{r.score:g}", f"{r.max_score:g}",
                 r.status, r.message or "",
                 r.name or r.student, r.handed_in_at or "", r.time_source or "", late_word(r.late),
                 f"{r.penalty or 0:g}",
                 r.late_note or "", r.source or "", r.handins, r.isolation or "", r.rerun or "",
                 r.deadline or "", "" if r.adjustment is None else Number(r.adjustment), r.adjust_note or "",
                 {1: "yes", 0: "no"}.get(r.on_roster, ""), r.excused or "",
                 "" if r.slip_days is None else r.slip_days, r.slip_note or "")
                for r in self.grades(assignment)]
        path.write_text(csv_text(CSV_COLUMNS, rows), encoding="utf-8")


@dataclass(frozen=True)
class _Standing:
    """What apply_lateness reads once per assignment: the roster, adjustments, semester and each own deadline."""
    assignment: str
    rules: LateRules
    records: object          # roster.CourseRecords, or None: the course keeps none
    semester: object         # semester.py's one rule for slip days, excused and absent students
    roster: list
    on_roster: frozenset
    adjustments: dict
    own_deadline: object     # student -> (deadline, why it is not the course's), read once per student

    @classmethod
    def of(cls, assignment, rules, records, semester):
        roster = records.students() if records is not None else []
        adjustments = {}
        for adjustment in (records.adjustments(assignment) if records is not None else ()):
            adjustments.setdefault(adjustment.student, []).append(adjustment)
        own_deadline = functools.lru_cache(maxsize=None)(
            lambda student: records.deadline_for(assignment, student, rules.deadline) if records is not None
            else (rules.deadline, ""))
        return cls(assignment, rules, records, semester, roster, frozenset(s.key for s in roster), adjustments,
                   own_deadline)


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
    deadline: str | None = None   # the student's own deadline (an extension or accommodation included)
    adjustment: float | None = None   # points the standing adjustments changed (None: none)
    adjust_note: str | None = None    # their reasons
    on_roster: int | None = None  # 1 on the roster, 0 a hand-in that matches nobody on it, None: no roster
    repository: str | None = None     # the GitHub Classroom clone it came from, as intake read it
    excused: str | None = None    # why the student is excused from the assignment (None: not excused)
    slip_days: int | None = None  # slip days the counted hand-in spent (None: the course has none)
    slip_note: str | None = None  # how many, and what the student's pool holds after this assignment


NOT_GRADED = "not-graded"
NOT_GRADED_MESSAGE = ("handed in, not graded yet: the run that was grading it stopped before it got to it; "
                      "`grade` again finishes it")


def _not_graded(db, assignment, rows):
    """`rows` with every student whose hand-in waits in `pending` as `not-graded`: no score (grades.csv leaves it
    blank), whether or not an older grading of theirs exists, since the newest one is not known yet."""
    waiting = {}
    for student, name, source, submitted_at, max_score in db.execute(
            "SELECT student, name, source, submitted_at, max_score FROM pending WHERE assignment = ? "
            "ORDER BY student, source", (assignment,)):
        waiting.setdefault(student, (name, source, submitted_at, max_score))
    if not waiting:
        return rows
    kept = []
    for row in rows:
        if row.student in waiting:
            row = replace(row, score=0.0, status=NOT_GRADED, message=NOT_GRADED_MESSAGE, late=None, penalty=None,
                          late_note=None, adjustment=None)
            waiting.pop(row.student)
        kept.append(row)
    for student, (name, source, submitted_at, max_score) in waiting.items():
        kept.append(GradeRow(student, assignment, 0.0, max_score or 0.0, NOT_GRADED, NOT_GRADED_MESSAGE, name,
                             submitted_at, None, None, None, None, source, 1, None))
    return kept


def rubrics_of(db, assignment):
    """{grader key: [(student, name)]} of `assignment`'s counted hand-ins: more than one key means the class was
    scored under different cases, expected values or limits (a `grade --student` after cases.toml changed)."""
    found = {}
    for key, student, name in db.execute("SELECT grader_key, student, name FROM submissions WHERE assignment = ? "
                                         "AND counted = 1 ORDER BY student", (assignment,)):
        found.setdefault(key or "", []).append((student, name or student))
    return found


def _read_only(folder):
    """Another assignment's gradebook in `folder`, read-only (None when it has none, or it cannot be read)."""
    path = folder / "gradebook.db"
    if not path.is_file():
        return None
    try:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return None


def stale_of(db, assignment, rubric):
    """[(student, name)] of `assignment`'s counted hand-ins graded under a rubric that is no longer the
    assignment's (`rubric`: Assignment.rubric_key()): cases, points, expected values or limits changed since.
    A key an older version stored says nothing of its rubric: such a row is not called stale."""
    return [(student, name or student) for key, student, name in db.execute(
        "SELECT grader_key, student, name FROM submissions WHERE assignment = ? AND counted = 1 ORDER BY student",
        (assignment,)) if rubric_of(key) not in (None, rubric)]


def graded_apart(rubrics):
    """The students of every rubric but the one most of the class was graded with ([] when there is one)."""
    groups = sorted(rubrics.values(), key=len)
    return [(student, name) for group in groups[:-1] for student, name in group]


# What orders a student's hand-ins, most telling first (see Gradebook._recount).
ORDER_COLUMNS = "submitted_at, lms_order, file_time, given"
ORDER_WORDS = ("the LMS's hand-in times", "the LMS's order of uploads (Canvas's attachment ids)",
               "the files' times (a browser's later download)", None)


def order_keys(rows, zone=None):
    """A sort key for each of one student's hand-ins (`rows`: their ORDER_COLUMNS values), later is greater.

    A column orders them only when every one of them has it: two hand-in times are compared as instants (a
    time without a UTC offset read in `zone`, the deadline's), never as text; a hand-in with a time and one
    without are not ordered by it, nor by the LMS's order when only one has that.  The download given to
    `grade` later is the rule of last resort (which order_note says)."""
    times = _instants([r[0] for r in rows], zone)
    orders = [r[1] for r in rows] if all(type(r[1]) is int for r in rows) else None
    files = _instants([r[2] for r in rows], zone)
    return [(times[i] if times else 0.0, orders[i] if orders else 0, files[i] if files else 0.0, row[3] or "")
            for i, row in enumerate(rows)]


def _instants(texts, zone):
    """The times `texts` as numbers that order them, or None when one is missing, unreadable, or cannot be
    compared with the others (no offset, where others have one and no zone is known)."""
    moments = []
    for text in texts:
        try:
            moments.append(datetime.fromisoformat(text))
        except (TypeError, ValueError):
            return None
    naive = [m.tzinfo is None for m in moments]
    if all(naive):
        return [m.replace(tzinfo=timezone.utc).timestamp() for m in moments]   # one clock: read alike
    if any(naive) and zone is None:
        return None
    return [(m.replace(tzinfo=zone) if m.tzinfo is None else m).timestamp() for m in moments]


def order_note(counted, others, zone=None):
    """What made `counted` (a row's ORDER_COLUMNS values) count over the student's `others` from other
    submissions, in words for its row; "" when their times did, as one expects."""
    deciding = set()
    keys = order_keys([counted, *others], zone)
    for theirs in keys[1:]:
        mine = keys[0]
        if mine == theirs:
            continue          # one submission's notebooks: the best counts, which intake's note says
        deciding.add(next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b))
    if 3 in deciding:
        return ("order unknown: no LMS time or order tells which of this student's hand-ins came last, so the one "
                "whose download was given to `grade` later counts (never the better one); if that is wrong, "
                "`autograder adjust --score` sets the score, with the reason")
    if 1 in deciding:
        return f"the later upload counts, by {ORDER_WORDS[1]}"
    return ""


def late_word(late):
    return {1: "yes", 0: "no"}.get(late, "")


def _adjust_note(adjustments):
    return "; ".join(a.describe() for a in adjustments if a.active) or None


def _flag(value):
    return None if value is None else int(bool(value))


# The statuses of roster students with no hand-in (not hand-ins: no lateness, no feedback page).
UNRESOLVED = "unresolved"
EXCUSED = "excused"
ABSENT = ("missing", "not-yet", UNRESOLVED, EXCUSED)
ABSENT_MESSAGES = {
    "missing": "nothing handed in, and the deadline has passed",
    "not-yet": "nothing handed in yet; the deadline has not passed",
    EXCUSED: "excused: not due from them, and in no mean or total",
    UNRESOLVED: "nothing handed in under their name, but a hand-in the roster cannot place may be theirs: no grade "
                "until each is placed (`autograder roster place --assignment {assignment}` lists them)"}
# Rows whose score is not known, or not due: blank in grades.csv and in every LMS file, never a number.
# (`superseded` counts only where nothing tells whose each submission is: D2L's under one name, no class list.)
NO_SCORE = ("not-yet", UNRESOLVED, "not-graded", EXCUSED, "superseded")


def set_aside(records, assignment):
    """The keys of hand-ins the teaching team placed on nobody on the roster (`roster place --nobody`)."""
    if records is None:
        return set()
    return {key for key, students in records.placements(assignment).items() if not students}

# Statuses of hand-ins that had nothing to grade; a gradable hand-in beats them even if older.  (`superseded`:
# an older submission not run, since a later one counts: grade/resubmissions.py.)
UNGRADABLE = {"invalid-notebook", "empty", "unreadable", "wrong-file-type", "unsafe-path", "too-large",
              "invalid-zip", "no-notebook", "wrong-assignment", "wrong-language", "superseded"}
