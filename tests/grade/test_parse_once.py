"""A class run parses each hand-in once: what intake read is what runs, and what similarity keeps.

Parsing a notebook is the costly, hostile-input part of reading it (intake/cells.py bounds it); a second parse
of the same file at grading time or for similarity also meant a file changed in between was graded under the
first one's hash.  The count is taken where every reader of a hand-in goes through: intake.cells.parse.
"""

import shutil
import sqlite3
import sys
import zipfile
from collections import Counter

import pytest

from autograder.grade.class_run import GradeOptions, grade_class
from autograder.intake import cells
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_sandbox_per_process")]   # (conftest.py says why)

SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"


def counted_parses(monkeypatch):
    """Counter of parses by file name, from now on: intake.cells.parse is wrapped wherever a module holds it."""
    original, counts = cells.parse, Counter()

    def parse(raw, name):
        counts[name] += 1
        return original(raw, name)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("autograder"):
            for attribute, value in list(vars(module).items()):
                if value is original:
                    monkeypatch.setattr(module, attribute, parse)
    return counts


def a_class(folder):
    """A real class: notebooks that pass and fail, a .py hand-in, one in a zip, and one that is not a notebook."""
    folder.mkdir()
    for name in ("alice.ipynb", "bob.ipynb", "walter.py"):
        shutil.copy(SUBMISSIONS / name, folder / name)
    with zipfile.ZipFile(folder / "carol.zip", "w") as archive:
        archive.write(SUBMISSIONS / "carol.ipynb", "carol.ipynb")
    (folder / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    return folder


def test_each_handin_is_parsed_once_per_class_run(tmp_path, monkeypatch, course, nqueens):
    handins, out = a_class(tmp_path / "class"), tmp_path / "out"
    parses = counted_parses(monkeypatch)
    run = grade_class(course, nqueens, [handins], out, GradeOptions(roster=False))
    assert run.graded == 5
    assert {row.student: row.status for row in run.rows}["broken"] == "invalid-notebook"
    assert parses == Counter({name: 1 for name in ("alice.ipynb", "bob.ipynb", "walter.py", "carol.ipynb",
                                                   "broken.ipynb")})


def test_code_kept_for_similarity_comes_from_the_same_single_reading(tmp_path, monkeypatch, course, nqueens):
    """A gradebook from before code was kept: the next run keeps every hand-in's code without a second parse."""
    handins, out = a_class(tmp_path / "class"), tmp_path / "out"
    first = grade_class(course, nqueens, [handins], out, GradeOptions(roster=False))
    with sqlite3.connect(out / "gradebook.db") as db:
        db.execute("DELETE FROM handin_code")
    parses = counted_parses(monkeypatch)
    again = grade_class(course, nqueens, [handins], out, GradeOptions(roster=False))
    assert (again.graded, again.skipped) == (0, first.graded)
    assert set(parses.values()) == {1} and len(parses) == 5
    with sqlite3.connect(out / "gradebook.db") as db:
        kept = {student for (student,) in db.execute(
            "SELECT student FROM submissions s WHERE EXISTS (SELECT 1 FROM handin_code h WHERE h.sha256 = s.sha256)")}
    assert kept == {"alice", "bob", "walter", "carol"}       # broken.ipynb has no code to keep
