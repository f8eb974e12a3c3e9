"""`autograder audit` on a tiny made-up assignment: weak cases are flagged, survivors shown, equivalents counted."""

import json

import pytest
from click.testing import CliRunner
from nbformat.v4 import new_code_cell

from autograder.core.assignment import load_assignment
from autograder.audit import measure
from autograder.audit.mutants import make_mutants
from autograder.audit.regions import load_reference
from autograder.cli.main import main
from autograder.core.course import load_course
from autograder.grade.handin import shared_sandbox
from minicourse import cell, make_course

SQUARE = '''
def square(x):
    """x times x."""
    ### BEGIN SOLUTION
    return x * x
    ### END SOLUTION
'''
IS_EVEN = '''
def is_even(n):
    """True if n is even."""
    ### BEGIN SOLUTION
    return n % 2 == 0
    ### END SOLUTION
'''
# One input per function: `return True` and `n % 1 == 0` in is_even pass it.
WEAK = '''
title = "Squares"
[[case]]
call = "square(3)"
points = 2.5
[[case]]
call = "is_even(4)"
points = 2.5
'''
STRONG_HIDDEN = '''
[[case]]
call = "is_even(7)"
points = 0.5
hidden = true
description = "is_even on an odd number"
'''

# A yes-or-no function needs a public "no" too, for its cases to require a yes and a no; and each
# public case a hidden twin (a yes and a no for is_even), for a table of the public answers to earn nothing.
BALANCED = '''
mutation_floor = 0.95
title = "Squares"

[requires]
is_even = ["is_even(4)", "is_even(5)", "hidden: is_even on an odd number", "hidden: is_even on another even number"]

[[case]]
call = "square(3)"
points = 2.25
requires = ["hidden: square of another number"]
[[case]]
call = "is_even(4)"
points = 1.25
[[case]]
call = "is_even(5)"
points = 0.5
[[case]]
call = "square(5)"
points = 0.25
hidden = true
description = "square of another number"
[[case]]
call = "is_even(10)"
points = 0.25
hidden = true
description = "is_even on another even number"
''' + STRONG_HIDDEN


def course_with(root, cases, exit_code=0):
    make_course(root, [cell(new_code_cell, "square", SQUARE), cell(new_code_cell, "is-even", IS_EVEN)], cases)
    built = run(root, "build")
    assert built.exit_code == exit_code, built.output
    return root


def run(root, *args):
    return CliRunner().invoke(main, ["--course", str(root), *args])


def audit(root):
    assignment = load_assignment(load_course(root), "squares")
    return measure(assignment, shared_sandbox(), jobs=2)


def survivor(result, replacement):
    return next(m for m in result.mutants if m.mutant.replacement == replacement)


@pytest.fixture(scope="module")
def weak(tmp_path_factory):
    root = course_with(tmp_path_factory.mktemp("weak"), WEAK)
    return root, audit(root)


@pytest.mark.slow
def test_a_weak_case_table_is_flagged(weak):
    _, result = weak
    one_input = {f.function for f in result.findings if f.kind == "one-input"}
    assert one_input == {"square", "is_even"}
    # square(3) is 9: no constant answer passes it.  is_even(4) is True: `return True` does.
    flagged = {(f.kind, f.function) for f in result.findings if f.kind in ("stub-passes", "constant-expected")}
    assert flagged == {("stub-passes", "is_even"), ("constant-expected", "is_even")}
    assert {(s.function, s.stub) for s in result.stubs if s.stub == "return False"} == {
        ("square", "return False"), ("is_even", "return False")}
    assert result.untouched_score == 0
    assert result.score < 1
    assert result.constants_above_floor() == [("is_even: return True", 2.5), ("every function: return True", 2.5)]


