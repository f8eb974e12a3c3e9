"""The course's own records of its students: grades/course.db (SQLite, git-ignored with every grade).

It holds what no single assignment's gradebook knows:
  students        the roster, as the LMS exported it (names, ids, emails, sections, the Test Student flag);
                  a student missing from a newer import is kept, marked as having left the roster
  aliases         other keys the LMS's downloads use for a student (Moodle's per-assignment participant ids)
  groups,         course-wide accommodations: a rule (extra time) and who it applies to
  accommodations
  extensions      one student's later deadline for one assignment, with who granted it, when and why
  adjustments     points added or a score set by hand, with who, when, why and the score before; never
                  deleted: a withdrawn one keeps its row, with who withdrew it and when
  gradings        where older versions last graded each assignment: read only to point a course that
                  graded elsewhere to its folder (an assignment's gradebook is where the course says,
                  core.course.Course.grades_dir, never where a `grade --out` last wrote)
  placements      whose a hand-in is when the roster could not tell (an anonymous or team hand-in, a file
                  named by whoever saved it): the teaching team's decision, with who made it, when and why
  excuses         one student excused from one assignment, with who, when and why; never deleted
  slip_days       slip days the teaching team chose to spend on an assignment, or granted to a student's
                  pool (core/slip_days.py), with who, when and why; never deleted

Nothing here is ever computed into a score: each assignment's gradebook applies
extensions and adjustments on top of the score it computed, every time it is
refreshed (gradebook/store.py), so a regrade, new cases or a changed late
policy leave them standing.  Its tables, what each identity column holds for each LMS,
and how records of an earlier version are upgraded: schema.py.
"""

import difflib
import getpass
import math
import sqlite3
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ..core import database
from ..core.errors import AutograderError
from ..core.numbers import MAX_EXTRA_SECONDS, MAX_POINTS
from ..core.sharing import check_access, new_database
from . import schema

FILE_NAME = "course.db"


class RecordsError(AutograderError):
    """The course's records cannot be read or changed as asked."""


def now():
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def user():
    """Who ran the command, for the audit trail."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):       # a uid with no passwd entry (a container)
        return "unknown"


@dataclass(frozen=True)
class Student:
    key: str
    name: str
    sortable_name: str = ""
    lms: str = ""
    lms_id: str = ""
    sis_id: str = ""
    login: str = ""
    email: str = ""
    section: str = ""
    test_student: bool = False
    on_roster: bool = True
    joined_at: str = ""          # when an import added them to a roster that had students ("": from the start)

    @property
    def who(self):
        """For people: `Jane Doe (canvas:1002)`."""
        return f"{self.name} ({self.key})" if self.name and self.name != self.key else self.key


@dataclass(frozen=True)
class Extension:
    id: int
    assignment: str
    student: str
    until: str
    reason: str
    granted_by: str
    granted_at: str
    withdrawn_by: str | None = None
    withdrawn_at: str | None = None


@dataclass(frozen=True)
class Accommodation:
    name: str
    extra_seconds: float
    reason: str
    members: tuple

    def describe(self, private=True):
        """For the teaching team who grants it; `private=False` leaves out the reason (a letter from disability
        services), which is kept in course.db for the instructor and shown in no grades file or report."""
        if self.problem:
            return f"accommodation {self.name!r}: unusable ({self.problem})"
        return f"accommodation {self.name!r}: {duration_words(self.extra_seconds)} extra" + (
            f" ({self.reason})" if self.reason and private else "")

    @property
    def problem(self):
        """Why the stored extra time cannot be used (not a number, infinite, past MAX_EXTRA), or ""."""
        return _time_problem(self.extra_seconds)


@dataclass(frozen=True)
class Excuse:
    """One student excused from one assignment: in no mean or total, blank (Canvas: EX) in every LMS file."""
    id: int
    assignment: str
    student: str
    reason: str
    made_by: str
    made_at: str
    withdrawn_by: str | None = None
    withdrawn_at: str | None = None
    withdraw_reason: str | None = None

    @property
    def active(self):
        return self.withdrawn_at is None


@dataclass(frozen=True)
class SlipDecision:
    """Slip days the teaching team chose to spend on an assignment (`assignment` set), or granted to the
    student's pool (`assignment` None)."""
    id: int
    assignment: str | None
    student: str
    days: int
    reason: str
    made_by: str
    made_at: str
    withdrawn_by: str | None = None
    withdrawn_at: str | None = None
    withdraw_reason: str | None = None

    @property
    def active(self):
        return self.withdrawn_at is None

    def describe(self):
        what = (f"{self.days} slip day(s) spent on {self.assignment}" if self.assignment is not None
                else f"{self.days:+d} slip day(s) granted")
        return f"{what}: {self.reason}"


