"""bitwise-queens: the encoding, the aliasing trap, and the speed case.

The reference notebook's code cells (demos left out) run here in-process to
check the facts its text states; the speed case is checked through the real
grader, against a hand-in that merely wraps brute force.
"""

import itertools

import nbformat
import pytest

from autograder.core.assignment import load_assignment
from autograder.grade.handin import grade
from conftest import ROOT, reference_namespace

SPEED_CASE = "count_fast(9)"
SUBMISSIONS = ROOT / "examples" / "bitwise-queens" / "submissions"


@pytest.fixture(scope="module")
def bitwise(course):
    return load_assignment(course, "bitwise-queens")


@pytest.fixture(scope="module")
def ref(bitwise):
    return reference_namespace(bitwise)


def test_binary_strings_as_the_text_shows():
    assert (f"{9:b}", f"{2177:b}", "9:b") == ("1001", "100010000001", "9:b")
    assert (3 | 5, 3 & 5, 3 ^ 5, 3 << 2, 5 >> 1, ~3, 12 & -12) == (7, 1, 6, 12, 2, -4, 4)


def test_square_bits_follows_the_layout(ref):
    square_bits, rowuses = ref["square_bits"], ref["rowuses"]
    assert rowuses(4, 0) == [2177, 4162, 8228, 16408]  # the value CPython's Queens class gives
    for n in range(1, 9):
        for i, j in itertools.product(range(n), repeat=2):
            bits = square_bits(n, i, j)
            assert bits == (1 << j) | (1 << (2 * n - 1 + i - j)) | (1 << (3 * n - 1 + i + j))
            assert bin(bits).count("1") == 3 and bits < 1 << (5 * n - 2)


def test_two_squares_attack_exactly_when_their_bits_meet(ref):
    n, square_bits = 6, ref["square_bits"]
    for (i, j), (k, l) in itertools.combinations(itertools.product(range(n), repeat=2), 2):
        if i != k:
            attack = j == l or abs(i - k) == abs(j - l)
            assert (square_bits(n, i, j) & square_bits(n, k, l) != 0) is attack


def test_the_generator_yields_fresh_lists_in_increasing_order(ref):
    for n in range(1, 9):
        solutions = list(ref["queens_solutions"](n))
        brute = [list(p) for p in itertools.permutations(range(n)) if ref["is_solution"](p)]
        assert solutions == brute
        assert len({id(s) for s in solutions}) == len(solutions)
    assert len(list(ref["queens_solutions"](8))) == 92


def test_the_seeds_simple_conjoin_really_aliases():
    # What the notebook says of CPython's Queens with simple_conjoin.
    def simple_conjoin(gs):
        values = [None] * len(gs)

        def gen(i):
            if i >= len(gs):
                yield values
            else:
                for values[i] in gs[i]():
                    yield from gen(i + 1)

        yield from gen(0)

    n, used = 4, [0]

    def rowgen_for(i):
        uses = [(1 << j) | (1 << (n + i - j + n - 1)) | (1 << (n + 2 * n - 1 + i + j)) for j in range(n)]

        def rowgen():
            for j in range(n):
                if uses[j] & used[0] == 0:
                    used[0] |= uses[j]
                    yield j
                    used[0] &= ~uses[j]
        return rowgen

    kept = list(simple_conjoin([rowgen_for(i) for i in range(n)]))
    assert kept == [[3, 1, 2, 1], [3, 1, 2, 1]] and kept[0] is kept[1]


def test_count_fast_agrees_with_brute_force(ref):
    assert [ref["count_fast"](n) for n in range(9)] == [ref["brute_force_count"](n) for n in range(9)]
    assert [ref["count_fast"](n) for n in (9, 10, 11)] == [352, 724, 2680]


def test_the_speed_case_is_timed_against_given_brute_force(bitwise):
    [case] = [c for c in bitwise.cases if c.compare == "faster_than"]
    assert case.name == SPEED_CASE
    assert case.options["baseline"] == "brute_force_count(9)"
    # The baseline is given code, the same in every student notebook (no stub in it).
    student = nbformat.read(bitwise.student_path, as_version=4)
    [given] = [c for c in student.cells if c.cell_type == "code" and "def brute_force_count(" in c.source]
    assert "YOUR CODE" not in given.source


@pytest.mark.alone   # (it compares wall-clock times: under 3 test workers on 2 cores a ratio of 46 was seen, not 50)
def test_a_brute_force_wrapper_fails_the_speed_case_and_the_reference_passes_by_far(bitwise):
    expected = bitwise.load_expected()
    [case] = [c for c in bitwise.cases if c.compare == "faster_than"]
    wrapper = grade(bitwise, expected, "dave", SUBMISSIONS / "dave.ipynb")  # count_fast = brute_force_count
    reference = grade(bitwise, expected, "reference", bitwise.solution_path)
    slow = next(c for c in wrapper.cases if c.name == SPEED_CASE)
    fast = next(c for c in reference.cases if c.name == SPEED_CASE)
    assert slow.status == "failed" and "times faster than brute_force_count(9)" in slow.message
    assert slow.received == "352", "the wrapper's answer is right: only its speed fails"
    assert fast.status == "passed"
    # The wrapper takes about as long as the baseline; the reference must beat the
    # bar with room to spare (at least 5 times the speedup asked for).
    assert fast.seconds * case.options["speedup"] * 5 <= slow.seconds
    assert slow.seconds < 3.0, "the timed calls stay short (about 0.4 s here)"