@pytest.mark.slow
def test_a_mutant_the_cases_cannot_catch_is_a_survivor_with_its_diff(weak):
    root, result = weak
    always = survivor(result, "return True")
    assert always.verdict == "survived" and always.mutant.function == "is_even"
    assert "-    return n % 2 == 0" in always.mutant.diff and "+    return True" in always.mutant.diff
    # x + x, x ** x and the rest are caught by square(3).
    assert survivor(result, "return 0").verdict == "public"
    assert all(m.verdict == "public" for m in result.mutants if m.mutant.function == "square")

    cli = run(root, "audit", "--out", str(root / "report"))
    # A survivor is reported; a constant answer that earns points fails the audit.
    assert cli.exit_code == 1, cli.output
    assert "unexplained survivor(s): " in cli.output and always.mutant.id in cli.output
    assert "squares: 19 constant answers: 2 earn more than the floor of 0: is_even: return True earns 2.5; " \
           "every function: return True earns 2.5" in cli.output
    assert "  is_even:        False 0 | True 2.5 | 0 0 | '' 0 | None 0 | [] 0" in cli.output
    assert "below a floor: squares (constant answers earn points)" in cli.output
    markdown = (root / "report" / "squares.md").read_text()
    assert f"`{always.mutant.id}` in `is_even`" in markdown and "+    return True" in markdown
    html = (root / "report" / "squares.html").read_text()
    assert always.mutant.id in html and "<script" not in html


@pytest.mark.slow
def test_a_hidden_case_kills_survivors_and_is_reported_as_hidden_only(tmp_path):
    root = course_with(tmp_path, WEAK.replace("points = 2.5\n[[case]]\ncall = \"is_even(4)\"\npoints = 2.5",
                                              "points = 2.5\n[[case]]\ncall = \"is_even(4)\"\npoints = 2")
                       + STRONG_HIDDEN)
    result = audit(root)
    assert survivor(result, "return True").verdict == "hidden"
    assert survivor(result, "return True").killer == "hidden: is_even on an odd number"
    assert result.count("survived") == 0 and result.score == 1


@pytest.mark.slow
def test_an_equivalent_mutant_marked_in_cases_toml_is_counted_as_such(weak, tmp_path):
    _, before = weak
    always = survivor(before, "return True").mutant.id
    killed = survivor(before, "return 0").mutant.id
    rest = [m.mutant.id for m in before.mutants if m.verdict == "survived" and m.mutant.id != always]
    marks = "".join(f'\n[[equivalent]]\nid = "{i}"\nreason = "for the test"\n' for i in (always, killed, "0000000000"))
    root = course_with(tmp_path, WEAK + marks)
    result = audit(root)
    assert survivor(result, "return True").verdict == "equivalent"
    assert survivor(result, "return True").reason == "for the test"
    assert result.count("equivalent") == 1
    assert result.count("survived") == len(rest)
    assert result.score == result.killed / (len(result.mutants) - 1)
    # A mark on a mutant that is killed, or on no mutant at all, is shown, never trusted.
    wrong = survivor(result, "return 0")
    assert wrong.verdict == "public" and wrong.marked_but_killed
    assert result.stale_equivalents == ["0000000000"]
    line = result.summary_line()
    assert "1 equivalent" in line and f"{len(rest)} survived" in line


