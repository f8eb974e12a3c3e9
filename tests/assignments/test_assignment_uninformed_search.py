"""uninformed-search: the facts the notebook teaches and the stack order it asks for.

The reference notebook's code cells (demos left out) run here in-process, so
its functions can be checked directly against the numbers in the text, and
the stack discipline the notebook states is re-implemented independently.
"""

import itertools

import pytest

from autograder.core.assignment import load_assignment
from autograder.grade.handin import grade
from conftest import ROOT, reference_namespace

# The orders the original course's checks expect (as printed in its notebook).
ORDER_5 = [[0, 3, 1, 4, 2], [0, 2, 4, 1, 3], [1, 4, 2, 0, 3], [1, 3, 0, 2, 4], [2, 4, 1, 3, 0],
           [2, 0, 3, 1, 4], [3, 1, 4, 2, 0], [3, 0, 2, 4, 1], [4, 2, 0, 3, 1], [4, 1, 3, 0, 2]]
ORDER_6 = [[1, 3, 5, 0, 2, 4], [2, 5, 1, 4, 0, 3], [3, 0, 4, 1, 5, 2], [4, 2, 0, 5, 3, 1]]


@pytest.fixture(scope="module")
def search(course):
    return load_assignment(course, "uninformed-search")


@pytest.fixture(scope="module")
def ref(search):
    return reference_namespace(search)


def attack(r1, c1, r2, c2):
    return r1 == r2 or c1 == c2 or abs(r1 - r2) == abs(c1 - c2)


def stack_order(n):
    """The discipline the notebook states, written independently of the reference."""
    def successors(board):
        row = len(board)
        return [board + [col] for col in range(n)
                if not any(attack(r, c, row, col) for r, c in enumerate(board))]

    stack, found = [[col] for col in range(n - 1, -1, -1)], []
    while stack:
        board = stack.pop()
        if len(board) == n:
            found.append(board)
        else:
            stack.extend(successors(board))
    return found


def test_the_search_space_sizes_of_the_text(ref):
    assert [ref["num_placements_all"](n) for n in range(7)] == [1, 1, 6, 84, 1820, 53130, 1947792]
    assert [ref["num_placements_one_per_row"](n) for n in range(7)] == [1, 1, 4, 27, 256, 3125, 46656]
    assert (ref["num_placements_all"](8), ref["num_placements_one_per_row"](8)) == (4426165368, 16777216)
    assert all(type(ref[f](n)) is int for f in ("num_placements_all", "num_placements_one_per_row")
               for n in range(9))


def test_pair_checks_compare_rows_and_columns(ref):
    assert ref["diag_okay"](3, 0, 1, 2) is False and ref["diag_okay"](1, 1, 3, 3) is False
    assert ref["cross_okay"](1, 3, 4, 3) is False and ref["cross_okay"](2, 1, 2, 5) is False
    assert ref["move_allowed"](1, 4, 2, 5) is False and ref["move_allowed"](1, 3, 2, 7) is True
    for r1, c1, r2, c2 in itertools.product(range(4), repeat=4):
        if (r1, c1) != (r2, c2):
            assert ref["move_allowed"](r1, c1, r2, c2) is (not attack(r1, c1, r2, c2))


def test_partial_boards_and_one_step_successors(ref):
    valid, helper = ref["n_queens_valid"], ref["n_queens_helper"]
    assert [valid(b) for b in ([0, 0], [0, 2], [0, 1], [0, 3, 1], [])] == [False, True, False, True, True]
    assert helper([1, 3, 5, 0], 7) == [[1, 3, 5, 0, 2], [1, 3, 5, 0, 4]]
    assert helper([3, 0, 4], 7) == [[3, 0, 4, 1]]
    assert helper([], 4) == [[0], [1], [2], [3]]
    assert helper([0, 2], 4) == [] and helper([1, 3, 0, 2], 4) == []
    board = [1, 3]
    helper(board, 4)
    assert board == [1, 3], "the helper leaves its argument alone"


def test_the_stated_stack_discipline_gives_the_expected_order(ref, search):
    assert stack_order(5) == ORDER_5 and stack_order(6) == ORDER_6
    for n in range(1, 9):
        assert ref["n_queens_solutions"](n) == stack_order(n)
    assert len(stack_order(8)) == 92
    expected = search.load_expected()
    assert expected["n_queens_solutions(5)"] == ORDER_5
    assert expected["n_queens_solutions(6)"] == ORDER_6
    assert len(expected["n_queens_solutions(8)"]) == 92


def test_other_orders_differ_so_the_order_cases_mean_something():
    increasing = [list(p) for p in itertools.permutations(range(5))
                  if not any(attack(i, p[i], j, p[j]) for i, j in itertools.combinations(range(5), 2))]
    assert increasing != ORDER_5 and sorted(increasing) == sorted(ORDER_5)
    assert sorted(stack_order(6)) == ORDER_6  # n = 6 is the one size where the two orders agree


def test_a_search_in_another_order_keeps_the_any_order_credit(search):
    # dave's stack starts from the empty board: right solutions, reversed order.
    result = grade(search, search.load_expected(), "dave",
                   ROOT / "examples" / "uninformed-search" / "submissions" / "dave.ipynb")
    status = {c.name: c.status for c in result.cases}
    assert status["n_queens_solutions(8)"] == "passed"
    assert status["n_queens_solutions(5)"] == status["n_queens_solutions(6)"] == "failed"
