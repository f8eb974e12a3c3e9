"""The plain n-queens solvers against OEIS A000170."""

import pytest

from nqueens import backtracking, bitmask, board, parallel

# OEIS A000170: solutions on an n x n board, n = 1, 2, ...
A000170 = dict(enumerate([1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596], start=1))


# The largest boards cost about a second of CPU each: the slow tier's (make test), the rest every time.
@pytest.mark.parametrize("n", [*range(1, 13), pytest.param(13, marks=pytest.mark.slow)])
def test_bitmask_count_matches_oeis(n):
    assert bitmask.count(n) == A000170[n]


# n = 14 takes seconds of CPU (365,596 solutions): the slow tier's (make test), the rest every time.
@pytest.mark.parametrize("n", [1, 5, 11, 12, *(pytest.param(n, marks=pytest.mark.slow) for n in (13, 14))])
def test_parallel_count_matches_oeis(n):
    assert parallel.count(n, workers=2) == A000170[n]


def test_count_rejects_boards_it_cannot_handle():
    with pytest.raises(ValueError):
        bitmask.count(0)
    with pytest.raises(ValueError):
        parallel.count(bitmask.MAX_COUNT_N + 1)


@pytest.mark.parametrize("n", range(4, 12))
def test_mirror_halved_subproblems_weigh_up_to_all_second_columns(n):
    # Each subproblem stands for itself and its mirror image.
    every_pair = sum(1 for first in range(n) for second in range(n) if abs(first - second) > 1)
    assert sum(weight for weight, *_ in bitmask.subproblems(n)) == every_pair


@pytest.mark.parametrize("n", range(1, 10))
def test_both_generators_yield_the_same_valid_solutions(n):
    found = list(backtracking.solutions(n))
    assert found == list(bitmask.solutions(n))
    assert len(found) == A000170[n]
    assert len({tuple(pos) for pos in found}) == len(found)
    assert all(board.is_solution(pos) for pos in found)


@pytest.mark.slow
def test_first_solutions():
    assert backtracking.first_solution(8) == bitmask.first_solution(8) == [0, 4, 7, 5, 2, 6, 1, 3]
    assert backtracking.first_solution(3) is None
    assert bitmask.first_solution(29) is not None


def test_compiled_counter_matches_oeis():
    pytest.importorskip("numba")
    from nqueens import compiled

    assert [compiled.count(n) for n in range(1, 15)] == list(A000170.values())
