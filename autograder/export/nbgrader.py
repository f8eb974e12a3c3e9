"""`autograder export nbgrader`: the assignment as an nbgrader 0.9 course directory.

    DIR/nbgrader_config.py               course settings: our `### BEGIN YOUR CODE` stub,
                                         the hidden-test delimiters, the cell time limit
    DIR/source/<id>/<notebook>           the source notebook (nbgrader's "instructor version")
    DIR/source/<id>/autograder_checks.py the check module the test cells import
    DIR/autograder-cases.json            which grade cell is which of our cases

Then, in DIR:  nbgrader generate_assignment <id>; nbgrader autograde <id>.

The source notebook is the reference notebook with the check helpers pasted
in (a read-only cell), every cell holding `### BEGIN SOLUTION` marked as a
solution cell, and after the cell defining each tested function one read-only
test cell (grade cell) per case, worth the case's points.  A hidden case's
cell shows students only its description: its check sits between
`### BEGIN HIDDEN TESTS` and `### END HIDDEN TESTS`, as does the check of
the hidden twins a public case requires, after the public check itself.
"""

import copy
import json
import math
import re
from pathlib import Path

import nbformat

from ..notebook.preprocessors.drop_reference_only import drop_reference_only
from ..notebook.preprocessors.inline_runtime import TAG as RUNTIME_TAG
from ..notebook.preprocessors.public_checks import defining_cell
from ..notebook.preprocessors.stub_solutions import has_solution, stub_source
from ..notebook.student_notebook import Context, executable_reference, read_reference
from . import checks

BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
CASES_FILE = "autograder-cases.json"
TEST_TAG = "autograder-test"


def grade_id(position, case):
    """A grade cell's id: stable, unique, and readable in nbgrader's formgrader."""
    return f"case-{position:02d}-{case.function}".replace("_", "-")


def _nbgrader(grade=False, solution=False, locked=False, grade_id=None, points=None):
    meta = {"grade": grade, "solution": solution, "locked": locked, "schema_version": 3}
    if grade_id is not None:
        meta["grade_id"] = grade_id
    if points is not None:
        meta["points"] = points
    return meta


def test_cell_source(assignment, case, expected):
    call = checks.check_call(assignment, case, expected)
    if case.hidden:
        header = f"# Hidden check ({case.points:g} pt): {case.description}"
        return "\n".join([header, BEGIN_HIDDEN, f"import {checks.MODULE}", call, END_HIDDEN])
    header = f"# Check ({case.points:g} pt): {case.call.text}"
    twins = checks.hidden_requirements_call(assignment, case)
    if twins is None:
        return "\n".join([header, f"import {checks.MODULE}", call])
    # The hidden twins it requires: in the grade cell nbgrader autogrades, stripped from the students' copy.
    public = checks.check_call(assignment, case, expected, hidden=False)
    return "\n".join([header, f"import {checks.MODULE}", public, BEGIN_HIDDEN, twins, END_HIDDEN])


def source_notebook(assignment, expected):
    """The nbgrader source (instructor) notebook, and {grade_id: case name}."""
    reference = read_reference(assignment)
    notebook = executable_reference(reference, assignment)
    notebook = drop_reference_only(notebook, Context(assignment, expected, ""))
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            tags = cell.metadata.get("tags", [])
            if RUNTIME_TAG in tags:
                # read-only: autograde restores it, whatever the student did to it
                cell.metadata["nbgrader"] = _nbgrader(locked=True, grade_id=cell.get("id") or "helpers")
            elif has_solution(cell.source):
                cell.metadata["nbgrader"] = _nbgrader(solution=True, grade_id=cell.id)
    mapping, placements = {}, []
    by_function = {}
    for position, case in enumerate(assignment.cases, 1):
        by_function.setdefault(case.function, []).append((position, case))
    for order, (function, cases) in enumerate(by_function.items()):
        index = defining_cell(notebook, function)
        placements.append((len(notebook.cells) - 1 if index is None else index, order, cases))
    for index, _, cases in sorted(placements, key=lambda p: (-p[0], -p[1])):
        # public cases first, then hidden ones, each in cases.toml order
        ordered = [pc for pc in cases if not pc[1].hidden] + [pc for pc in cases if pc[1].hidden]
        cells = []
        for position, case in ordered:
            cell = nbformat.v4.new_code_cell(test_cell_source(assignment, case, expected[case.name]))
            cell.id = grade_id(position, case)
            cell.metadata["tags"] = [TEST_TAG]
            cell.metadata["nbgrader"] = _nbgrader(grade=True, locked=True, grade_id=cell.id,
                                                  points=case.points)
            mapping[cell.id] = case.name
            cells.append(cell)
        notebook.cells[index + 1:index + 1] = cells
    notebook.metadata = {
        "kernelspec": reference.metadata.get("kernelspec", {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}),
        "language_info": {"name": "python"},
    }
    notebook.nbformat, notebook.nbformat_minor = 4, 5
    nbformat.validate(notebook)
    ordered = {cell.id: mapping[cell.id] for cell in notebook.cells if cell.get("id") in mapping}
    return notebook, ordered


def code_stub():
    """nbgrader's replacement for a solution region: our own `### BEGIN YOUR CODE` stub."""
    return stub_source("### BEGIN SOLUTION\n### END SOLUTION")


