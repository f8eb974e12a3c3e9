"""The gradebook's tables, and how a gradebook of any earlier version becomes one of this version.

Versions (recorded in `PRAGMA user_version`; core/database.py runs the steps):
  0  none recorded: every gradebook written before versions were (the last release, f5257e5, and main
     until versions came); what each held depends on its age, so its step adds what is missing
  1  the tables and columns below, as they stood when versions began
  2  each hand-in keeps who the LMS said it is (lms, lms_id), what the LMS pairs feedback files by
     (lms_prefix) and the Classroom clone it came from (repository): releases read identity from here,
     never again from a hand-in's printable source or its key
  3  a hand-in the roster cannot place says why (unplaced, graded or pending): while one does, nobody without
     a hand-in is `missing`; and what orders two hand-ins of one student the LMS gave no time (lms_order, the
     LMS's own; given, when its download was given to `grade`)
  4  what `release --to canvas` sent to Canvas, student by student (lms_sent): a re-run sends only what
     changed, and resumes where a stopped one left off (gradebook/lms_sent.py)
  5  slip days spent on each hand-in and what they left (slip_days, slip_note); an excused student's hand-in says
     why (excused); a roster student's row with no hand-in says why it is what it is (absent.note: `excused`)
  6  a send to an LMS may be an excuse, not a grade (lms_sent.excused): `release --to canvas` sends Canvas's
     Excused for a student excused here, and a re-run knows it was sent

When you change a table: add a step at the end of STEPS (never edit one that shipped), and before it
ships, add the previous version's databases to tests/gradebook/schemas/ (make_semester.py there).
"""

from pathlib import PurePosixPath

from ..core import database
from ..intake import identity
from . import code

SCHEMA_V1 = """
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
-- A notebook cell that raised an error or was stopped while the hand-in ran.
CREATE TABLE IF NOT EXISTS cell_errors (
    submission_id INTEGER REFERENCES submissions(id) ON DELETE CASCADE, position INTEGER,
    cell INTEGER,   -- 1-based number among the notebook's code cells
    source TEXT,    -- its first lines
    error TEXT,
    PRIMARY KEY (submission_id, position));
CREATE INDEX IF NOT EXISTS submissions_by_student ON submissions (assignment, student);
-- Roster students with no hand-in: `missing` once their own deadline has passed, else `not-yet`; `unresolved`
-- when it has passed but a hand-in the roster cannot place may be theirs (rewritten at every refresh from
-- the course's records, roster/store.py).
CREATE TABLE IF NOT EXISTS absent (
    assignment TEXT NOT NULL, student TEXT NOT NULL, name TEXT, status TEXT NOT NULL, score REAL,
    max_score REAL, deadline TEXT, deadline_note TEXT, adjustment REAL, adjust_note TEXT,
    PRIMARY KEY (assignment, student));
-- The late rules the last run applied (course.toml's, or its flags), so a refresh after
-- `extend` or `adjust` applies the same ones.
CREATE TABLE IF NOT EXISTS late_rules (
    assignment TEXT PRIMARY KEY, deadline TEXT, policy TEXT, penalty REAL, cap REAL);
-- Hand-ins a run set out to grade and has not graded yet: written before grading starts, each row removed
-- as its hand-in is recorded.  A run stopped half way (Ctrl-C, a crash) leaves the rest here, so those
-- students are `not-graded` (handed in, no grade yet), never `missing`, until a run grades them.
CREATE TABLE IF NOT EXISTS pending (
    assignment TEXT NOT NULL, student TEXT NOT NULL, name TEXT, source TEXT NOT NULL, sha256 TEXT NOT NULL,
    submitted_at TEXT, max_score REAL, run_id INTEGER,
    PRIMARY KEY (assignment, student, source, sha256));
-- Every grading of every hand-in, kept when a regrade replaces the submission's row: the history of what
-- was handed in (with the LMS's time) and of each regrade.
CREATE TABLE IF NOT EXISTS grading_log (
    assignment TEXT NOT NULL, student TEXT NOT NULL, source TEXT, sha256 TEXT, submitted_at TEXT,
    time_source TEXT, graded_at TEXT, run_id INTEGER, score REAL, max_score REAL, status TEXT);
""" + code.SCHEMA

