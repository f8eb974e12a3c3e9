"""Wall time of n-queens counters side by side: ``python benchmarks/solvers.py``.

    .venv/bin/python benchmarks/solvers.py                   # n = 6 ... 14
    .venv/bin/python benchmarks/solvers.py --numba           # with the compiled counter (needs numba)
    .venv/bin/python benchmarks/solvers.py --sizes 6 8 --budget 2

Every method counts all solutions of an n x n board.  Times are medians of
several runs (fewer for slow ones); a method is skipped at a size where its
time, extrapolated from its two previous sizes, would exceed the budget.
A method that cannot run here (numba asked for and not installed) is an error,
never a column quietly left out.
"""

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from nqueens import parallel  # noqa: E402

SIZES = (6, 8, 10, 12, 14)
BUDGET_S = 20.0  # longest single run allowed


# CPython's Lib/test/test_generators.py solves n-queens with a generator per
# row, chained by conjoin(); re-implemented here as it stands there.
def conjoin(gs):
    """Every combination of one value from each generator; yields ONE shared list."""
    n = len(gs)
    values = [None] * n

    def gen(i):
        if i >= n:
            yield values
        elif (n - i) % 3:
            for values[i] in gs[i]():
                yield from gen(i + 1)
        else:
            yield from _gen3(i)

    def _gen3(i):  # three loop nests per recursion level
        g0, g1, g2 = gs[i : i + 3]
        if i + 3 >= n:
            for values[i] in g0():
                for values[i + 1] in g1():
                    for values[i + 2] in g2():
                        yield values
        else:
            for values[i] in g0():
                for values[i + 1] in g1():
                    for values[i + 2] in g2():
                        yield from _gen3(i + 3)

    yield from gen(0)


class Queens:
    """One generator per row, sharing a bit vector of used columns and diagonals."""

    def __init__(self, n: int):
        self.n = n
        self.rowgenerators = []
        for i in range(n):
            rowuses = [
                (1 << j)  # column
                | (1 << (n + i - j + n - 1))  # NW-SE diagonal
                | (1 << (n + 2 * n - 1 + i + j))  # NE-SW diagonal
                for j in range(n)
            ]

            def rowgen(rowuses=rowuses):
                for j in range(n):
                    uses = rowuses[j]
                    if uses & self.used == 0:
                        self.used |= uses
                        yield j
                        self.used &= ~uses

            self.rowgenerators.append(rowgen)

    def solve(self):
        """Yield the same list object, ``row2col``, for every solution."""
        self.used = 0
        yield from conjoin(self.rowgenerators)


def count_cpython_queens(n: int) -> int:
    return sum(1 for _ in Queens(n).solve())


def count_permutations(n: int) -> int:
    """Try every permutation; two queens share a diagonal when |i - j| = |p_i - p_j|."""
    pairs = list(itertools.combinations(range(n), 2))
    return sum(
        1
        for p in itertools.permutations(range(n))
        if all(abs(i - j) != abs(p[i] - p[j]) for i, j in pairs)
    )


def count_sympy_permutations(n: int) -> int:
    """The course notebook's method: sympy's permutations and a set per diagonal direction."""
    from sympy.utilities.iterables import multiset_permutations

    def is_solved(p):
        return len({i + q for i, q in enumerate(p)}) == n and len({i - q for i, q in enumerate(p)}) == n

    return sum(1 for p in multiset_permutations(list(range(n))) if is_solved(p))


def methods(numba=False) -> dict[str, Callable[[int], int]]:
    found = {
        "ours, 1 core": lambda n: parallel.count(n, workers=1),
        "ours, 2 cores": lambda n: parallel.count(n, workers=2),
        "CPython test Queens": count_cpython_queens,
        "itertools.permutations": count_permutations,
        "sympy multiset_permutations": count_sympy_permutations,     # sympy: one of the course's own pins
    }
    if numba:
        try:
            from nqueens import compiled
        except ImportError as error:
            raise SystemExit(f"--numba: the compiled counter cannot be imported ({error}); install numba, or "
                             "leave --numba out") from None
        started = time.perf_counter()
        compiled.count(8)  # compiles, or loads numba's on-disk cache
        print(f"numba: first call (compiling or loading its cache) took {time.perf_counter() - started:.2f} s")
        found["numba, 2 cores"] = compiled.count
    return found


def median_time(count: Callable[[int], int], n: int) -> float:
    times = []
    while True:
        started = time.perf_counter()
        count(n)
        times.append(time.perf_counter() - started)
        # Quick runs are noisy, so they get repeats; slow ones are steady.
        wanted = 7 if times[0] < 0.1 else 5 if times[0] < 1 else 3 if times[0] < 5 else 1
        if len(times) >= wanted:
            return statistics.median(times)


def estimate(measured: dict[int, float], n: int) -> float | None:
    """Extrapolate geometrically from the two largest sizes measured so far."""
    if len(measured) < 2:
        return None
    (n1, t1), (n2, t2) = sorted(measured.items())[-2:]
    growth = (t2 / t1) ** (1 / (n2 - n1))
    return t2 * growth ** (n - n2)


def format_time(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="board sizes, ascending")
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="longest single run allowed, in seconds")
    parser.add_argument("--numba", action="store_true", help="also numba's compiled counter (an error without it)")
    args = parser.parse_args(argv)
    found = methods(args.numba)
    answers = {name: count(8) for name, count in found.items()}
    assert set(answers.values()) == {92}, answers  # a time means nothing if the count is wrong
    times: dict[str, dict[int, float]] = {name: {} for name in found}
    cells: dict[str, list[str]] = {name: [] for name in found}
    for name, count in found.items():
        for n in args.sizes:
            guess = estimate(times[name], n)
            if guess is not None and guess > args.budget:
                cells[name].append(f"skipped (est. {guess:.0f} s)")
                continue
            times[name][n] = median_time(count, n)
            cells[name].append(format_time(times[name][n]))
            print(f"  {name}, n={n}: {cells[name][-1]}", file=sys.stderr, flush=True)

    width = max(map(len, found)) + 2
    header = "".join(f"{'n=' + str(n):>24}" for n in args.sizes)
    print("\nMedian wall time to count all solutions")
    print(" " * width + header)
    for name in found:
        print(name.ljust(width) + "".join(f"{cell:>24}" for cell in cells[name]))

    ours = times["ours, 2 cores"]
    print("\nTime of each method / time of ours on 2 cores (above 1: ours is faster)")
    print(" " * width + header)
    for name in found:
        if name != "ours, 2 cores":
            ratios = [f"{times[name][n] / ours[n]:.2f}x" if n in times[name] else "-" for n in args.sizes]
            print(name.ljust(width) + "".join(f"{r:>24}" for r in ratios))


if __name__ == "__main__":
    main()