def execute_timeout(assignment):
    """nbgrader's per-cell limit: our cell limit, and room for the slowest test cell."""
    slowest = max((checks.longest_timeout(assignment, c) * c.options.get("repeat", 1)
                   * (11 if c.compare == "faster_than" else 1) for c in assignment.cases), default=0)
    return int(math.ceil(max(assignment.cell_timeout, slowest + 5)))


def course_id(course):
    """nbgrader's course id (it names exchange folders): the repository's name, as a slug."""
    name = course.repository.rstrip("/").rsplit("/", 1)[-1] or course.name
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-").lower() or "course"


def config_text(course, timeout):
    return f'''# nbgrader settings for this course folder (written by `autograder export nbgrader`).
c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.course_id = {course_id(course)!r}
c.CourseDirectory.root = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."

# Solution regions become the same stub as in the course's own student notebooks.
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
c.ClearSolutions.code_stub = {{"python": {code_stub()!r}}}

# Hidden cases: removed from the student version, restored when autograding.
c.ClearHiddenTests.begin_test_delimeter = {BEGIN_HIDDEN.removeprefix("### ")!r}
c.ClearHiddenTests.end_test_delimeter = {END_HIDDEN.removeprefix("### ")!r}

# A cell that runs longer than this is interrupted and autograding goes on
# (each case also has its own time limit inside its test cell).  One value for
# the folder: the largest that an assignment exported here needs.
c.Execute.timeout = {timeout}

# A test cell the student deleted is put back, so every case is always run.
c.OverwriteCells.add_missing_cells = True
'''


def export(course, assignment, out_dir):
    """Write the nbgrader course folder for one assignment; return the paths written."""
    out_dir = Path(out_dir)
    expected = assignment.load_expected()
    notebook, mapping = source_notebook(assignment, expected)
    folder = out_dir / "source" / assignment.id
    folder.mkdir(parents=True, exist_ok=True)
    written = []

    def write(path, text):
        path.write_text(text, encoding="utf-8")
        written.append(path)

    write(folder / assignment.notebook, nbformat.writes(notebook) + "\n")
    write(folder / checks.FILENAME, checks.module_source())
    cases_path = out_dir / CASES_FILE
    known = json.loads(cases_path.read_text(encoding="utf-8")) if cases_path.is_file() else {}
    known[assignment.id] = {"notebook": Path(assignment.notebook).stem, "cells": mapping,
                            "execute_timeout": execute_timeout(assignment)}
    timeout = max(entry.get("execute_timeout", 0) for entry in known.values())
    write(out_dir / "nbgrader_config.py", config_text(course, timeout))
    write(cases_path, json.dumps(known, indent=1, ensure_ascii=False) + "\n")
    return written


def as_submission(release, handin):
    """A hand-in of ours as the student would have handed it in under nbgrader.

    `release` is nbgrader's student version (from generate_assignment) and
    `handin` a notebook read from a student's file (handins.read_handin).
    The student's code cells replace the release cells they correspond to
    (same cell id or, for cells without ids such as a .py file's, the same
    top-level names defined); cells of their own stay after the cell they
    followed; the release's read-only cells (helpers, tests) and text are
    kept as released.  Our build's public-check cells are left out: nbgrader's
    test cells take their place.
    """
    from .handins import defined_names

    release = copy.deepcopy(release)
    mine = [c for c in handin.cells if c.cell_type == "code"
            and "public-check" not in c.metadata.get("tags", [])]
    editable = [r for r in release.cells if r.cell_type == "code"
                and not r.metadata.get("nbgrader", {}).get("locked")]
    by_id = {r.id: r for r in editable if r.get("id")}
    locked_ids = {r.get("id") for r in release.cells if r.metadata.get("nbgrader", {}).get("locked")}
    # the student's copies of read-only cells (helpers, tests) give way to the released ones
    mine = [c for c in mine if not c.get("id") or c.get("id") not in locked_ids]
    release_names = {id(r): defined_names(r.source) for r in editable}
    matched = {}   # id(release cell) -> index into mine
    for index, cell in enumerate(mine):
        target = by_id.get(cell.get("id"))
        if target is None:
            wanted = defined_names(cell.source)
            target = next((r for r in editable if id(r) not in matched and wanted & release_names[id(r)]),
                          None)
        if target is not None and id(target) not in matched:
            matched[id(target)] = index
    used = set(matched.values())
    out, cursor = [], 0
    for cell in release.cells:
        if cell.cell_type != "code" or cell.metadata.get("nbgrader", {}).get("locked"):
            out.append(cell)
            continue
        if id(cell) not in matched:
            continue   # the student deleted it
        index = matched[id(cell)]
        out += [_plain(mine[j]) for j in range(cursor, index) if j not in used]
        used.update(range(cursor, index))
        cursor = max(cursor, index + 1)
        cell.source = mine[index].source
        cell.metadata["tags"] = list(mine[index].metadata.get("tags", []))
        out.append(cell)
    out += [_plain(mine[j]) for j in range(len(mine)) if j not in used]
    for cell in out:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    release.cells = out
    return release


def _plain(cell):
    cell = copy.deepcopy(cell)
    cell.metadata.pop("nbgrader", None)
    cell.outputs, cell.execution_count = [], None
    return cell
