"""no-three-in-line: the reference's answers, cross-checked by independent methods.

The counts and solutions in the generated expected.json come from the
reference notebook's backtracking with its cross-product test.  Here they are
checked against
  * a count written in this file: plain n-queens backtracking, then a filter
    that groups the queens by the lines through them (no cross product);
  * the course's solver library, nqueens.three_in_line (another backtracking);
  * the SAT encoding in nqueens.sat, solved by a SAT solver from PyPI (python-sat).
"""

import importlib
import itertools
from math import gcd

import nbformat
import pytest

from autograder.core.assignment import load_assignment


@pytest.fixture(scope="module")
def lines_assignment(course):
    return load_assignment(course, "no-three-in-line")


@pytest.fixture(scope="module")
def expected(lines_assignment):
    return lines_assignment.load_expected()


def answers(assignment, expected, function):
    """{n: expected value} for the cases `function(n)`."""
    return {c.call.args[0]: expected[c.name] for c in assignment.cases
            if c.function == function and len(c.call.args) == 1}


@pytest.fixture(scope="module")
def reference_counts(lines_assignment, expected):
    """Every count the expected values pin down: counted, listed, or 'no solution'."""
    counts = dict(answers(lines_assignment, expected, "count_solutions"))
    counts.update({n: len(v) for n, v in answers(lines_assignment, expected, "solutions").items()})
    counts.update({n: 0 for n, v in answers(lines_assignment, expected, "first_solution").items() if v is None})
    return counts


# --- an independent count: queens first, then lines --------------------------------

def queen_solutions(n):
    """Every n-queens solution pos (pos[c] = row of column c's queen), in increasing order."""
    found, pos = [], []

    def place():
        if len(pos) == n:
            found.append(list(pos))
            return
        col = len(pos)
        for row in range(n):
            if all(row != r and abs(row - r) != col - c for c, r in enumerate(pos)):
                pos.append(row)
                place()
                pos.pop()

    place()
    return found


def has_three_in_line(pos):
    """Group the queens by the line through each pair: a line holding three queens shows up."""
    points = [(row, col) for col, row in enumerate(pos)]
    lines = {}
    for (r1, c1), (r2, c2) in itertools.combinations(points, 2):
        dr, dc = r2 - r1, c2 - c1
        g = gcd(dr, dc)
        dr, dc = dr // g, dc // g
        if dc < 0 or (dc == 0 and dr < 0):
            dr, dc = -dr, -dc
        # (dr, dc) is the line's direction; dc * r - dr * c is the same at all its points
        key = (dr, dc, dc * r1 - dr * c1)
        lines.setdefault(key, set()).update({(r1, c1), (r2, c2)})
    return any(len(on_line) >= 3 for on_line in lines.values())


def filtered_solutions(n):
    return [pos for pos in queen_solutions(n) if not has_three_in_line(pos)]


def test_the_independent_filter_knows_a_line_when_it_sees_one():
    assert has_three_in_line([0, 2, 4, 1, 3])            # (0, 0), (2, 1), (4, 2)
    assert has_three_in_line([0, 3, 6, 1])               # (0, 0), (3, 1), (6, 2)
    assert not has_three_in_line([1, 3, 0, 2])
    assert not has_three_in_line([2, 5, 7, 1, 3, 0, 6, 4])
    assert [len(queen_solutions(n)) for n in range(1, 9)] == [1, 0, 0, 2, 10, 4, 40, 92]


def test_reference_counts_match_an_independent_count(reference_counts):
    assert set(reference_counts) >= {4, 6, 8, 9, 10}
    for n, count in reference_counts.items():
        assert len(filtered_solutions(n)) == count, n


def test_reference_solutions_and_first_solutions_match(lines_assignment, expected):
    for n, listed in answers(lines_assignment, expected, "solutions").items():
        assert listed == filtered_solutions(n)
    for n, first in answers(lines_assignment, expected, "first_solution").items():
        found = filtered_solutions(n)
        assert first == (found[0] if found else None), n


def test_the_solvers_board_is_a_solution_both_ways(lines_assignment, expected):
    eights = answers(lines_assignment, expected, "solutions")[8]
    assert [2, 4, 7, 3, 0, 6, 1, 5] in eights          # the nqueens command's board, column by column
    assert [4, 6, 0, 3, 1, 7, 5, 2] in eights          # the same board read row by row
    assert expected["is_valid([2, 5, 7, 1, 3, 0, 6, 4])"] is True


def test_the_notebook_shows_the_board_the_nqueens_command_prints(lines_assignment):
    from click.testing import CliRunner

    from nqueens.cli import main

    printed = CliRunner().invoke(main, ["solve", "8", "--no-three-in-line"]).output.strip()
    text = "\n".join(c.source for c in nbformat.read(lines_assignment.solution_path, as_version=4).cells
                     if c.cell_type == "markdown")
    assert f"```\n{printed}\n```" in text and "nqueens solve 8 --no-three-in-line" in text


def test_the_notebook_text_counts_are_the_references(lines_assignment, reference_counts):
    text = "\n".join(c.source for c in nbformat.read(lines_assignment.solution_path, as_version=4).cells
                     if c.cell_type == "markdown")
    assert reference_counts[8] == 8 and "only 8 of the 92 solutions" in text
    assert all(reference_counts.get(n, 0) == 0 for n in (5, 6, 7)) and "$n = 5$, $6$ and $7$ none" in text


# --- the course's solver library -----------------------------------------------------

def solver_module(name):
    """Import nqueens.<name>; skip (saying why) only if it, or its SAT dependency, is not installed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name in ("nqueens", name, "pysat"):
            pytest.skip(f"{name} is not importable ({error}): the cross-check needs the nqueens "
                        "package and python-sat installed (`make install`)")
        raise


def test_reference_counts_match_the_backtracking_library(reference_counts):
    three_in_line = solver_module("nqueens.three_in_line")
    for n, count in reference_counts.items():
        assert three_in_line.count(n) == count, n


def test_reference_counts_match_the_sat_encoding(reference_counts):
    sat = solver_module("nqueens.sat")
    for n, count in reference_counts.items():
        assert sat.count(n, no_three_in_line=True) == count, n


def test_reference_solutions_match_the_sat_encoding(lines_assignment, expected):
    sat = solver_module("nqueens.sat")
    for n, listed in answers(lines_assignment, expected, "solutions").items():
        assert sorted(sat.solutions(n, no_three_in_line=True)) == listed
