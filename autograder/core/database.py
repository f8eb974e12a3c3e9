"""What the grader's two SQLite databases share: one line per failure, and a schema upgraded step by step.

A course's gradebooks (`gradebook.db`, one per assignment) and its records (`course.db`) live a whole
semester, across upgrades of the grader, so each records the version of its schema in SQLite's own
header field for it (`PRAGMA user_version`) and is brought to the newest one, a step at a time, when it
is opened.  Step N takes a database at version N to N + 1.  Each step runs in one transaction with the
version it reaches: a crash, a full disk or a second process part way leaves the database at one version
or the next, never between.  Version 0 is every database written before versions were recorded: its
step makes whatever such a version left (tables and columns, each added only when missing) into
version 1.  A database newer than this grader knows is refused, never changed.
"""

import functools
import sqlite3


def one_line_errors(error_class, where, note=""):
    """A decorator: any SQLite failure inside the function (a disk that fills, a file changed underneath, a
    table edited by hand) becomes `error_class("<where(*args)>: <what SQLite said><note>")`, one line for
    the user, never a traceback.  `where` names the database from the function's arguments."""
    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except sqlite3.DatabaseError as error:
                raise error_class(f"{where(*args)}: {error}{note}") from None
        return wrapper
    return decorate


def schema_version(db):
    return db.execute("PRAGMA user_version").fetchone()[0]


def upgrade(db, steps, path, error_class):
    """Bring `db` from its recorded version to len(steps), one step at a time; returns the versions it went
    through (empty when it was up to date).  `steps[n](db)` makes version n into n + 1 (no COMMIT in it:
    no executescript)."""
    newest = len(steps)
    found = schema_version(db)
    if found > newest:
        raise error_class(f"{path} was written by a newer version of the grader (schema version {found}; this "
                          f"one knows up to {newest}): upgrade the grader (`pip install -U .` in the course "
                          "folder) before using it, or it would be changed in ways that version does not expect")
    passed = []
    while found < newest:
        db.execute("BEGIN IMMEDIATE")     # the write lock first: a second process waits, then finds it done
        try:
            found = schema_version(db)
            if found < newest:
                steps[found](db)
                passed.append(found)
                found += 1
                db.execute(f"PRAGMA user_version = {found:d}")
            db.commit()
        except BaseException:
            db.rollback()
            raise
    return passed


def statements(script):
    """The statements of an SQL script, one by one, for a step (executescript would commit part way)."""
    found, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    assert not pending.strip(), f"an SQL statement does not end: {pending!r}"
    return found


def columns(db, table):
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def add_columns(db, table, wanted):
    """ALTER TABLE `table` ADD each (column, type) of `wanted` it lacks."""
    have = columns(db, table)
    for column, kind in wanted:
        if column not in have:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
