"""A generator that yields its one working list makes list(...) lie."""

import importlib.util
from pathlib import Path

from nqueens import backtracking, bitmask, board, three_in_line

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "solvers.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("nqueens_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cpython_style_queens_yields_one_shared_list():
    queens = load_benchmark().Queens(6)
    collected = list(queens.solve())
    assert len(collected) == 4
    assert all(item is collected[0] for item in collected)  # 4 names for one list


def test_our_generators_yield_independent_copies():
    for solutions in (backtracking.solutions(6), bitmask.solutions(6), three_in_line.solutions(9)):
        collected = list(solutions)
        assert len({id(pos) for pos in collected}) == len(collected)
        assert len({tuple(pos) for pos in collected}) == len(collected)


def test_changing_a_yielded_solution_leaves_the_search_alone():
    found = backtracking.solutions(6)
    first = next(found)
    first[:] = [0] * 6
    assert all(board.is_solution(pos) for pos in found)
