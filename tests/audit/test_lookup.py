"""A table of the public answers earns little: the audit's look-up mutant, its floor, and hidden twins.

Issue 38, item 6: the untouched n-queens student notebook plus one cell of look-ups (get_n is len(pos),
is_solved answers the two public positions, count_solutions answers n = 1..8, the rest False) scored
3.95 / 5.  `autograder audit` now grades such a notebook for every assignment (lookup.py: each tested
function a table of the public answers, with a constant default) and fails above cases.toml's
`lookup_floor`; public cases require hidden twins, so the table earns (almost) nothing.
"""

import contextlib
import io
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from nbformat.v4 import new_code_cell

from autograder import runtime
from autograder.audit.lookup import MOST_COMMON, lookup_cell, lookup_key, lookup_signature, lookup_variants
from autograder.cli.main import main
from autograder.core.assignment import load_assignment
from autograder.core.course import load_course
from autograder.export import checks, nbgrader, otter
from autograder.grade.handin import grade
from autograder.grade.scoring import CaseResult, apply_requirements
from autograder.intake.cells import CodeCell, read_cells
from autograder.notebook.preprocessors.public_checks import check_cell_source
from conftest import ROOT
from minicourse import cell, make_course

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

IS_EVEN = '''
def is_even(n):
    """True if n is even."""
    ### BEGIN SOLUTION
    return n % 2 == 0
    ### END SOLUTION
'''
SQUARE = '''
def square(x):
    """x times x."""
    ### BEGIN SOLUTION
    return x * x
    ### END SOLUTION
'''
# Public cases a yes and a no apart (no constant earns a point), but nothing a table cannot hold.
TABLED = '''
title = "Evens"
mutation_floor = 0.5
[requires]
is_even = ["is_even(4)", "is_even(5)"]
[[case]]
call = "square(3)"
points = 2
[[case]]
call = "is_even(4)"
points = 1.25
[[case]]
call = "is_even(5)"
points = 1.25
[[case]]
call = "square(7)"
points = 0.5
hidden = true
description = "square of another number"
'''
# The same, with a hidden twin for each public case: a yes and a no for is_even, a square for square.
TWINNED = '''
title = "Evens"
mutation_floor = 0.5
[requires]
is_even = ["is_even(4)", "is_even(5)", "hidden: is_even on another even number", "hidden: is_even on another odd number"]
[[case]]
call = "square(3)"
points = 2
requires = ["hidden: square of another number"]
[[case]]
call = "is_even(4)"
points = 1.25
[[case]]
call = "is_even(5)"
points = 1
[[case]]
call = "square(7)"
points = 0.5
hidden = true
description = "square of another number"
[[case]]
call = "is_even(10)"
points = 0.125
hidden = true
description = "is_even on another even number"
[[case]]
call = "is_even(11)"
points = 0.125
hidden = true
description = "is_even on another odd number"
'''


def course(root, cases):
    make_course(root, [cell(new_code_cell, "square", SQUARE), cell(new_code_cell, "is-even", IS_EVEN)], cases,
                assignment="evens")
    return root


def run(root, *args):
    return CliRunner().invoke(main, ["--course", str(root), *args])


def evens(root):
    return load_assignment(load_course(root), "evens")


def test_a_table_keys_arguments_by_their_plain_values_bound_to_the_parameters():
    # A twin must be another input: the same numbers as a tuple or a numpy array are the same key, and a
    # keyword argument the same as a positional one.
    def f(pos, n=8):
        return pos, n

    sig = lookup_signature(f)
    assert lookup_key(sig, [[1, 3, 0, 2]], {}) == lookup_key(sig, [(1, 3, 0, 2)], {}) \
        == lookup_key(sig, [np.array([1, 3, 0, 2])], {}) == lookup_key(sig, [], {"pos": [1, 3, 0, 2], "n": 8})
    assert lookup_key(sig, [np.int64(6)], {}) == lookup_key(sig, [6], {})
    assert lookup_key(sig, [True], {}) != lookup_key(sig, [1], {}) != lookup_key(sig, [1, 7], {})
    # A function the notebook does not define (or arguments that do not fit it): the values as given.
    assert lookup_signature(None) is None
    assert lookup_key(None, [[1, 2]], {}) == lookup_key(None, [(1, 2)], {}) != lookup_key(sig, [[1, 2]], {})
    assert lookup_key(sig, [1, 2, 3], {}) == lookup_key(None, [1, 2, 3], {})