@dataclass(frozen=True)
class Adjustment:
    id: int
    assignment: str
    student: str
    points: float | None
    score: float | None
    reason: str
    made_by: str
    made_at: str
    score_before: float | None
    withdrawn_by: str | None = None
    withdrawn_at: str | None = None
    withdraw_reason: str | None = None

    @property
    def active(self):
        return self.withdrawn_at is None

    @property
    def problem(self):
        """Why this stored row cannot be applied ("" when it can): a hand-edited or older course.db may hold a
        NULL (SQLite's NaN), an infinity or both numbers."""
        values = [v for v in (self.points, self.score) if v is not None]
        if len(values) != 1:
            return "it holds no number" if not values else "it holds both points and a score"
        if not isinstance(values[0], (int, float)) or not math.isfinite(values[0]):
            return f"{values[0]!r} is not a finite number"
        if abs(values[0]) > MAX_POINTS:
            return f"{values[0]:g} is beyond {MAX_POINTS:g} points"
        return ""

    def describe(self):
        if self.problem:
            return f"unusable ({self.problem}): {self.reason}"
        change = f"{self.points:+g} point(s)" if self.points is not None else f"score set to {self.score:g}"
        return f"{change}: {self.reason}"


# The most a number stored here may be (core/numbers.py): refused before it is stored, and again when read.


def _time_problem(seconds):
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not math.isfinite(seconds):
        return f"{seconds!r} is not a finite number of seconds"
    if not 0 <= seconds <= MAX_EXTRA_SECONDS:
        return f"{seconds:g} s is not between 0 and {MAX_EXTRA_SECONDS / 86400:g} days"
    return ""


def duration_words(seconds):
    days, rest = divmod(round(seconds), 86400)
    hours = rest / 3600
    parts = ([f"{days} day{'s' if days != 1 else ''}"] if days else []) + ([f"{hours:g} h"] if hours else [])
    return " ".join(parts) or "no time"


_errors = database.one_line_errors(RecordsError, where=lambda records, *_: records.path)


def records_path(course):
    return course.grades_root / FILE_NAME


