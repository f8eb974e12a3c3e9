"""Constant answers earn nothing: cases that require others, the ancestor template, withheld points explained.

The course's own ancestor template (the n-queens notebook the course began from, its stubs returning
`0`, `''` and `False`) scored 1.45 / 5 handed in untouched: `is_solved(list(range(15)))` is False,
`count_solutions(2)` is 0, and the hidden "rejects ..." cases.  cases.toml's `requires` withholds
those points unless is_solved also accepts a solution (and count_solutions counts one).
"""

import contextlib
import copy
import io
import re

import nbformat
import pytest
from click.testing import CliRunner
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder import runtime
from autograder.cli.main import main
from autograder.core.assignment import AssignmentError, load_assignment
from autograder.core.course import load_course
from autograder.export import checks
from autograder.grade.handin import grade
from autograder.grade.scoring import CaseResult, apply_requirements
from browser.classes import run
from autograder.cli.feedback import feedback_command
from autograder.core.folder_names import safe_name
from conftest import ROOT
from minicourse import cell, make_course

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

# The ancestor template's code cells as the original Colab notebook had them (two-space indents, the
# `row2st` typo, no numpy import though get_solutions uses np): the course began from this notebook.
ANCESTOR_CELLS = [
    "from sympy.utilities.iterables import multiset_permutations #this is used to compute every permutation of a list",
    """def get_n(pos): #given a board position, compute the board size
  ### BEGIN YOUR CODE
  return 0
  ### END YOUR CODE

def board2str(pos):
  def row2str(c):
    #print out a single row with a queen in column c
    #e.g. row2str(0) should return '|*|-|-|-|-|-|-|-|'

    ### BEGIN YOUR CODE
    return ''
    ### END YOUR CODE

  def top_row(n):
    #print out the top row of labels, given the board size
    #e.g. top_row(3) should return '-|0|1|2|'

    ### BEGIN YOUR CODE
    return ''
    ### END YOUR CODE

  n = get_n(pos)
  board = [top_row(n)]
  for r in range(n):
    ### BEGIN YOUR CODE
    c = 0 #compute the column of the queen in for row r
    ### END YOUR CODE
    board.append(str(r) + row2st(c))

  return '\\n'.join(board)""",
    """def is_solved(pos):
  n = get_n(pos)

  #check rows and columns
  ### BEGIN YOUR CODE
  return False
  ### END YOUR CODE

  #check diagonals
  ### BEGIN YOUR CODE
  return False
  ### END YOUR CODE

  #return True if pos is a solution and False otherwise
  ### BEGIN YOUR CODE
  return False
  ### END YOUR CODE""",
    """def get_solutions(n):
    solutions = []
    for p in multiset_permutations(np.arange(n).astype('int16')):
        if is_solved(p):
            solutions.append(p)
    return solutions""",
]
# Its stubs, put into today's student notebook: the 1.45 points of the issue came from this one.
ANCESTOR_STUBS = {"get-n": "return 0", "is-solved": "return False"}


def ancestor_notebook(path):
    notebook = new_notebook(cells=[new_markdown_cell("# The $n$-Queens puzzle: Introduction and overview"),
                                   *(new_code_cell(source) for source in ANCESTOR_CELLS)])
    nbformat.write(notebook, path)
    return path


