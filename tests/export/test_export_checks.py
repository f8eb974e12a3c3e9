"""autograder_checks.py: our comparison rules as a stand-alone module, and the exports on a made-up course."""

import nbformat
import pytest
from click.testing import CliRunner
from nbformat.v4 import new_code_cell

from autograder.cli.main import main
from autograder.export import checks
from autograder.cli.export import export
from minicourse import cell, make_course


@pytest.fixture(scope="module")
def module():
    scope = {"__name__": checks.MODULE}
    exec(compile(checks.module_source(), checks.FILENAME, "exec"), scope)  # noqa: S102
    return scope


def fails(module, *args, **kwargs):
    with pytest.raises(AssertionError) as caught:
        module["check"](*args, **kwargs)
    return str(caught.value)


def test_values_are_judged_by_our_rules(module):
    import numpy as np

    space = {"yes": lambda pos: np.bool_(len(pos) > 0), "one": lambda pos: 1, "same": lambda x: x}
    assert module["check"]("yes(np.array([1, 2]))", True, namespace=space) is None
    assert module["check"]("same((1, 2))", [1, 2], namespace=space) is None
    assert "expected True, received 1" in fails(module, "one([1])", True, namespace=space)
    assert module["check"]("same([3, 1, 2])", [1, 2, 3], how="same_items", namespace=space) is None
    assert module["check"]("same(0.3)", 0.3, how="approx", options={"rel_tol": 1e-9},
                           namespace={"same": lambda x: 0.1 + 0.2}) is None


def test_printing_is_swallowed_and_time_limits_hold(module, capsys):
    import sys

    def chatty(x):
        print("hello")
        print("oops", file=sys.stderr)
        return x

    def forever(x):
        while True:
            pass

    assert module["check"]("chatty(2)", 2, namespace={"chatty": chatty}) is None
    assert capsys.readouterr() == ("", "")
    assert "no result within 0.2 s of CPU time" in fails(module, "forever(1)", 1, timeout=0.2,
                                                         namespace={"forever": forever})


def test_a_case_s_limit_is_cpu_time_and_a_sleeper_is_stopped_when_it_has_waited_long(module):
    """As ours judges a case: a grading machine busy with other work (CI's, Gradescope's) slows a case without
    timing it out; the stress run of this stop saw otter fail grace's count_solutions(10) by the wall clock."""
    import time

    def nap(seconds):
        time.sleep(seconds)
        return 1

    started = time.monotonic()
    assert module["check"]("nap(0.5)", 1, timeout=0.2, namespace={"nap": nap}) is None   # no CPU spent
    message = fails(module, "nap(30)", 1, timeout=0.2, namespace={"nap": nap})
    assert "it waited, computing next to nothing, for 1.4 s" in message
    assert time.monotonic() - started < 10


def test_errors_and_missing_functions_fail_with_a_reason(module):
    def broken(x):
        raise ValueError("nope")

    assert "ValueError: nope" in fails(module, "broken(1)", 1, namespace={"broken": broken})
    assert "f is not defined" in fails(module, "f(1)", 1, namespace={})
    message = fails(module, "g(1)", 2, label="hidden: g doubles", hint="think", namespace={"g": lambda x: x})
    assert message.startswith("hidden: g doubles: expected 2, received 1")