def test_the_look_up_cell_answers_the_public_calls_and_its_default_otherwise(tmp_path):
    assignment = evens(course(tmp_path, TABLED))
    expected = {"square(3)": 9, "is_even(4)": True, "is_even(5)": False, "hidden: square of another number": 49}
    variants = dict(lookup_variants(assignment, expected))
    assert list(variants) == ["False", "True", "0", "''", "None", "[]", MOST_COMMON]
    assert variants[MOST_COMMON] == {"square": 9, "is_even": True}       # a tie: the first answer
    namespace = {"square": lambda x: x, "is_even": lambda n: n}     # the notebook's own, whose parameters key
    exec(lookup_cell(assignment, expected, variants["None"]), namespace)  # noqa: S102 - our own generated code
    assert namespace["square"](x=3) == 9
    assert namespace["square"](3) == 9 and namespace["square"](np.int64(3)) == 9
    assert namespace["is_even"](4) is True and namespace["is_even"](5) is False
    assert namespace["square"](7) is None and namespace["is_even"](6) is None     # not public: the default
    assert "49" not in lookup_cell(assignment, expected, variants["None"])        # hidden answers never tabled


def test_a_public_case_may_require_a_hidden_twin_named_never_shown(tmp_path):
    assignment = evens(course(tmp_path, TWINNED))
    cases = {c.name: c for c in assignment.cases}
    assert cases["square(3)"].requires == ("hidden: square of another number",)
    assert cases["is_even(4)"].requires == ("is_even(5)", "hidden: is_even on another even number",
                                            "hidden: is_even on another odd number")
    expected = {"square(3)": 9, "is_even(4)": True, "is_even(5)": False, "hidden: square of another number": 49,
                "hidden: is_even on another even number": True, "hidden: is_even on another odd number": False}
    # The check cell judges the public requirement and names the twins by their descriptions alone.
    source = check_cell_source("is_even", [cases["is_even(4)"], cases["is_even(5)"]], expected,
                               required=cases)
    assert "\"requires\": ['is_even(5)']," in source
    assert "\"hidden_requires\": ['is_even on another even number', 'is_even on another odd number']," in source
    assert "is_even(10)" not in source and "is_even(11)" not in source
    printed = io.StringIO()
    namespace = {"is_even": lambda n: n % 2 == 0}
    with contextlib.redirect_stdout(printed):
        exec(source, {"run_checks": lambda c, **kw: runtime.run_checks(c, namespace=namespace, **kw)})  # noqa: S102
    text = printed.getvalue()
    assert "✓ pass  is_even(4)" in text and "✓ pass  is_even(5)" in text
    assert ("the grader counts these checks only when the hidden checks they require pass too: \u201cis_even on "
            "another even number\u201d; \u201cis_even on another odd number\u201d") in text
    assert text.rstrip().endswith("2.25 / 2.25 points from these public checks")
    printed = io.StringIO()
    namespace["is_even"] = lambda n: None      # nothing passes: nothing to qualify
    with contextlib.redirect_stdout(printed):
        exec(source, {"run_checks": lambda c, **kw: runtime.run_checks(c, namespace=namespace, **kw)})  # noqa: S102
    assert "hidden checks they require" not in printed.getvalue()


def test_a_table_that_fails_the_twin_is_withheld_with_its_reason(tmp_path):
    assignment = evens(course(tmp_path, TWINNED))
    passed = {"square(3)", "is_even(4)", "is_even(5)", "hidden: is_even on another odd number"}
    results = [CaseResult(c.name, c.function, c.hidden, c.description, c.call.text,
                          c.points if c.name in passed else 0.0, c.points, "passed" if c.name in passed else "failed",
                          "", "", "", 0.0) for c in assignment.cases]
    scored = {r.name: r for r in apply_requirements(assignment.cases, results)}
    assert sum(r.points for r in scored.values()) == 0
    assert scored["square(3)"].message == runtime.withheld_message(
        ["the hidden check \u201csquare of another number\u201d"], twin=True)
    assert scored["square(3)"].message.endswith("so that an answer written for the public checks alone earns nothing")
    assert scored["is_even(5)"].message == runtime.withheld_message(
        ["the hidden check \u201cis_even on another even number\u201d"], twin=True)


