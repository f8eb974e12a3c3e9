"""Each failure says what really happened and one thing to do (issue 41, items 1, 4 and 5).

A missing module is named, with whether Colab has it and what the course offers; exit()/quit(), breakpoint()
and input() say that Colab stops there or that they wait for a person; an error raised inside Python's standard
library is named as such, never blamed on a function it did not come from.  The hand-ins are saved as Colab saves
them (tests/colab_handins.py) and graded by the real grader; the words are read on the pages it writes.
"""

import re

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.core import colab
from autograder.core.folder_names import safe_name
from autograder.feedback import explain
from colab_handins import colab_notebook
from conftest import ROOT

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

COUNT_WITH_STATISTICS = ("count-solutions", '''import statistics


def count_solutions(n):
    \'\'\'The number of solutions for an n x n board.\'\'\'
    return round(statistics.mean([]) * 0) + len(get_solutions(n))''')


def test_a_missing_module_is_named_with_whether_colab_has_it_and_the_course_s_list():
    offered = ", ".join(colab.offered_imports())
    torch = explain.error_words("ModuleNotFoundError: No module named 'torch'")
    assert "`torch`" in torch and "Colab has it" in torch and colab.COLAB_AS_OF in torch and offered in torch
    assert colab.LEFT_OUT["torch"] in torch                                 # and why the course left it out
    nowhere = explain.error_words("ModuleNotFoundError: No module named 'nqueens_helpers'")
    assert "neither Colab" in nowhere and "hand it in beside the notebook" in nowhere and offered in nowhere
    sub = explain.error_words("ModuleNotFoundError: No module named 'scipy.spatial.nothing'")
    assert "`scipy` does not have" in sub
    for words in (torch, nowhere, sub):
        assert "numpy and sympy." not in words     # the list it gave before, out of date
    assert {"scipy", "numba", "networkx"} <= set(colab.offered_imports())


def _grade_and_feedback(tmp_path, handins):
    folder = tmp_path / "class"
    folder.mkdir()
    for name, text in handins.items():
        (folder / f"{name}.ipynb").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    for command in (["grade", "--assignment", "n-queens", "--no-roster", "--out", str(out), str(folder)],
                    ["feedback", "--out", str(out)]):
        result = CliRunner().invoke(main, ["--course", str(ROOT), *command])
        assert result.exit_code == 0, result.output
    return {name: (out / "feedback" / safe_name(name) / "feedback.md").read_text(encoding="utf-8")
            for name in handins}


@pytest.mark.slow
def test_exit_breakpoint_input_a_missing_module_and_a_standard_library_error_each_say_what_happened(tmp_path):
    pages = _grade_and_feedback(tmp_path, {
        "exits": colab_notebook("n-queens", added=["exit()"]),
        "quits": colab_notebook("n-queens", {"get-n": "def get_n(pos):\n    quit()"}),
        "debugs": colab_notebook("n-queens", added=["breakpoint()"]),
        "asks": colab_notebook("n-queens", added=["n = int(input('n? '))"]),
        "torch": colab_notebook("n-queens", added=["import torch"]),
        "statistics": colab_notebook("n-queens", dict([COUNT_WITH_STATISTICS])),
    })
    # exit() in a cell: Colab's Run all stops there; the grader went on (alice's functions all pass).
    assert "ask_exit" not in pages["exits"] and "GradingShell" not in pages["exits"]
    assert "Run all stops at that line" in pages["exits"] and "Remove the call" in pages["exits"]
    # quit() inside a tested function: that function's checks say so.
    assert "ask_exit" not in pages["quits"] and "Run all stops at that line" in pages["quits"]
    # breakpoint() and input() wait for a person.
    for name in ("debugs", "asks"):
        assert "waits for a person to type something" in pages[name], pages[name]
        assert "BdbQuit" not in pages[name] and "while running this check" not in pages[name]
    # A module Colab has and the course does not.
    assert "Colab has it" in pages["torch"] and "numpy and sympy." not in pages["torch"]
    # An error raised inside the standard library: named as such, and is_solved (which passes) is not blamed.
    statistics = pages["statistics"]
    assert "raised inside Python's standard library (statistics.py), called by your `count_solutions`" in statistics
    blamed = re.findall(r"hint: [^\n]*is_solved", statistics, re.IGNORECASE)
    assert blamed == [] and "a wrong count means is_solved" not in statistics, statistics
