"""Nothing a hand-in controls is parsed in more than linear time in the grader's process (issue 38).

Each test feeds one reader an input of size n and of size 8n, built the way that made it quadratic before,
and compares the CPU each costs (the grader's and its children's, the best of a few tries): a linear reader
costs about 8 times as much, a quadratic one 64 times.  The bound, 24, leaves a factor of 3 for noise; no
test judges a wall-clock time.  What cannot be made linear (Python's own parser, on marimo files) runs in a
child with a CPU budget: the last test holds that budget.
"""

import json
import resource
import time

import pytest
import yaml

from autograder.intake import cells, marimo, receipts, zips
from autograder.intake.cells import SubmissionError, parse
from autograder.intake.downloads import _PlainYaml

GROWTH = 8
LINEAR = 3 * GROWTH          # quadratic would be 64


def _cpu():
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _cost(function, argument, at_least=0.02):
    """CPU seconds of one call: calls repeated until they cost `at_least`, the best of three such tries."""
    best = float("inf")
    for _ in range(3):
        calls, start = 0, _cpu()
        while True:
            function(argument)
            calls += 1
            spent = _cpu() - start
            if spent >= at_least:
                break
        best = min(best, spent / calls)
    return best


def growth(function, make, n):
    """How much more a call on an input of 8n costs than on one of n."""
    small, large = make(n), make(GROWTH * n)
    return _cost(function, large) / _cost(function, small)


def _quietly(reader):
    def call(argument):
        try:
            reader(argument)
        except (SubmissionError, marimo.MarimoError, yaml.YAMLError):
            pass
    return call


def notebook_with(source):
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [{"cell_type": "code", "source": source, "metadata": {}, "outputs": []}]}).encode()


def test_the_google_colab_check_is_linear_in_a_cell_of_blank_lines():
    # `^\s*(?:from\s+google...` with re.MULTILINE: 60,000 blank lines cost 65 s of the grader's CPU.
    assert growth(lambda raw: parse(raw, "x.ipynb"), lambda n: notebook_with("\n" * n + "x = 1\n"), 2_000) < LINEAR


def test_a_py_hand_in_of_blank_lines_is_read_in_linear_time():
    assert growth(lambda raw: parse(raw, "x.py"), lambda n: b"\n" * n + b"x = 1\n", 2_000) < LINEAR


def test_the_marimo_check_is_linear_in_lines_that_almost_start_an_app():
    text = lambda n: "import marimo\n" + "app " * n + "\n" + "app\n" * n      # noqa: E731
    assert growth(cells._is_marimo, text, 2_000) < LINEAR


@pytest.mark.slow
def test_a_marimo_notebook_s_cells_are_found_in_linear_time_in_their_number():
    # Each cell's lines were found by splitting the whole file again: quadratic in the number of cells.
    def text(n):
        return ("import marimo\napp = marimo.App()\n\n"
                + "@app.cell\ndef _():\n    x = 1\n    y = 2\n    return\n\n" * n).encode()
    assert growth(lambda raw: parse(raw, "m.py"), text, 1_000) < LINEAR


def test_a_blackboard_receipt_s_name_line_is_read_in_linear_time():
    # `Name:\s*(.*?)\s*\(` cost time quadratic in a line of spaces.
    assert growth(receipts.read_receipt, lambda n: b"Name: x" + b" " * n + b"y\n", 2_000) < LINEAR


def test_a_zip_name_s_bad_utf8_is_mended_in_linear_time():
    # Decoding the rest of the name again after each bad byte was quadratic in a name of bad bytes.
    assert growth(zips._mend, lambda n: b"\xff" * n, 60_000) < LINEAR


def test_zip_entries_whose_cleaned_names_collide_are_placed_in_linear_time():
    # Each name made the same by the cleaning counted up from 2 again: quadratic in their number.
    def place(names):
        taken = zips._Taken()
        for name in names:
            zips._disk_path(name, taken)
    names = lambda n: [chr(1 + i % 8) + chr(1 + i // 8 % 8) + chr(1 + i // 64 % 8) + chr(1 + i // 512 % 8)  # noqa: E731
                       + chr(1 + i // 4096 % 8) for i in range(n)]
    assert growth(place, names, 500) < LINEAR


@pytest.mark.slow
def test_gradescope_s_yaml_is_read_in_linear_time():
    load = _quietly(lambda text: yaml.load(text, Loader=_PlainYaml))
    assert growth(load, lambda n: "".join(f"submission_{i}:\n  :submitters: []\n" for i in range(n)), 200) < LINEAR


@pytest.mark.slow
def test_what_python_s_parser_reads_in_quadratic_time_stops_at_its_budget(monkeypatch):
    # One f-string of many parts: CPython's parser is quadratic in it.  The child stops at its CPU budget.
    monkeypatch.setattr(marimo, "PARSE_CPU_SECONDS", 1)
    text = "import marimo\napp = marimo.App()\nx = f'" + "{x}" * 300_000 + "'\n"
    start = _cpu()
    with pytest.raises(SubmissionError, match="could not parse within its limits"):
        parse(text.encode(), "m.py")
    assert _cpu() - start < 10