def test_other_engines_judge_the_twins_where_students_cannot_read_them(tmp_path):
    root = course(tmp_path, TWINNED)
    assert run(root, "build").exit_code == 0
    assignment = evens(root)
    expected = assignment.load_expected()
    # otter: the students' test file leaves the twin out; the autograder's has it.
    public = otter.test_file_text(assignment, expected, "square", hidden=False)
    every = otter.test_file_text(assignment, expected, "square", hidden=True)
    assert "square(7)" not in public and "49" not in public
    assert "requires=[('square(7)', 49, 'equal', {}, 'hidden: square of another number', " in every
    # nbgrader: the public check is visible, the twins' check sits in the hidden tests students never get.
    source = nbgrader.test_cell_source(assignment, next(c for c in assignment.cases if c.name == "square(3)"), 9)
    visible, hidden = source.split(nbgrader.BEGIN_HIDDEN)
    assert "square(7)" not in visible and "autograder_checks.check(\n    'square(3)'" in visible
    assert "autograder_checks.check_required(\n    'square(3)',\n    requires=[('square(7)', 49, " in hidden
    # The check module's own check_required: passes silently, or says "withheld" and which twin.
    scope = {"__name__": checks.MODULE}
    exec(compile(checks.module_source(), checks.FILENAME, "exec"), scope)  # noqa: S102
    twin = [("square(7)", 49, "equal", {}, "hidden: square of another number")]
    assert scope["check_required"]("square(3)", twin, namespace={"square": lambda x: x * x}) is None
    with pytest.raises(AssertionError, match=re.escape("square(3): withheld: right answer, but this check counts only "
                                                       "when hidden: square of another number also passes, so that "
                                                       "an answer written for the public checks alone earns nothing")):
        scope["check_required"]("square(3)", twin, namespace={"square": lambda x: {3: 9}.get(x)})


@pytest.mark.slow
def test_the_audit_prints_the_look_up_mutant_and_build_check_fails_above_its_floor(tmp_path):
    root = course(tmp_path, TABLED)
    built = run(root, "build")
    # No constant earns a point, every mutant dies, but a table earns every public point: 4.5 of 5.
    assert built.exit_code == 1
    assert ("evens: a table of the public answers (the look-up mutant) earns 4.5 point(s), more than the floor of 1 "
            "(see `autograder audit --assignment evens`; a public case can require a hidden twin in cases.toml)"
            ) in built.output
    audit_json = root / "autograder" / "assignments" / "evens" / "audit.json"
    stored = json.loads(audit_json.read_text())
    assert stored["lookup"]["most"] == 4.5 and stored["lookup"]["floor"] == 1.0
    assert stored["constant_answers"]["above_floor"] == [] and stored["score"] == 1.0
    check = run(root, "build", "--check")
    assert check.exit_code == 1 and "earns 4.5 point(s), more than the floor of 1" in check.output
    audited = run(root, "audit")
    assert audited.exit_code == 1
    assert ("evens: a table of the public answers (the look-up mutant) earns 4.5 point(s), more than the floor of 1 "
            "(its default: False)\n  by its default answer: False 4.5 | True 4.5 | 0 4.5 | '' 4.5 | None 4.5 | [] 4.5 | "
            "the most common public answer 4.5\n") in audited.output, audited.output
    assert "below a floor: evens (a table of the public answers earns more than 1 point(s))" in audited.output
    page = (root / "build" / "audit" / "evens.md").read_text(encoding="utf-8")
    assert "## A table of the public answers" in page

    # A floor the course sets for itself is kept (cases.toml is in the audit's key: stale until rebuilt).
    cases = root / "autograder" / "assignments" / "evens" / "cases.toml"
    cases.write_text("lookup_floor = 4.5\n" + TABLED)
    assert run(root, "build", "--check").exit_code == 1           # stale
    assert run(root, "build").exit_code == 0
    assert run(root, "build", "--check").exit_code == 0

    # Hidden twins: the table earns nothing, with the default floor.
    cases.write_text(TWINNED)
    rebuilt = run(root, "build")
    assert rebuilt.exit_code == 0, rebuilt.output
    stored = json.loads(audit_json.read_text())
    assert stored["lookup"]["most"] == 0 and set(stored["lookup"]["by_default"].values()) == {0}
    assert run(root, "build", "--check").exit_code == 0
    audited = run(root, "audit")
    assert audited.exit_code == 0
    assert "evens: a table of the public answers (the look-up mutant) earns 0 points at most (floor 1)\n" \
        in audited.output