def test_faster_than_times_against_the_baseline(module):
    def slow(n):
        return sum(i for i in range(n) for _ in range(20))

    def slower(n):
        return [slow(n) for _ in range(4)][0] // 20

    space = {"fast": lambda n: sum(range(n)), "slow": slow}
    # The fastest of three runs of each, and a slow answer four times the baseline's work: one run each, with the
    # slow answer doing the baseline's own work, passed once beside other tests (a baseline slowed 2x by the load).
    options = {"baseline": "slow(100000)", "speedup": 2, "repeat": 3}
    assert module["check"]("fast(100000)", sum(range(100000)), how="faster_than", options=options,
                           namespace={**space, "fast": lambda n: n * (n - 1) // 2}) is None
    assert "too slow: right answer in" in fails(
        module, "fast(100000)", sum(range(100000)), how="faster_than", options=options,
        namespace={**space, "fast": slower})


FAST = """
def fast_sum(n):
    ### BEGIN SOLUTION
    return n * (n - 1) // 2
    ### END SOLUTION
"""

SLOW = """
def slow_sum(n):
    return sum(i for i in range(n) for _ in range(20))
"""

CASES = """
[[case]]
call = "fast_sum(10)"
points = 2
hint = "Gauss"

[[case]]
call = "fast_sum(3)"
points = 1
hidden = true
description = "a small n"

[[case]]
call = "fast_sum(100000)"
points = 2
compare = "faster_than"
options = { baseline = "slow_sum(100000)", speedup = 2 }
hint = "No loop needed."
"""


def test_the_exports_know_nothing_of_queens(tmp_path):
    (tmp_path / "course").mkdir()
    root = make_course(tmp_path / "course", [cell(new_code_cell, "slow", SLOW), cell(new_code_cell, "fast", FAST)],
                       CASES)
    result = CliRunner().invoke(main, ["--course", str(root), "build"])
    assert result.exit_code == 0, result.output
    runner = CliRunner()
    for tool, extra in (("otter", ["--no-zip"]), ("nbgrader", []), ("gradescope", [])):
        result = runner.invoke(export, ["--course", str(root), tool, "--assignment", "squares",
                                        "--to", str(tmp_path / tool), *extra])
        assert result.exit_code == 0, (tool, result.output)
    otter_test = (tmp_path / "otter" / "autograder" / "tests" / "fast_sum.py").read_text()
    assert "how='faster_than'" in otter_test and "'hidden': True" not in otter_test
    assert '"hidden": True' in otter_test
    public = (tmp_path / "otter" / "student" / "tests" / "fast_sum.py").read_text()
    assert "fast_sum(3)" not in public
    source = nbformat.read(tmp_path / "nbgrader" / "source" / "squares" / "squares.ipynb", as_version=4)
    grade_cells = [c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert [c.metadata["nbgrader"]["points"] for c in grade_cells] == [2.0, 2.0, 1.0]   # public first
    assert (tmp_path / "gradescope" / "squares-gradescope.zip").is_file()


def test_check_finds_the_functions_in_the_callers_globals(module):
    # as in a notebook cell or an otter doctest: no namespace given
    scope = {"autograder_checks_check": module["check"], "double": lambda x: 2 * x}
    exec("result = autograder_checks_check('double(21)', 42)", scope)  # noqa: S102
    assert scope["result"] is None
    with pytest.raises(AssertionError):
        exec("autograder_checks_check('double(1)', 3)", scope)  # noqa: S102


def test_every_case_s_limit_in_the_exports_is_ours_on_the_machine_that_grades(module, course):
    """The exports once gave every case the fixed `case_timeout` (1 s) where ours gives the rule's 0.25 s:
    ivan's brute force takes about 1.3 s for n = 7, so a faster CI machine saw otter pass a case ours fails."""
    from autograder.core import limits
    from autograder.core.assignment import load_assignment

    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        timing = limits.load_timing(assignment)
        limits.machine_ratio(timing)                 # measures this machine once (limits._ratio["now"])
        for slower in (1.0, 3.0):   # this machine, and one 3 times slower than the one that built the course
            # The same measure of the machine on both sides (each takes the fastest of 5 runs: noise apart).
            module["_machine"]["now"] = limits._ratio["now"] * slower
            exported = [module["case_limit"](checks.case_timeout(assignment, case)) for case in assignment.cases]
            ours = limits.case_limits(assignment, timing, max(1.0, limits._ratio["now"] * slower
                                                              / timing["calibration"]))
            assert exported == ours, (assignment_id, slower)
        assert any(isinstance(checks.case_timeout(assignment, c), tuple) for c in assignment.cases)
    module["_machine"].clear()


def test_a_required_case_runs_with_its_own_limit(module):
    """As in ours, where each case is run with its own limit and `requires` only looks its result up."""
    def slow(n):
        total = 0
        for i in range(n):
            total += i
        return total

    space = {"slow": slow, "quick": lambda: 1}
    required = ("slow(3_000_000)", slow(3_000_000), "equal", {}, "hidden: slow", 0.05)
    assert "withheld" in fails(module, "quick()", 1, timeout=30, requires=[required], namespace=space)
    assert module["check"]("quick()", 1, timeout=0.05, requires=[required[:5] + (30,)], namespace=space) is None