@pytest.mark.slow
def test_build_check_fails_below_the_floor_and_when_the_audit_is_stale(tmp_path):
    root = course_with(tmp_path, "mutation_floor = 0.95\n" + WEAK, exit_code=1)
    audit_json = root / "autograder" / "assignments" / "squares" / "audit.json"
    stored = json.loads(audit_json.read_text())
    assert stored["score"] < 0.95 and stored["survived"] >= 1
    check = run(root, "build", "--check")
    assert check.exit_code == 1 and "below the floor 95%" in check.output
    assert "audit.json" not in check.output  # not stale: just too weak

    cases = root / "autograder" / "assignments" / "squares" / "cases.toml"
    cases.write_text(cases.read_text().replace("points = 2.5\n[[case]]\ncall = \"is_even(4)\"\npoints = 2.5",
                                               "points = 2.5\n[[case]]\ncall = \"is_even(4)\"\npoints = 2")
                     + STRONG_HIDDEN)
    stale = run(root, "build", "--check")
    assert stale.exit_code == 1 and "audit.json" in stale.output
    # Every mutant is killed now, but `return True` still earns is_even(4)'s 2 points, and `return
    # False` the hidden case's 0.5: the build fails on the constant answers.
    weak = run(root, "build")
    assert weak.exit_code == 1
    assert ("squares: constant answers earn more than the floor of 0 point(s): is_even: return False earns 0.5; "
            "is_even: return True earns 2;") in weak.output
    assert json.loads(audit_json.read_text())["score"] == 1.0
    # Each is_even case counts only when is_even says yes once and no once: no constant passes both.
    cases.write_text(BALANCED)
    rebuilt = run(root, "build")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert run(root, "build", "--check").exit_code == 0
    stored = json.loads(audit_json.read_text())
    assert stored["score"] == 1.0
    assert stored["constant_answers"] == {"floor": 0.0, "checked": 19, "most": 0.0, "above_floor": []}
    assert stored["lookup"]["most"] == 0 and stored["lookup"]["floor"] == 1.0


def test_mutant_ids_stay_put_when_other_code_changes(weak, tmp_path):
    _, result = weak
    root = tmp_path
    make_course(root, [cell(new_code_cell, "first", "# a new first cell\nHELLO = 1\n\n\n"),
                       cell(new_code_cell, "is-even", IS_EVEN), cell(new_code_cell, "square", SQUARE)], WEAK)
    moved = make_mutants(load_reference(load_assignment(load_course(root), "squares")))
    assert {m.id for m in moved} == {m.mutant.id for m in result.mutants}


def test_ci_prints_every_assignment_s_audit():
    from conftest import ROOT
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci.index(".venv/bin/autograder audit  # prints every assignment's mutation score; fails below a floor") \
        == ci.index("make test") + 1


@pytest.mark.parametrize("extra, message", [
    ('\n[[equivalent]]\nid = "abc"\n', "equivalent abc: needs a one-line reason"),
    ('\n[[equivalent]]\nreason = "x"\n', 'equivalent 1: needs id = "..."'),
])
@pytest.mark.slow
def test_a_bad_equivalent_mark_is_a_one_line_error(tmp_path, extra, message):
    make_course(tmp_path, [cell(new_code_cell, "square", SQUARE), cell(new_code_cell, "is-even", IS_EVEN)],
                WEAK + extra)
    for command in ("build", "audit"):
        result = run(tmp_path, command)
        assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output


def test_a_bad_floor_is_a_one_line_error(tmp_path):
    make_course(tmp_path, [cell(new_code_cell, "square", SQUARE), cell(new_code_cell, "is-even", IS_EVEN)],
                "mutation_floor = 90\n" + WEAK)
    result = run(tmp_path, "build", "--check")
    assert result.exit_code == 1 and "mutation_floor must be a number from 0 to 1" in result.output


ROLL = '''
import random

def roll(sides):
    """A die that nobody should grade against."""
    ### BEGIN SOLUTION
    return random.randrange(sides)
    ### END SOLUTION
'''


@pytest.mark.slow
def test_a_hidden_repeat_of_a_public_input_and_a_case_that_flips_are_flagged(tmp_path):
    cases = '''
[[case]]
call = "square(3)"
points = 2
[[case]]
call = "square(3)"
points = 1
hidden = true
description = "the same again"
[[case]]
call = "is_even(4)"
points = 1
[[case]]
call = "roll(1000000000)"
points = 1
'''
    make_course(tmp_path, [cell(new_code_cell, "square", SQUARE), cell(new_code_cell, "is-even", IS_EVEN),
                           cell(new_code_cell, "roll", ROLL)], cases)
    assert run(tmp_path, "build").exit_code == 0
    result = audit(tmp_path)
    kinds = {(f.kind, f.function) for f in result.findings}
    assert ("hidden-repeats-public", "square") in kinds
    assert ("flips", "roll") in kinds
    assert ("one-input", "square") in kinds  # a repeat is not a second input