def template_with_ancestor_stubs(path):
    """Today's student notebook, each `raise NotImplementedError` replaced by the ancestor's stub."""
    notebook = nbformat.read(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", as_version=4)
    stubs = copy.deepcopy(ANCESTOR_STUBS)
    for code in notebook.cells:
        if code.cell_type != "code":
            continue
        if code.id == "board2str":      # top_row and row2str return '', and c = 0, as in the ancestor
            parts = code.source.split('raise NotImplementedError("replace this line with your code")')
            code.source = parts[0] + "return ''" + parts[1] + "return ''" + parts[2] + "c = 0" + parts[3]
        elif code.id in stubs:
            code.source = code.source.replace('raise NotImplementedError("replace this line with your code")',
                                              stubs[code.id])
    nbformat.write(notebook, path)
    return path


@pytest.fixture(scope="module")
def nqueens():
    assignment = load_assignment(load_course(ROOT), "n-queens")
    return assignment, assignment.load_expected()


@pytest.mark.parametrize("make", [ancestor_notebook, template_with_ancestor_stubs])
def test_the_untouched_ancestor_template_scores_nothing(nqueens, tmp_path, make):
    assignment, expected = nqueens
    result = grade(assignment, expected, "ancestor", make(tmp_path / "n-queens.ipynb"))
    assert result.status == "graded" and result.score == 0
    rows = {r.name: r for r in result.cases}
    # It returns the right False for fifteen queens on one diagonal, as a constant does: withheld.
    diagonal = rows["is_solved(list(range(15)))"]
    assert (diagonal.status, diagonal.points) == ("failed", 0.0)
    # (and its hidden twin of a solution too: a constant fails both, and the public one is named first)
    assert diagonal.message == ("withheld: right answer, but this check counts only when is_solved([0, 2, 4, 6, 1, 3, "
                                "5]) and the hidden check \u201cis_solved accepts a solution of another size\u201d also "
                                "pass, so that an answer that never changes earns nothing")
    if make is template_with_ancestor_stubs:   # the ancestor itself has no count_solutions to call
        assert rows["count_solutions(2)"].message.startswith(
            "withheld: right answer, but this check counts only when count_solutions(4) and the hidden check")
        assert rows["hidden: is_solved rejects two queens in one row, with no diagonal conflict"].message \
            .startswith("withheld:")


@pytest.mark.slow
def test_a_withheld_rejects_case_says_why_on_the_feedback_page(tmp_path):
    (tmp_path / "in").mkdir()
    handin = template_with_ancestor_stubs(tmp_path / "in" / "sam.ipynb")
    out = tmp_path / "out"
    graded = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", str(out), str(handin.parent)])
    assert graded.exit_code == 0, graded.output
    assert run(feedback_command, "--out", out).exit_code == 0
    folder = out / "feedback" / safe_name("sam")
    page = (folder / "feedback.html").read_text(encoding="utf-8")
    block = re.search(r'<section class="case withheld">\s*<div class="case-head">\s*'
                      r'<h3><code>is_solved\(list\(range\(15\)\)\)</code></h3>(.*?)</section>', page, re.S)
    assert block, "the withheld case has a block of its own"
    assert "withheld · 0 / 0.75 pt" in block.group(1)
    assert ("right answer, but this check counts only when is_solved([0, 2, 4, 6, 1, 3, 5]) and the hidden check "
            "\u201cis_solved accepts a solution of another size\u201d also pass, so that an answer that never changes "
            "earns nothing") in block.group(1)
    assert ("a function that returns the same answer whatever it is given, or that knows only the public checks' "
            "answers, would pass it") in block.group(1).replace("&#39;", "'")
    # A hidden "rejects" case: its description, and the public check it needs, never its input.
    hidden = re.search(r"<h3>is_solved rejects two queens in one row, with no diagonal conflict</h3>(.*?)</section>",
                       page, re.S).group(1)
    assert "withheld · 0 / 0.1 pt" in hidden
    assert "counts only when is_solved([0, 2, 4, 6, 1, 3, 5]) and the hidden check" in hidden
    assert "[0, 2, 5, 7, 9, 4, 8, 1, 3, 6]" not in page    # the twin it requires is named, never shown
    assert "[0, 2, 0]" not in page
    markdown = (folder / "feedback.md").read_text(encoding="utf-8")
    assert "| is\\_solved rejects two queens in one row, with no diagonal conflict | 0 / 0.1 | withheld: right " \
           "answer, but this check counts only when is\\_solved(\\[0, 2, 4, 6, 1, 3, 5\\]) and the hidden check" \
           in markdown


def _results(cases, passed):
    return [CaseResult(c.name, c.function, c.hidden, c.description, c.call.text, c.points if c.name in passed
                       else 0.0, c.points, "passed" if c.name in passed else "failed", "", "True", "", 0.0)
            for c in cases]


MUTUAL = '''
title = "Evens"
[requires]
is_even = ["is_even(4)", "is_even(5)"]
[[case]]
call = "is_even(4)"
points = 2
[[case]]
call = "is_even(5)"
points = 2
[[case]]
call = "is_even(7)"
points = 1
hidden = true
description = "an odd number"
requires = ["is_even(4)"]
'''
IS_EVEN = '''
def is_even(n):
    ### BEGIN SOLUTION
    return n % 2 == 0
    ### END SOLUTION
'''


def evens(root, cases=MUTUAL):
    make_course(root, [cell(new_code_cell, "is-even", IS_EVEN)], cases, assignment="evens")
    return load_assignment(load_course(root), "evens")


def test_requirements_withhold_points_by_the_required_cases_own_verdicts(tmp_path):
    assignment = evens(tmp_path)
    cases = {c.name: c for c in assignment.cases}
    assert cases["is_even(4)"].requires == ("is_even(5)",)        # the [requires] table, never the case itself
    assert cases["hidden: an odd number"].requires == ("is_even(4)", "is_even(5)")
    # `return False`: the "no" cases pass, and are withheld because the "yes" one fails.
    scored = apply_requirements(assignment.cases, _results(assignment.cases, {"is_even(5)", "hidden: an odd number"}))
    assert [(r.points, r.status) for r in scored] == [(0.0, "failed")] * 3
    assert scored[1].message == runtime.withheld_message(["is_even(4)"])
    assert scored[2].message.startswith("withheld:") and "is_even(4)" in scored[2].message
    # Everything right: nothing withheld.  A required case missing from the results never counts.
    full = apply_requirements(assignment.cases, _results(assignment.cases, set(cases)))
    assert [r.points for r in full] == [2, 2, 1]
    partial = apply_requirements(assignment.cases[:1], _results(assignment.cases[:1], {"is_even(4)"}))
    assert partial[0].points == 0.0 and "is_even(5)" in partial[0].message


@pytest.mark.parametrize("change, message", [
    ('requires = ["is_even(4)"]', "is_even(4)"),   # (valid: the hidden case requires a public one)
    ('requires = ["is_even(9)"]', "requires 'is_even(9)', but no case has that name or call"),
])
def test_a_requirement_names_a_case_that_exists(tmp_path, change, message):
    if change.endswith('"is_even(4)"]'):
        assert evens(tmp_path).cases[2].requires
        return
    with pytest.raises(AssignmentError, match=re.escape(message)):
        evens(tmp_path, MUTUAL.replace('requires = ["is_even(4)"]', change))


@pytest.mark.parametrize("cases, message", [
    (MUTUAL.replace("[requires]\n", "[requires]\nis_odd = []\n"), "[requires] names 'is_odd', which no case calls"),
    (MUTUAL.replace('requires = ["is_even(4)"]', 'requires = "is_even(4)"'), "requires is a list of cases"),
])
def test_a_bad_requirement_is_a_one_line_error(tmp_path, cases, message):
    make_course(tmp_path, [cell(new_code_cell, "is-even", IS_EVEN)], cases, assignment="evens")
    result = CliRunner().invoke(main, ["--course", str(tmp_path), "build", "--check"])
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output


def test_the_check_cell_withholds_as_the_grader_does():
    always_false = {"is_even": lambda n: False}
    cases = [{"call": "is_even(4)", "expected": True, "points": 2, "hint": "", "requires": ["is_even(5)"]},
             {"call": "is_even(5)", "expected": False, "points": 2, "hint": "", "requires": ["is_even(4)"]}]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        runtime.run_checks(cases, namespace=always_false)
    text = printed.getvalue()
    assert "✗ FAIL  is_even(4)" in text
    assert "✗ WITHHELD  is_even(5)   (2 pt)\n    withheld: right answer, but this check counts only when is_even(4) " \
           "also passes" in text
    assert text.rstrip().endswith("0 / 4 points from these public checks")
    # A required check of another cell is written out with its expected value, and judged by it.
    right = {"is_even": lambda n: n % 2 == 0, "half": lambda n: n // 2}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        runtime.run_checks([{"call": "half(4)", "expected": 2, "points": 1, "hint": "",
                             "requires": [{"call": "is_even(4)", "expected": True}]}], namespace=right)
    assert "✓ pass  half(4)" in printed.getvalue()