# Added to `submissions` after its first version, before versions were recorded: a gradebook of version 0
# has some of them, by its age.  key_version: NULL for rows written before students were keyed by LMS ids.
ADDED_BEFORE_V1 = (
    ("name", "TEXT"), ("email", "TEXT"), ("late_mark", "INTEGER"), ("time_source", "TEXT"),
    ("raw_score", "REAL"), ("late", "INTEGER"), ("late_seconds", "REAL"), ("penalty", "REAL"),
    ("late_note", "TEXT"), ("key_version", "INTEGER"),
    # A file's modification time: orders two downloads of one hand-in; never judges lateness.
    ("file_time", "TEXT"),
    # Why the hand-in ran a second time with the generous cell limit ("" when it did not).
    ("rerun", "TEXT"),
    # From the course's records (roster/store.py), applied on top of the computed score:
    # late_score is the score after the late policy, score the one after the adjustments.
    ("late_score", "REAL"), ("adjustment", "REAL"), ("adjust_note", "TEXT"),
    ("deadline", "TEXT"), ("deadline_note", "TEXT"),
    ("on_roster", "INTEGER"))   # NULL: no roster; 0: a hand-in that matches nobody on it

# Version 2: who the LMS said handed it in, kept on the row (intake/identity.py made it).
IDENTITY_COLUMNS = (
    ("lms", "TEXT"),          # canvas, moodle, gradescope, blackboard, d2l, drive, teams, classroom, file, ...
    ("lms_id", "TEXT"),       # the LMS's own id of the student (Canvas user id, Moodle participant, SID, ...)
    ("lms_prefix", "TEXT"),   # what the LMS pairs feedback by: Canvas's `name_userid_fileid_`, Moodle's
                              # `Full Name_id_assignsubmission_file_` (a file's) or that name and `/` (a folder)
    ("repository", "TEXT"))   # a GitHub Classroom clone's folder name


# Version 3: placing a hand-in, and ordering two with no time.
PLACING_COLUMNS = (
    # Why a hand-in may be a roster student's it is not placed on (roster/match.py): while one is, nobody
    # without a hand-in is `missing`.  NULL or "": placed, or surely nobody's on the roster.
    ("unplaced", "TEXT"),
    # What orders two hand-ins of one student when the LMS gave neither a time: lms_order, the LMS's own
    # (Canvas: the submission's last attachment id, a later upload's is higher); given, when its download was
    # first given to `grade` (the run's start, then its place on the command line), the rule of last resort,
    # which the row then states.
    ("lms_order", "INTEGER"), ("given", "TEXT"))


# Version 5: slip days (core/slip_days.py) and excuses (roster/store.py), applied at every refresh.
SEMESTER_COLUMNS = (
    ("slip_days", "INTEGER"),  # slip days spent on this hand-in (the counted one; NULL: the course has none)
    ("slip_note", "TEXT"),     # how many, why, and what the student's pool holds after this assignment
    ("excused", "TEXT"))       # the student is excused from the assignment: why (NULL: not excused)


def _to_v1(db):
    """Whatever an unversioned gradebook holds, made version 1: the missing tables and columns added."""
    for statement in database.statements(SCHEMA_V1):
        db.execute(statement)
    database.add_columns(db, "submissions", ADDED_BEFORE_V1)
    db.execute("UPDATE submissions SET raw_score = score WHERE raw_score IS NULL")
    db.execute("UPDATE submissions SET name = student WHERE name IS NULL")


def _to_v2(db):
    """Identity on every row: new rows get it from intake; rows written before, from what they kept."""
    database.add_columns(db, "submissions", IDENTITY_COLUMNS)
    database.add_columns(db, "pending", IDENTITY_COLUMNS[:2])
    rows = db.execute("SELECT id, student, assignment, source FROM submissions").fetchall()
    for row_id, student, assignment, source in rows:
        db.execute("UPDATE submissions SET lms = ?, lms_id = ?, lms_prefix = ?, repository = ? WHERE id = ?",
                   (*legacy_identity(student, assignment, source or ""), row_id))
    for student, source in db.execute("SELECT student, source FROM pending").fetchall():
        lms, lms_id, _, _ = legacy_identity(student, "", source or "")
        db.execute("UPDATE pending SET lms = ?, lms_id = ? WHERE student = ? AND source = ?",
                   (lms, lms_id, student, source))


def _to_v3(db):
    """Rows written before were placed (or had no roster) and ordered by their times: NULL says so."""
    database.add_columns(db, "submissions", PLACING_COLUMNS)
    database.add_columns(db, "pending", PLACING_COLUMNS[:1])    # a hand-in not graded yet may be unplaced too


