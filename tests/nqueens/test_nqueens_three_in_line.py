"""No-three-in-line queens: backtracking and the SAT encoding agree."""

import pytest

from nqueens import backtracking, board, sat, three_in_line

# n = 12 costs over a second of CPU per method: the slow tier's (make test).
QUICK = [*range(1, 12), pytest.param(12, marks=pytest.mark.slow)]


def test_board_helpers_on_known_positions():
    assert board.is_solution([2, 5, 7, 1, 3, 0, 6, 4])
    assert not board.has_three_in_line([2, 5, 7, 1, 3, 0, 6, 4])
    assert not board.is_solution([0, 1, 2])
    assert board.has_three_in_line([0, 1, 2])  # the main diagonal
    assert board.has_three_in_line([0, 2, 4, 1, 3])  # slope 2: (0, 0), (1, 2), (2, 4)
    # 4 x 4: the two queen solutions have no three queens in line.
    assert not board.has_three_in_line([1, 3, 0, 2])
    assert not board.has_three_in_line([2, 0, 3, 1])


@pytest.mark.parametrize("n", QUICK)
def test_backtracking_count_matches_the_table(n):
    assert three_in_line.count(n) == three_in_line.KNOWN_COUNTS[n]


@pytest.mark.parametrize("n", QUICK)
def test_sat_count_matches_the_table(n):
    assert sat.count(n, no_three_in_line=True) == three_in_line.KNOWN_COUNTS[n]


@pytest.mark.parametrize("n", range(1, 11))
def test_both_methods_find_the_same_solutions_as_filtering_every_queen_solution(n):
    filtered = [pos for pos in backtracking.solutions(n) if not board.has_three_in_line(pos)]
    assert list(three_in_line.solutions(n)) == filtered
    assert sorted(sat.solutions(n, no_three_in_line=True)) == filtered


def test_known_facts():
    assert three_in_line.KNOWN_COUNTS[4] == 2
    assert [three_in_line.first_solution(n) for n in (2, 3, 5, 6, 7)] == [None] * 5
    assert [2, 5, 7, 1, 3, 0, 6, 4] in list(three_in_line.solutions(8))


@pytest.mark.parametrize("n", [16, 18])
def test_first_solution_of_larger_boards_is_valid(n):
    for pos in (three_in_line.first_solution(n), sat.first_solution(n, no_three_in_line=True)):
        assert board.is_solution(pos) and not board.has_three_in_line(pos)
