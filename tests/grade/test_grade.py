"""`autograder grade` on the example class, the reference and the untouched notebook."""

import csv
import shutil

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.grade.handin import grade
from browser.classes import graded_example_class
from conftest import ROOT, without_colab_badge

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)


EXAMPLES = ROOT / "examples" / "n-queens"


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """`autograder grade --assignment n-queens --out OUT examples/n-queens/submissions`, run once per test
    session for every test that reads the graded example class (browser/classes.py)."""
    return graded_example_class(tmp_path_factory.mktemp("grades"))


def test_example_class_gets_its_expected_scores(graded_class):
    rows = {r["student"]: r for r in read_csv(graded_class / "grades.csv")}
    expected = read_csv(EXAMPLES / "expected_scores.csv")
    assert len(expected) >= 12
    assert sorted(rows) == sorted(e["student"] for e in expected)
    for e in expected:
        row = rows[e["student"]]
        assert (float(row["score"]), row["status"]) == (float(e["score"]), e["status"]), e["student"]
        assert row["assignment"] == "n-queens" and row["max_score"] == "5"


def test_grades_csv_has_the_contract_columns(graded_class):
    with open(graded_class / "grades.csv", encoding="utf-8") as handle:
        header = handle.readline().strip().split(",")
    assert header[:5] == ["student", "assignment", "score", "max_score", "status"]


def test_reference_scores_full_marks(nqueens, nqueens_expected):
    result = grade(nqueens, nqueens_expected, "reference", nqueens.solution_path)
    assert (result.score, result.status) == (5.0, "graded")
    assert all(c.status == "passed" for c in result.cases)


def test_untouched_student_notebook_scores_zero(nqueens, nqueens_expected):
    result = grade(nqueens, nqueens_expected, "nobody", nqueens.student_path)
    assert result.score == 0
    assert {c.status for c in result.cases} == {"error"}
    assert all("NotImplementedError" in c.message for c in result.cases)


def test_the_untouched_example_is_the_current_student_notebook(nqueens):
    # judy hands in what she was given; if the student notebook changes, regenerate
    # the examples with examples/n-queens/make_submissions.py.
    assert without_colab_badge(EXAMPLES / "submissions" / "judy.ipynb") == without_colab_badge(nqueens.student_path)


def test_a_renamed_file_grades_as_its_new_name(tmp_path, nqueens):
    shutil.copy(EXAMPLES / "submissions" / "alice.ipynb", tmp_path / "Copy of n-queens.ipynb")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", str(out), str(tmp_path / "Copy of n-queens.ipynb")])
    assert result.exit_code == 0, result.output
    [row] = read_csv(out / "grades.csv")
    assert (row["student"], row["score"]) == ("Copy of n-queens", "5")


def test_missing_path_is_a_one_line_error(tmp_path):
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", str(tmp_path), str(tmp_path / "nope.ipynb")])
    assert result.exit_code == 1
    assert result.output.strip().endswith("nope.ipynb: no such file or folder")


def test_after_the_first_ctrl_c_the_next_ones_cannot_cut_the_cleanup_short():
    """Under load the sandbox takes a moment to close: an impatient second Ctrl-C then must change nothing
    (it used to interrupt the close, leaving the sandbox folder and its zygotes behind)."""
    import os
    import signal
    import time

    from autograder.grade.class_run import _stop_at_the_first_interrupt
    # As a terminal starts the grader, whatever started pytest (a background job starts it with SIGINT ignored).
    launched = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        previous = _stop_at_the_first_interrupt()
        try:
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)            # Python runs the handler before the next line
                time.sleep(1)
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)                # the second one: nothing happens
        finally:
            signal.signal(signal.SIGINT, previous)
        assert previous is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, launched)


def test_a_grader_started_with_sigint_ignored_leaves_it_ignored():
    """`nohup`, or a script's background job: SIGINT stays ignored for the whole run, and nothing is put back."""
    import signal

    from autograder.grade.class_run import _stop_at_the_first_interrupt
    launched = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert _stop_at_the_first_interrupt() is None
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, launched)