@pytest.mark.parametrize("value", ["-1", "true", '"one"'])
def test_a_bad_lookup_floor_is_a_one_line_error(tmp_path, value):
    course(tmp_path, f"lookup_floor = {value}\n" + TABLED)
    result = run(tmp_path, "build", "--check")
    assert result.exit_code == 1 and "lookup_floor must be a number of points, 0 or more" in result.output
    assert "Traceback" not in result.output


# The issue's attack, as a student would write it: one cell after the untouched notebook.
ATTACK = '''
def get_n(pos):
    return len(pos)

def is_solved(pos):
    return {(0, 2, 4, 6, 1, 3, 5): True, tuple(range(15)): False}.get(tuple(pos), False)

def count_solutions(n):
    return {1: 1, 2: 0, 3: 0, 4: 2, 5: 10, 6: 4, 7: 40, 8: 92}.get(n, False)

def board2str(pos):
    return False
'''


def test_the_issue_s_table_of_public_answers_earns_only_its_real_get_n():
    assignment = load_assignment(load_course(ROOT), "n-queens")
    cells = [*read_cells(assignment.student_path), CodeCell(ATTACK)]
    result = grade(assignment, assignment.load_expected(), "attack", assignment.student_path, cells=cells)
    earned = {r.name: r.points for r in result.cases if r.points}
    # 3.95 before the twins; now only get_n, which is right (len(pos)), and its twin count.
    assert earned == {"get_n([0, 2, 4, 6, 1, 3, 5])": 0.2,
                      "hidden: get_n on a board of another size (the public case has only n = 7)": 0.05}
    withheld = {r.name: r.message for r in result.cases if runtime.is_withheld(r.message)}
    assert set(withheld) >= {"is_solved([0, 2, 4, 6, 1, 3, 5])", "is_solved(list(range(15)))",
                             *(f"count_solutions({n})" for n in range(1, 9))}
    assert all("the hidden check \u201cis_solved accepts a solution of another size\u201d" in m
               for m in withheld.values())


@pytest.mark.parametrize("assignment_id", load_course(ROOT).assignment_ids())
def test_every_assignment_s_stored_look_up_score_is_within_its_floor(assignment_id):
    stored = json.loads((ROOT / "autograder" / "assignments" / assignment_id / "audit.json").read_text())
    assert stored["lookup"]["most"] <= stored["lookup"]["floor"] == 1.0
    assert len(stored["lookup"]["by_default"]) == 7


def _values_within(value):
    """repr of `value` and of every list or tuple inside it, as lists (a tuple and a list of one content alike)."""
    plain = lambda v: [plain(i) for i in v] if isinstance(v, (list, tuple)) else v      # noqa: E731
    yield repr(plain(value))
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _values_within(item)


@pytest.mark.parametrize("assignment_id", load_course(ROOT).assignment_ids())
def test_no_hidden_twin_s_input_is_inside_a_public_answer(assignment_id):
    # The audit's table holds the public answers alone; a student's may hold what those answers show too.
    # no-three-in-line's yes twin for is_valid was the other 4 x 4 solution, which solutions(4)'s public
    # answer lists: the table of public answers plus that one entry (True, with the default False) earned
    # 1.2 of 5, past the floor, where the audit's table earned 0.
    import ast
    import tomllib
    folder = ROOT / "autograder" / "assignments" / assignment_id
    cases = tomllib.loads((folder / "cases.toml").read_text())
    expected = json.loads((folder / "expected.json").read_text())["expected"]
    public = [case for case in cases["case"] if not case.get("hidden")]
    twins = {name for names in cases.get("requires", {}).values() for name in names} | \
        {name for case in public for name in case.get("requires", [])}
    shown = {text for case in public for text in _values_within(expected.get(case["call"]))}
    inside = []
    for case in cases["case"]:
        if not case.get("hidden") or f"hidden: {case.get('description')}" not in twins:
            continue
        for argument in ast.parse(case["call"], mode="eval").body.args:
            try:
                value = ast.literal_eval(argument)
            except ValueError:          # np.array(...): not a literal a table could be keyed by here
                continue
            if isinstance(value, (list, tuple)) and next(_values_within(value)) in shown:
                inside.append(case["call"])
    assert not inside, f"hidden twins whose input a public answer shows: {inside}"