class CourseRecords:
    """grades/course.db, opened (and created when `create`)."""

    def __init__(self, path, create=True):
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise RecordsError(f"no course records at {self.path}: import a roster first "
                               "(`autograder roster import FILE`)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            check_access(self.path)
            new_database(self.path)
            self.db = sqlite3.connect(self.path)
            self.db.execute("PRAGMA foreign_keys = ON")
            self.db.execute("PRAGMA busy_timeout = 10000")
            # Records of any earlier version are brought to this one (schema.py says what each step adds).
            database.upgrade(self.db, schema.STEPS, self.path, RecordsError)
        except sqlite3.DatabaseError as error:
            raise RecordsError(f"{self.path}: not usable course records ({error}); restore it from a backup") \
                from None

    @classmethod
    def of(cls, course, create=True):
        return cls(records_path(course), create=create)

    @classmethod
    def if_any(cls, course):
        """The course's records, or None when it keeps none (no roster, extension or adjustment yet)."""
        path = records_path(course)
        return cls(path) if path.is_file() else None

    def close(self):
        self.db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- the roster -----------------------------------------------------------------------------

    @_errors
    def import_roster(self, roster_file, source):
        """Add or update every entry; students the file no longer lists stay, marked off the roster.

        A file that lists no student (a header alone, an unclosed quote that swallowed every row) changes
        nothing: RecordsError says so, and no one is marked as having left.
        A value the file leaves empty keeps the one stored: Moodle's grading worksheet has no ID number, and
        importing it after the participants list must not wipe the ID numbers moodle_import.csv maps by.
        Returns (added, updated, left, duplicates): keys, for people."""
        if not any(not entry.test_student for entry in roster_file.entries):
            raise RecordsError(f"{source} lists no student ({roster_file.kind}"
                               + (f"; {len(roster_file.skipped)} row(s) skipped" if roster_file.skipped else "")
                               + "): nothing changed. Is it the right file, downloaded whole?")
        existing = {s.key: s for s in self.students(include_off_roster=True)}
        seen, duplicates = set(), []
        added, updated = [], []
        stamp = now()
        # A student this import adds to a roster that already has students joined the course now: what was due
        # before is excused for them, unless the course says otherwise (course.toml's late_joiners).
        joining = stamp if any(not s.test_student for s in existing.values()) else None
        with self.db:
            for entry in roster_file.entries:
                if entry.key in seen:
                    duplicates.append(entry.key)
                    continue
                seen.add(entry.key)
                values = (entry.name, entry.sortable_name, entry.lms, entry.lms_id, entry.sis_id, entry.login,
                          entry.email, entry.section, int(entry.test_student), source, stamp)
                if entry.key in existing:
                    self.db.execute("UPDATE students SET name=?, sortable_name=COALESCE(NULLIF(?, ''), sortable_name), "
                                    "lms=COALESCE(NULLIF(?, ''), lms), lms_id=COALESCE(NULLIF(?, ''), lms_id), "
                                    "sis_id=COALESCE(NULLIF(?, ''), sis_id), login=COALESCE(NULLIF(?, ''), login), "
                                    "email=COALESCE(NULLIF(?, ''), email), section=COALESCE(NULLIF(?, ''), section), "
                                    "test_student=?, source=?, imported_at=?, on_roster=1 WHERE key=?",
                                    (*values, entry.key))
                    updated.append(entry.key)
                else:
                    self.db.execute("INSERT INTO students (name, sortable_name, lms, lms_id, sis_id, login, email, "
                                    "section, test_student, source, imported_at, key, joined_at) "
                                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (*values, entry.key, joining))
                    added.append(entry.key)
                for alias in entry.aliases:
                    self.db.execute("INSERT OR REPLACE INTO aliases VALUES (?, ?)", (alias, entry.key))
            left = []
            # A worksheet lists one assignment's participants: it adds aliases, it does not drop anyone.
            if roster_file.kind != "Moodle grading worksheet":
                left = [key for key, s in existing.items() if s.on_roster and key not in seen]
                self.db.executemany("UPDATE students SET on_roster = 0 WHERE key = ?", [(k,) for k in left])
            for header in roster_file.lms_columns:
                self.db.execute("INSERT OR REPLACE INTO lms_columns (header, seen_in, points) VALUES (?, ?, ?)",
                                (header, source, getattr(roster_file, "points_possible", {}).get(header)))
        return added, updated, left, duplicates

    @_errors
    def students(self, include_off_roster=False):
        rows = self.db.execute(
            "SELECT key, name, sortable_name, lms, lms_id, sis_id, login, email, section, test_student, on_roster, "
            "joined_at FROM students" + ("" if include_off_roster else " WHERE on_roster = 1")
            + " ORDER BY test_student, COALESCE(NULLIF(sortable_name, ''), name), key").fetchall()
        return [Student(r[0], r[1], r[2] or "", r[3] or "", r[4] or "", r[5] or "", r[6] or "", r[7] or "",
                        r[8] or "", bool(r[9]), bool(r[10]), r[11] or "") for r in rows]

    @_errors
    def aliases(self):
        return dict(self.db.execute("SELECT alias, student FROM aliases"))

    @_errors
    def lms_columns(self):
        return [r[0] for r in self.db.execute("SELECT header FROM lms_columns ORDER BY rowid")]

    @_errors
    def lms_points(self):
        """{Canvas column: points possible} as the last export said (columns it gave no number are absent)."""
        return {r[0]: r[1] for r in self.db.execute("SELECT header, points FROM lms_columns WHERE points IS NOT NULL")}

    def has_roster(self):
        return bool(self.students())

    def find(self, who):
        """The one student `who` names: a key, an LMS id, SIS id, login, email or name (accents, case and spacing
        aside: "erin nunez" is Erin Núñez); else RecordsError, with the nearest names as suggestions."""
        text = str(who).strip()
        everyone = self.students(include_off_roster=True)
        folded = folded_name(text)
        for test in (lambda s: s.key == text,
                     lambda s: text in (s.lms_id, s.sis_id) and text != "",
                     lambda s: folded in (folded_name(s.login), folded_name(s.email)) and folded != "",
                     lambda s: folded in (folded_name(s.name), folded_name(s.sortable_name)) and folded != ""):
            found = [s for s in everyone if test(s)]
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise RecordsError(f"{text!r} names {len(found)} students ({', '.join(s.who for s in found[:6])}): "
                                   "name one by key, id or email")
        alias = self.aliases().get(text)
        if alias:
            return self.find(alias)
        close = _near(folded, everyone)
        raise RecordsError(f"no student {text!r} on the roster" + (f"; did you mean {', '.join(close)}?" if close
                                                                   else " (`autograder roster` lists it)"))

    def who(self, key):
        """A student key for people: `Erin Núñez (canvas:2003)`, or the key alone when the roster has no name."""
        if not hasattr(self, "_names"):
            self._names = {s.key: s.who for s in self.students(include_off_roster=True)}
        return self._names.get(key, key)

    # --- where older versions graded each assignment ---------------------------------------------

    @_errors
    def legacy_grading_dirs(self):
        """{assignment: folder} an older version recorded as the last `grade --out`: never read for grades,
        only to tell a course whose grades are elsewhere where the course's folder is."""
        return {r[0]: Path(r[1]) for r in self.db.execute("SELECT assignment, out_dir FROM gradings")}

    # --- hand-ins the roster could not place ------------------------------------------------------

    @_errors
    def place(self, assignment, handin, students, reason="", by=None):
        """Record whose the hand-in keyed `handin` is in `assignment`: the roster students `students` (keys; a
        team's members), or, when empty, nobody on the roster.  It replaces an earlier decision on it."""
        with self.db:
            self.db.execute("DELETE FROM placements WHERE assignment = ? AND handin = ?", (assignment, handin))
            self.db.executemany("INSERT INTO placements VALUES (?, ?, ?, ?, ?, ?)",
                                [(assignment, handin, student, reason or "", by or user(), now())
                                 for student in (list(dict.fromkeys(students)) or [None])])

    @_errors
    def placements(self, assignment):
        """{hand-in key: [student keys]} the teaching team placed in `assignment` ([]: nobody on the roster)."""
        found = {}
        for handin, student in self.db.execute("SELECT handin, student FROM placements WHERE assignment = ? "
                                               "ORDER BY rowid", (assignment,)):
            found.setdefault(handin, [])
            if student is not None:
                found[handin].append(student)
        return found

    @_errors
    def placement_rows(self, assignment=None):
        """[(assignment, hand-in key, student key or None, reason, by, at)], for lists and the history."""
        query = "SELECT assignment, handin, student, reason, placed_by, placed_at FROM placements"
        params = ()
        if assignment is not None:
            query, params = query + " WHERE assignment = ?", (assignment,)
        return self.db.execute(query + " ORDER BY assignment, handin, rowid", params).fetchall()

    # --- extensions and accommodations -----------------------------------------------------------

    @_errors
    def extend(self, assignment, student, until, reason, by=None):
        """A later deadline for one student; an earlier extension of the same assignment is withdrawn."""
        with self.db:
            self.db.execute("UPDATE extensions SET withdrawn_by = ?, withdrawn_at = ? WHERE assignment = ? AND "
                            "student = ? AND withdrawn_at IS NULL", (by or user(), now(), assignment, student))
            cursor = self.db.execute(
                "INSERT INTO extensions (assignment, student, until, reason, granted_by, granted_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (assignment, student, until, reason or "", by or user(), now()))
        return cursor.lastrowid

    @_errors
    def withdraw_extension(self, extension_id, by=None):
        with self.db:
            cursor = self.db.execute("UPDATE extensions SET withdrawn_by = ?, withdrawn_at = ? WHERE id = ? AND "
                                     "withdrawn_at IS NULL", (by or user(), now(), extension_id))
        if not cursor.rowcount:
            raise RecordsError(f"no standing extension #{extension_id} (`autograder extend --list` lists them)")
        return self.extensions(all_of_them=True, ids=[extension_id])[0]

    @_errors
    def extensions(self, assignment=None, all_of_them=False, ids=None):
        query = ("SELECT id, assignment, student, until, reason, granted_by, granted_at, withdrawn_by, withdrawn_at "
                 "FROM extensions WHERE 1=1")
        params = []
        if assignment is not None:
            query += " AND assignment = ?"
            params.append(assignment)
        if not all_of_them:
            query += " AND withdrawn_at IS NULL"
        if ids:
            query += f" AND id IN ({', '.join('?' * len(ids))})"
            params += ids
        return [Extension(*r) for r in self.db.execute(query + " ORDER BY id", params)]

    @_errors
    def accommodate(self, name, extra_seconds, reason, members, by=None):
        if _time_problem(extra_seconds):
            raise RecordsError(f"accommodation {name!r} refused: {_time_problem(extra_seconds)}")
        with self.db:
            self.db.execute("INSERT INTO accommodations VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                            "extra_seconds = excluded.extra_seconds, reason = COALESCE(NULLIF(excluded.reason, ''), "
                            "reason)", (name, extra_seconds, reason or "", by or user(), now()))
            self.db.executemany("INSERT OR IGNORE INTO group_members VALUES (?, ?)", [(name, m) for m in members])

    @_errors
    def remove_from_group(self, name, members):
        with self.db:
            self.db.executemany("DELETE FROM group_members WHERE name = ? AND student = ?", [(name, m) for m in members])

    @_errors
    def accommodations(self):
        found = []
        for name, extra, reason in self.db.execute("SELECT name, extra_seconds, reason FROM accommodations "
                                                   "ORDER BY name").fetchall():
            members = tuple(r[0] for r in self.db.execute("SELECT student FROM group_members WHERE name = ? "
                                                          "ORDER BY student", (name,)))
            found.append(Accommodation(name, extra, reason or "", members))
        return found

    def deadline_for(self, assignment, student, deadline):
        """(the student's own deadline, why it differs from `deadline`) — ("", "") reasons when it does not.

        An accommodation adds its extra time to the course deadline (the largest, when a student is in
        several groups); an extension is a time of its own, and the later of the two counts."""
        own, why = deadline, ""
        if deadline is not None:
            rules = [a for a in self.accommodations() if student in a.members]
            for rule in rules:
                if rule.problem:
                    raise RecordsError(f"{self.path}: {rule.describe()}, so {self.who(student)}'s deadline is "
                                       f"unknown: set it again (`autograder accommodate --group {rule.name} "
                                       "--extra-days N`)")
            if rules:
                rule = max(rules, key=lambda a: a.extra_seconds)
                # The reason stays private: this text reaches grades.csv and the class report.
                own, why = deadline + timedelta(seconds=rule.extra_seconds), rule.describe(private=False)
        for extension in self.extensions(assignment):
            if extension.student != student:
                continue
            until = datetime.fromisoformat(extension.until)
            if deadline is not None and deadline.tzinfo is not None:
                until = until.astimezone(deadline.tzinfo)   # the course's clock, for times read without an offset
            if own is None or until > own:
                own = until
                why = (f"extension to {until.isoformat()}" + (f" ({extension.reason})" if extension.reason else "")
                       + f", granted by {extension.granted_by}")
        return own, why

    # --- excuses ---------------------------------------------------------------------------------

    @_errors
    def excuse(self, assignment, student, reason, by=None):
        """Excuse `student` from `assignment`; an earlier standing excuse of the same is withdrawn (replaced)."""
        if not str(reason or "").strip():
            raise RecordsError("an excuse needs --reason: it is kept in the history (a dean's note, joined late)")
        with self.db:
            self.db.execute("UPDATE excuses SET withdrawn_by = ?, withdrawn_at = ?, withdraw_reason = ? WHERE "
                            "assignment = ? AND student = ? AND withdrawn_at IS NULL",
                            (by or user(), now(), "replaced by a new excuse", assignment, student))
            cursor = self.db.execute("INSERT INTO excuses (assignment, student, reason, made_by, made_at) "
                                     "VALUES (?, ?, ?, ?, ?)", (assignment, student, reason.strip(), by or user(),
                                                                now()))
        return self.excuses(all_of_them=True, ids=[cursor.lastrowid])[0]

    @_errors
    def withdraw_excuse(self, excuse_id, reason, by=None):
        with self.db:
            cursor = self.db.execute("UPDATE excuses SET withdrawn_by = ?, withdrawn_at = ?, withdraw_reason = ? "
                                     "WHERE id = ? AND withdrawn_at IS NULL", (by or user(), now(), reason or "",
                                                                               excuse_id))
        if not cursor.rowcount:
            raise RecordsError(f"no standing excuse #{excuse_id} (`autograder excuse --list` lists them)")
        return self.excuses(all_of_them=True, ids=[excuse_id])[0]

    @_errors
    def excuses(self, assignment=None, all_of_them=False, ids=None):
        query = ("SELECT id, assignment, student, reason, made_by, made_at, withdrawn_by, withdrawn_at, "
                 "withdraw_reason FROM excuses WHERE 1=1")
        params = []
        if assignment is not None:
            query, params = query + " AND assignment = ?", params + [assignment]
        if not all_of_them:
            query += " AND withdrawn_at IS NULL"
        if ids:
            query += f" AND id IN ({', '.join('?' * len(ids))})"
            params += ids
        return [Excuse(*r) for r in self.db.execute(query + " ORDER BY id", params)]

    # --- slip days -------------------------------------------------------------------------------

    @_errors
    def choose_slip_days(self, assignment, student, days, reason, by=None):
        """The teaching team spends `days` of the student's pool on `assignment` (0: none): it replaces the choice
        before it for the same, never adds to it (pressed twice, it is one choice)."""
        return self._slip(assignment, student, days, reason, by)

    @_errors
    def grant_slip_days(self, student, days, reason, by=None):
        """`days` more in the student's pool (a negative number takes some back)."""
        return self._slip(None, student, days, reason, by)

    def _slip(self, assignment, student, days, reason, by):
        if not str(reason or "").strip():
            raise RecordsError("a slip-day decision needs --reason: it is kept in the history")
        if isinstance(days, bool) or not isinstance(days, int):
            raise RecordsError(f"slip days are whole days, not {days!r}")
        with self.db:
            if assignment is not None:
                self.db.execute("UPDATE slip_days SET withdrawn_by = ?, withdrawn_at = ?, withdraw_reason = ? "
                                "WHERE assignment = ? AND student = ? AND withdrawn_at IS NULL",
                                (by or user(), now(), "replaced by a new choice", assignment, student))
            cursor = self.db.execute("INSERT INTO slip_days (assignment, student, days, reason, made_by, made_at) "
                                     "VALUES (?, ?, ?, ?, ?, ?)", (assignment, student, days, reason.strip(),
                                                                   by or user(), now()))
        return self.slip_decisions(all_of_them=True, ids=[cursor.lastrowid])[0]

    @_errors
    def withdraw_slip_days(self, decision_id, reason, by=None):
        with self.db:
            cursor = self.db.execute("UPDATE slip_days SET withdrawn_by = ?, withdrawn_at = ?, withdraw_reason = ? "
                                     "WHERE id = ? AND withdrawn_at IS NULL", (by or user(), now(), reason or "",
                                                                               decision_id))
        if not cursor.rowcount:
            raise RecordsError(f"no standing slip-day decision #{decision_id} (`autograder slip --list` lists them)")
        return self.slip_decisions(all_of_them=True, ids=[decision_id])[0]

    @_errors
    def slip_decisions(self, student=None, all_of_them=False, ids=None):
        query = ("SELECT id, assignment, student, days, reason, made_by, made_at, withdrawn_by, withdrawn_at, "
                 "withdraw_reason FROM slip_days WHERE 1=1")
        params = []
        if student is not None:
            query, params = query + " AND student = ?", params + [student]
        if not all_of_them:
            query += " AND withdrawn_at IS NULL"
        if ids:
            query += f" AND id IN ({', '.join('?' * len(ids))})"
            params += ids
        return [SlipDecision(*r) for r in self.db.execute(query + " ORDER BY id", params)]

    def slip_choices(self):
        """({student: {assignment: days chosen}}, {student: days granted}) of the standing decisions."""
        chosen, granted = {}, {}
        for decision in self.slip_decisions():
            if decision.assignment is None:
                granted[decision.student] = granted.get(decision.student, 0) + decision.days
            else:
                chosen.setdefault(decision.student, {})[decision.assignment] = decision.days
        return chosen, granted

    # --- adjustments -----------------------------------------------------------------------------

    @_errors
    def adjust(self, assignment, student, reason, points=None, score=None, score_before=None, by=None):
        if (points is None) == (score is None):
            raise RecordsError("an adjustment is either --points or --score, not both nor neither")
        problem = Adjustment(0, assignment, student, points, score, "", "", "", None).problem
        if problem:       # the CLI's types refuse it first; nothing else may store one either
            raise RecordsError(f"adjustment refused: {problem}")
        if not str(reason or "").strip():
            raise RecordsError("an adjustment needs --reason: it is shown to the student and kept in the history")
        with self.db:
            cursor = self.db.execute(
                "INSERT INTO adjustments (assignment, student, points, score, reason, made_by, made_at, score_before) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (assignment, student, points, score, reason.strip(), by or user(),
                                                    now(), score_before))
        return self.adjustments(ids=[cursor.lastrowid], all_of_them=True)[0]

    @_errors
    def withdraw_adjustment(self, adjustment_id, reason, by=None):
        with self.db:
            cursor = self.db.execute("UPDATE adjustments SET withdrawn_by = ?, withdrawn_at = ?, withdraw_reason = ? "
                                     "WHERE id = ? AND withdrawn_at IS NULL",
                                     (by or user(), now(), reason or "", adjustment_id))
        if not cursor.rowcount:
            raise RecordsError(f"no standing adjustment #{adjustment_id} (`autograder adjust --list` lists them)")
        return self.adjustments(ids=[adjustment_id], all_of_them=True)[0]

    @_errors
    def adjustments(self, assignment=None, student=None, all_of_them=False, ids=None):
        query = ("SELECT id, assignment, student, points, score, reason, made_by, made_at, score_before, "
                 "withdrawn_by, withdrawn_at, withdraw_reason FROM adjustments WHERE 1=1")
        params = []
        for column, value in (("assignment", assignment), ("student", student)):
            if value is not None:
                query += f" AND {column} = ?"
                params.append(value)
        if not all_of_them:
            query += " AND withdrawn_at IS NULL"
        if ids:
            query += f" AND id IN ({', '.join('?' * len(ids))})"
            params += ids
        return [Adjustment(*r) for r in self.db.execute(query + " ORDER BY id", params)]


def folded_name(text):
    """A name or login as a person types it: accents dropped (NFKD without combining marks), case folded,
    white space collapsed."""
    decomposed = unicodedata.normalize("NFKD", str(text or ""))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.casefold().split())


def _near(folded, everyone, limit=6):
    """Students whose name is like `folded` (a part of it, or a close spelling), for a suggestion."""
    if not folded:
        return []
    names = {}
    for student in everyone:
        for name in (student.name, student.sortable_name, student.login):
            if name:
                names.setdefault(folded_name(name), []).append(student)
    close = [n for n in names if folded in n] + difflib.get_close_matches(folded, list(names), n=limit, cutoff=0.6)
    found = []
    for name in close:
        for student in names[name]:
            if student.who not in found:
                found.append(student.who)
    return found[:limit]


def unusable(records, assignment=None):
    """What the course's records hold that cannot be applied (a NULL, an infinity), one line each, naming the
    row and how to fix it; [] when everything can.  `gradebook` and `release` refuse while there is any, as
    the grades they would write are not known."""
    lines = [f"adjustment #{a.id} ({records.who(a.student)}, {a.assignment}) cannot be applied: {a.problem}; "
             f"withdraw it (`autograder adjust --withdraw {a.id} --reason ...`) and give it again"
             for a in records.adjustments(assignment) if a.problem]
    lines += [f"accommodation {a.name!r} cannot be applied: {a.problem}, so the deadline of "
              f"{', '.join(records.who(m) for m in a.members) or 'its members'} is unknown: set it again "
              f"(`autograder accommodate --group {a.name} --extra-days N`)"
              for a in records.accommodations() if a.problem]
    return lines


def apply_adjustments(score, adjustments):
    """The score after the standing adjustments, in the order they were made (a set score, then points)."""
    for adjustment in adjustments:
        if not adjustment.active:
            continue
        if adjustment.problem:
            raise RecordsError(f"adjustment #{adjustment.id} ({adjustment.student}, {adjustment.assignment}) "
                               f"cannot be applied: {adjustment.problem}; withdraw it (`autograder adjust "
                               f"--withdraw {adjustment.id} --reason ...`) and give it again")
        score = adjustment.score if adjustment.score is not None else score + adjustment.points
    return max(0.0, round(score, 4))
