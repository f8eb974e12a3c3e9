"""The course records' tables (grades/course.db), and how records of any earlier version become this version's.

Versions (recorded in `PRAGMA user_version`; core/database.py runs the steps):
  0  none recorded: every course.db written before versions were (the last release, f5257e5, had no
     points in lms_columns)
  1  the tables below, as they stood when versions began
  2  placements: hand-ins the roster could not place, placed by the teaching team (`roster place`)
  3  when a student joined a roster that already had students (students.joined_at: a late joiner is excused
     from what was due before, unless the course says otherwise); excuses; slip days the teaching team chose
     or granted

What each identity column holds, by the LMS whose class list filled it (roster/lms_files.py).  They keep
the LMS's own words: `login` is the name a student logs in with wherever the LMS has one, `lms_id` the
LMS's own number for them, `sis_id` the institution's.  A column per LMS (a `github` beside `login`) would
say nothing more, so there is none:

  lms         lms_id              sis_id                login               email
  canvas      Canvas user id      SIS User ID         SIS Login ID        the login, when it is one
  moodle      -                   ID number           username            email address
  gradescope  SID                 SID                 -                   email
  classroom   GitHub user id      roster identifier   GitHub username     the identifier, when it is one
  blackboard  username            Student ID          username            Email
  d2l         -                   OrgDefinedId        Username            Email

When you change a table: add a step at the end of STEPS (never edit one that shipped), and before it
ships, add the previous version's databases to tests/gradebook/schemas/ (make_semester.py there).
"""

from ..core import database

SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS students (
    key TEXT PRIMARY KEY, name TEXT NOT NULL, sortable_name TEXT, lms TEXT, lms_id TEXT, sis_id TEXT,
    login TEXT, email TEXT, section TEXT, test_student INTEGER NOT NULL DEFAULT 0,
    on_roster INTEGER NOT NULL DEFAULT 1,   -- 0: a later import no longer lists them (dropped the course)
    source TEXT, imported_at TEXT);
CREATE TABLE IF NOT EXISTS aliases (alias TEXT PRIMARY KEY, student TEXT NOT NULL REFERENCES students(key));
-- points: Canvas's Points Possible of each column, read from newer exports.
CREATE TABLE IF NOT EXISTS lms_columns (header TEXT PRIMARY KEY, seen_in TEXT, points REAL);
CREATE TABLE IF NOT EXISTS accommodations (
    name TEXT PRIMARY KEY, extra_seconds REAL NOT NULL, reason TEXT, granted_by TEXT, granted_at TEXT);
CREATE TABLE IF NOT EXISTS group_members (
    name TEXT NOT NULL REFERENCES accommodations(name) ON DELETE CASCADE, student TEXT NOT NULL,
    PRIMARY KEY (name, student));
CREATE TABLE IF NOT EXISTS extensions (
    id INTEGER PRIMARY KEY, assignment TEXT NOT NULL, student TEXT NOT NULL, until TEXT NOT NULL,
    reason TEXT, granted_by TEXT, granted_at TEXT, withdrawn_by TEXT, withdrawn_at TEXT);
CREATE TABLE IF NOT EXISTS adjustments (
    id INTEGER PRIMARY KEY, assignment TEXT NOT NULL, student TEXT NOT NULL,
    points REAL, score REAL,              -- exactly one: points added (±), or the score it sets
    reason TEXT NOT NULL, made_by TEXT, made_at TEXT, score_before REAL,
    withdrawn_by TEXT, withdrawn_at TEXT, withdraw_reason TEXT);
CREATE TABLE IF NOT EXISTS gradings (assignment TEXT PRIMARY KEY, out_dir TEXT NOT NULL, at TEXT);
"""


def _to_v1(db):
    """Whatever an unversioned course.db holds, made version 1: the missing tables and columns added."""
    for statement in database.statements(SCHEMA_V1):
        db.execute(statement)
    database.add_columns(db, "lms_columns", (("points", "REAL"),))


# Version 2: one row per student a hand-in (its key in the assignment's gradebook) is given to, or one with
# student NULL: it is nobody's on the roster.
PLACEMENTS = """
CREATE TABLE IF NOT EXISTS placements (
    assignment TEXT NOT NULL, handin TEXT NOT NULL, student TEXT, reason TEXT, placed_by TEXT, placed_at TEXT);
"""


def _to_v2(db):
    for statement in database.statements(PLACEMENTS):
        db.execute(statement)


# Version 3.  joined_at: NULL for a student of the first import (or one before this version), else when an import
# added them to a roster that had students.  An excuse or a slip-day decision is never deleted: a withdrawn one
# keeps its row, with who withdrew it, when and why (the audit trail, like adjustments).
# slip_days: `assignment` NULL grants `days` more to the student's pool; else the teaching team chose to spend
# `days` on that assignment (a later choice withdraws the one before).
EXCUSES_AND_SLIP_DAYS = """
CREATE TABLE IF NOT EXISTS excuses (
    id INTEGER PRIMARY KEY, assignment TEXT NOT NULL, student TEXT NOT NULL, reason TEXT NOT NULL,
    made_by TEXT, made_at TEXT, withdrawn_by TEXT, withdrawn_at TEXT, withdraw_reason TEXT);
CREATE TABLE IF NOT EXISTS slip_days (
    id INTEGER PRIMARY KEY, assignment TEXT, student TEXT NOT NULL, days INTEGER NOT NULL, reason TEXT NOT NULL,
    made_by TEXT, made_at TEXT, withdrawn_by TEXT, withdrawn_at TEXT, withdraw_reason TEXT);
"""


def _to_v3(db):
    database.add_columns(db, "students", (("joined_at", "TEXT"),))
    for statement in database.statements(EXCUSES_AND_SLIP_DAYS):
        db.execute(statement)


STEPS = (_to_v1, _to_v2, _to_v3)
VERSION = len(STEPS)