def test_the_notebook_s_check_cells_carry_each_requirement():
    notebook = nbformat.read(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", as_version=4)
    checks_of = {c.id: c.source for c in notebook.cells if c.cell_type == "code"}
    assert "\"requires\": ['is_solved(list(range(15)))']," in checks_of["check-is-solved"]
    assert "\"requires\": ['count_solutions(2)', 'count_solutions(4)']," in checks_of["check-count-solutions"]


def test_other_engines_withhold_the_same_points():
    scope = {"__name__": checks.MODULE}
    exec(compile(checks.module_source(), checks.FILENAME, "exec"), scope)  # noqa: S102
    space = {"is_even": lambda n: False}
    assert scope["check"]("is_even(4)", False, namespace=space) is None
    with pytest.raises(AssertionError, match=r"is_even\(5\): withheld: right answer, but this check counts only "
                                             r"when is_even\(4\) also passes"):
        scope["check"]("is_even(5)", False, namespace=space, requires=[("is_even(4)", True, "equal", {},
                                                                         "is_even(4)")])
    assignment = load_assignment(load_course(ROOT), "n-queens")
    case = next(c for c in assignment.cases if c.name == "is_solved(list(range(15)))")
    call = checks.check_call(assignment, case, False)
    assert "requires=[('is_solved([0, 2, 4, 6, 1, 3, 5])', True, 'equal', {}, " \
           "'is_solved([0, 2, 4, 6, 1, 3, 5])', 0.25), ('is_solved([0, 2, 5, 7, 9, 4, 8, 1, 3, 6])', True, 'equal', " \
           "{}, 'hidden: is_solved accepts a solution of another size', 0.25), " in call
    # The copy students read (otter's public tests) leaves the hidden twins out; the grader's has them.
    public = checks.check_call(assignment, case, False, hidden=False)
    assert "requires=[('is_solved([0, 2, 4, 6, 1, 3, 5])', True, 'equal', {}, " \
           "'is_solved([0, 2, 4, 6, 1, 3, 5])', 0.25)]" in public and "9, 4, 8" not in public
