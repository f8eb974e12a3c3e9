"""Fair comparison: the rules every assignment is graded by."""

import numpy as np
import pytest

from autograder.runtime import compare, run_checks, show, to_plain


def passes(expected, received, how="equal", **options):
    return compare(to_plain(expected), to_plain(received), how, options)


@pytest.mark.parametrize("expected, received", [
    (7, np.int64(7)),
    (7, np.int16(7)),
    (True, np.bool_(True)),
    (False, np.False_),
    ([1, 2], (1, 2)),
    ([1, 2], np.array([1, 2])),
    ([[0, 1], [1, 0]], ((0, 1), (1, 0))),
    (92, 92.0),
    (0.5, np.float32(0.5)),
    ("a\nb", np.str_("a\nb")),
    ({"a": 1}, {"a": np.int64(1)}),
    ({1, 2}, frozenset({2, 1})),
])
def test_values_count_as_the_python_value_they_equal(expected, received):
    assert passes(expected, received)


class ClaimsEquality:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class SneakyInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class SneakyStr(str):
    pass


@pytest.mark.parametrize("expected, received", [
    (True, ClaimsEquality()),
    (7, SneakyInt(3)),
    (7, SneakyInt(7)),            # even a correct value, when it comes as a custom subclass
    ("ab", SneakyStr("ab")),
    ([1, 2], [1, ClaimsEquality()]),
    (True, 1),                    # 1 == True in Python, but it is not the bool asked for
    (False, 0),
    (0, False),
    ("-|0|\n0|*|", "-|0|\n0|*|\n"),  # board strings match exactly
    ("-|0|\n0|*|", "-|0| \n0|*|"),
    ([1, 2], [2, 1]),
    (float("nan"), float("nan")),
])
def test_lookalikes_do_not_pass(expected, received):
    assert not passes(expected, received)


def test_same_items_ignores_order_only():
    assert passes([[0, 1], [1, 0]], [(1, 0), (0, 1)], "same_items")
    assert not passes([[0, 1], [1, 0]], [[1, 0], [1, 0]], "same_items")


def test_approx_uses_relative_tolerance():
    assert passes(1.0, 1.0 + 1e-12, "approx")
    assert not passes(1.0, 1.01, "approx")
    assert passes(1.0, 1.01, "approx", rel_tol=0.05)


@pytest.mark.slow
def test_oversized_values_are_refused_not_compared():
    huge = list(range(2_000_000))
    assert not passes(huge, huge)


def test_show_draws_boards_and_cuts_long_lists():
    assert show("-|0|\n0|*|") == "-|0|\n0|*|"
    assert show("abc") == "'abc'"
    assert show(list(range(100))).endswith("... (90 more)]")
    assert "not a plain value" in show(to_plain(ClaimsEquality()))


def test_run_checks_reports_instead_of_raising(capsys):
    def broken():
        raise NotImplementedError("replace this line with your code")

    run_checks([{"call": "broken()", "expected": 1, "points": 0.5, "hint": "try harder"},
                {"call": "len([1, 2])", "expected": 2, "points": 0.25, "hint": ""}],
               {"broken": broken})
    out = capsys.readouterr().out
    assert "✗ FAIL  broken()" in out
    assert "NotImplementedError: replace this line" in out
    assert "hint: try harder" in out
    assert "✓ pass  len([1, 2])" in out
    assert "0.25 / 0.75 points" in out


def test_a_generator_counts_as_the_list_it_yields():
    def copies():
        board = [0, 0]
        for row in range(2):
            board[0] = row
            yield list(board)

    def aliases():  # the CPython test-suite conjoin bug: the same list yielded each time
        board = [0, 0]
        for row in range(2):
            board[0] = row
            yield board

    assert to_plain(copies()) == [[0, 0], [1, 0]]
    assert to_plain(aliases()) == [[1, 0], [1, 0]]
    assert not passes([[0, 0], [1, 0]], aliases())