# Version 4: every send to an LMS's API, and its answer (gradebook/lms_sent.py reads and writes it).
LMS_SENT = """
CREATE TABLE IF NOT EXISTS lms_sent (
    id INTEGER PRIMARY KEY, assignment TEXT NOT NULL, student TEXT NOT NULL,
    lms TEXT NOT NULL,              -- canvas
    lms_user TEXT,                  -- the LMS's id of the student (Canvas user id)
    lms_submission TEXT,            -- the LMS's id of their submission
    attempt INTEGER,                -- the attempt graded, as the LMS numbers them (NULL: not known)
    score REAL,                     -- the grade sent (NULL: none was sent, a comment alone)
    comment_sha256 TEXT,            -- a hash of the comment and of the file attached (NULL: no comment)
    sent_at TEXT NOT NULL,
    outcome TEXT NOT NULL,          -- sent | failed | unknown (no answer: whether it arrived is checked first)
    answer TEXT);                   -- what the LMS answered, in short (its status, ids, its own error words)
CREATE INDEX IF NOT EXISTS lms_sent_by_student ON lms_sent (assignment, lms, student, id);
"""


def _to_v4(db):
    for statement in database.statements(LMS_SENT):
        db.execute(statement)


def _to_v5(db):
    """Rows written before had no slip days and no excuse: NULL says so."""
    database.add_columns(db, "submissions", SEMESTER_COLUMNS)
    database.add_columns(db, "absent", (("note", "TEXT"),))


# Version 6: a send that excused the student in the LMS (Canvas's `submission[excuse]`) rather than grading them.
LMS_SENT_EXCUSED = (("excused", "INTEGER"),)     # 1: the excuse was sent, with no score; NULL: not an excuse


def _to_v6(db):
    """Sends recorded before were grades and comments: NULL says so."""
    database.add_columns(db, "lms_sent", LMS_SENT_EXCUSED)


STEPS = (_to_v1, _to_v2, _to_v3, _to_v4, _to_v5, _to_v6)
VERSION = len(STEPS)


def legacy_identity(student, assignment, source):
    """(lms, lms_id, lms_prefix, repository) of a row written before version 2, from its key and source,
    as the release stage of those versions read them (once, here, when the gradebook is upgraded): the
    source's file or top folder as the LMS named it (intake's own parsers), else the LMS the key names."""
    path = source.split(":", 1)[-1] if _zip_label(source) else source
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    found = identity.canvas_file(name) or (identity.moodle_folder(parts[0]) if len(parts) > 1 else None) or \
        (identity.moodle_file(name) if len(parts) == 1 else None)
    if found is not None:
        return found.lms, found.lms_id, found.lms_prefix, ""
    lms, colon, rest = student.partition(":")
    if colon and lms in ("canvas", "gradescope", "blackboard"):     # their keys end with the LMS's own id
        return lms, "" if "@" in rest else rest, "", ""
    if colon and lms in ("moodle", "d2l", "drive", "teams"):       # a name, or an id the roster gave
        return lms, "", "", ""
    if colon:                                                       # a roster's key (`email:...`)
        return "", "", "", ""
    folder = parts[0] if len(parts) > 1 and parts[0] not in ("..", ".", "/") else ""
    return ("classroom" if folder and assignment and folder.startswith(f"{assignment}-") else ""), "", "", folder


def _zip_label(source):
    head, sep, _ = source.partition(":")
    return bool(sep) and head.lower().endswith(".zip")


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


def check_file(db, path, error_class):
    """Refuse a damaged or hand-edited gradebook with one line that says what to do: one of this version
    must have every column of this version; an older one, those every version had."""
    problem = db.execute("PRAGMA quick_check(1)").fetchone()[0]
    if problem != "ok":
        raise error_class(f"{path} is damaged (SQLite: {problem}). Move it aside (e.g. `mv {path} "
                          f"{path}.damaged`) and grade again, which grades every hand-in afresh, "
                          "or restore it from a backup")
    required, current = dict(REQUIRED_COLUMNS), database.schema_version(db) == VERSION
    if current:
        required["submissions"] = required["submissions"] | {c for c, _ in ADDED_BEFORE_V1 + IDENTITY_COLUMNS + PLACING_COLUMNS
                                                                  + SEMESTER_COLUMNS}
    for table, wanted in required.items():
        have = database.columns(db, table)
        if (have or current) and not wanted <= have:
            missing = ", ".join(sorted(wanted - have))
            raise error_class(f"{path}: table {table} lacks column(s) {missing}: was it edited by hand or "
                              "by another program? Restore it from a backup, or move it aside and grade again")
