"""Feedback that says what to fix: one student per problem, page text and structure checked.

Each student is built to show one problem (a board with a trailing newline, a
number for a bool, a right but slow answer, a notebook cell that fails, a
time-out, one bug that breaks the functions calling it).  Where the notebook's
check cells explain the same failure, the words are compared with the page's:
both come from autograder.runtime.
"""

import contextlib
import markupsafe
import io
import re
import sqlite3

import pytest

from autograder import runtime
from autograder.core.assignment import load_assignment
from autograder.cli.feedback import feedback_command
from autograder.core.folder_names import safe_name
from autograder.gradebook import Gradebook
from autograder.gradebook.read import load_submissions
from autograder.grade.handin import cell_errors
from autograder.intake.cells import CodeCell
from browser.chromium import PHONE, browser_page, remote_requests
from browser.classes import ROOT, fake_gradebook, nqueens, run

SCREENSHOTS = ROOT / "build" / "screenshots"
BOARD = "board2str([0, 1, 2, 3, 4, 5])"
STUCK = ('  File "<ipython-input-4-0a1b2c>", line 3, in count_solutions\n'
         '    return len(get_solutions(n))\n'
         '  File "<ipython-input-3-0a1b2c>", line 6, in is_solved\n'
         '    while i < n:\n')


def esc(text):
    return str(markupsafe.escape(text))          # as the templates escape it


def page(out, student, kind="html"):
    return (out / "feedback" / safe_name(student) / f"feedback.{kind}").read_text(encoding="utf-8")


def notebook_says(case_call, expected, function, **case):
    """What the notebook's check cell prints for `case_call` when the student's function is `function`."""
    printed = io.StringIO()
    name = case_call.split("(")[0]
    with contextlib.redirect_stdout(printed):
        runtime.run_checks([dict(call=case_call, expected=expected, points=1, hint="", **case)],
                           namespace={name: function, "brute_force_count": case.pop("baseline", None)})
    return printed.getvalue()


def why_lines(text):
    """The lines after 'why:' in a check cell's output, unindented."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("why:"))
    found = [lines[start].split("why:", 1)[1].strip()]
    for line in lines[start + 1:]:
        if not line.startswith("              "):
            break
        found.append(line[14:])
    return "\n".join(found)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    _, assignment = nqueens()
    expected = assignment.load_expected()
    board = expected[BOARD]
    students = [
        dict(student="carol", cases={BOARD: dict(value=board + "\n")}),
        dict(student="frank", cases={"is_solved([0, 2, 4, 6, 1, 3, 5])": dict(value=1),
                                     "is_solved(list(range(15)))": dict(value=0)}),
        dict(student="heidi", cell_errors=[{"cell": 2, "source": "import numpy as np\nimport nqueens_helpers",
                                            "error": "ModuleNotFoundError: No module named 'nqueens_helpers'"}],
             message="1 notebook cell(s) raised an error or were stopped",
             cases={f"count_solutions({n})": dict(status="error",
                                                  message="NameError: name 'multiset_permutations' is not defined",
                                                  traceback='  File "<ipython-input-5-x>", line 3, in get_solutions\n'
                                                            "    return [list(p) for p in multiset_permutations(x)]\n")
                    for n in range(1, 9)}),
        dict(student="ivan", status="timeout", message="1 case(s) ran out of time",
             cases={"count_solutions(8)": dict(status="timeout", message="no result within 2 s", traceback=STUCK)}),
        dict(student="bob", cases={
            "get_n([0, 2, 4, 6, 1, 3, 5])": dict(value=6),
            "is_solved([0, 2, 4, 6, 1, 3, 5])": dict(value=False),
            BOARD: dict(value="-|0|1|2|3|4|\n0|*|-|-|-|-|"),
            "count_solutions(4)": dict(value=0), "count_solutions(5)": dict(value=0)}),
        dict(student="rosa", source="n-queens-rosa/n-queens.ipynb"),
    ]
    out = fake_gradebook(tmp_path_factory.mktemp("explained"), students)
    result = run(feedback_command, "--out", out)
    assert result.exit_code == 0, result.output
    return out


def test_a_trailing_newline_is_shown_as_a_line_diff_the_notebook_prints_too(graded):
    _, assignment = nqueens()
    board = assignment.load_expected()[BOARD]
    text = page(graded, "carol")
    assert "only whitespace differs: your string ends with a newline (\\n) the expected one does not have" in text
    last = board.splitlines()[-1]
    assert esc(f"line 7: expected {last!r}") in text
    assert esc(f"        received {last + chr(10)!r}") in text        # the \n made visible with repr
    # the notebook's check cell explains it in the same words
    said = why_lines(notebook_says(BOARD, board, lambda pos: board + "\n"))
    assert said == runtime.explain_difference(board, board + "\n")
    head, _, diff = said.partition("\n")
    assert f'<span class="label">why</span> {esc(head)}</p>' in text and f'<pre class="diff">{esc(diff)}</pre>' in text
    markdown = page(graded, "carol", "md")
    assert f"```\n{diff}\n```" in markdown
    assert "Why: only whitespace differs: your string ends with a newline" in markdown


def test_a_trailing_space_is_visible_too():
    said = runtime.explain_difference("-|0|\n0|*|", "-|0| \n0|*|")
    assert said.splitlines() == ["only whitespace differs (spaces or line breaks)",
                                 "line 1: expected '-|0|\\n'", "        received '-|0| \\n'"]


def test_lists_of_results_in_another_order_are_named_but_not_permutations():
    assert runtime.explain_difference([[0, 1], [1, 0]], [[1, 0], [0, 1]]) == \
        "wrong value: the right items, in another order"
    assert runtime.explain_difference([2, 4, 7, 3, 0, 6, 1, 5], [0, 4, 7, 5, 2, 6, 1, 3]) == "wrong value"
    assert runtime.explain_difference([[0, 1]], [[0, 1], [1, 0]]) == "wrong value: expected 1 item, got 2"


def test_a_wrong_type_gets_one_message_everywhere(graded):
    text = page(graded, "frank")
    assert text.count("expected a bool, got a number") == 2
    said = notebook_says("is_solved([0, 2, 4, 6, 1, 3, 5])", True, lambda pos: 1)
    assert "received: 1" in said and "why:      expected a bool, got a number" in said


def test_a_slow_right_answer_is_too_slow_with_both_timings(tmp_path):
    course, _ = nqueens()
    bitwise = load_assignment(course, "bitwise-queens")
    expected = bitwise.load_expected()
    out = fake_gradebook(tmp_path, [dict(student="sam", cases={
        "count_fast(9)": dict(value=352, seconds=0.5, baseline_seconds=0.4)})], bitwise, expected)
    assert run(feedback_command, "--out", out).exit_code == 0
    text = page(out, "sam")
    section = re.search(r'<section class="case slow">(.*?)</section>', text, re.S).group(1)
    assert "too slow · 0 / 1 pt" in section and "wrong answer" not in section
    assert ("too slow: right answer in 0.5 s, but it must be at least 10 times faster than brute_force_count(9), "
            "which took 0.4 s") in section
    assert "expected</div>" not in section and "received</div>" not in section   # not 352 against 352
    said = notebook_says("count_fast(9)", 352, lambda n: 352, compare="faster_than",
                         options={"baseline": "brute_force_count(9)", "speedup": 1e9}, baseline=lambda n: 352)
    assert said.startswith("✗ TOO SLOW  count_fast(9)") and "    too slow: right answer in " in said
    assert "expected:" not in said
    assert "| `count_fast(9)` | 0 / 1 | too slow |" in page(out, "sam", "md")


def test_the_failing_cell_is_named_at_the_top(graded):
    text = page(graded, "heidi")
    top = text.index('<h2 id="failing-cells">A cell of your notebook failed</h2>')
    assert top < text.index("<h2>Public checks")
    block = text[top:text.index("<h2>Public checks")]
    assert "code cell 2" in block
    assert '<pre class="cell-source">import numpy as np\nimport nqueens_helpers</pre>' in block
    assert '<pre class="error-output">ModuleNotFoundError: No module named &#39;nqueens_helpers&#39;</pre>' in block
    assert "Runtime → Restart session and run all" in block
    assert "Some notebook cells raised an error" not in text           # the cells themselves say it better
    assert "A cell of your notebook failed (see the top of this page)" in text


def test_a_time_out_says_where_the_code_was_stuck(graded):
    text = page(graded, "ivan")
    assert ("stopped after 2 s in <code>is_solved</code>, line 6 (<code>while i &lt; n:</code>)") in text
    # Markdown shows our own `code` as code, not as backslashes; the student's line is code, never markup.
    assert "Where: stopped after 2 s in `is_solved`, line 6 (`while i < n:`)" in page(graded, "ivan", "md")


def test_one_bug_is_named_once_as_the_root_cause(graded):
    text = page(graded, "bob")
    assert text.count('class="cause"') == 1
    assert "Most of your failures come from <code>get_n</code>: fix it first." in text
    board = re.search(r'<h3><code>board2str\(\[0, 1, 2, 3, 4, 5\]\)</code></h3>(.*?)</section>', text, re.S).group(1)
    assert "This check calls <code>get_n</code>, which fails its own checks: fix <code>get_n</code> first." in board
    assert "Print both boards" not in board                         # the case's own hint would mislead here
    assert "wrong value: the strings differ (expected 7 lines, got 2)" in board
    assert 'class="cause"' not in page(graded, "carol")              # one bug with no callers failing: no cause


def test_the_colab_link_opens_the_students_own_classroom_notebook(graded):
    rosa = page(graded, "rosa")
    assert ('href="https://colab.research.google.com/github/ContextLab/n-queens-rosa/blob/main/n-queens.ipynb">'
            "Open your notebook from your repository in Colab</a>") in rosa
    carol = page(graded, "carol")
    assert "Open the original assignment in Colab (a fresh copy, not the notebook you handed in)" in carol


def test_hidden_cases_get_only_the_fixed_first_sentence(tmp_path):
    _, assignment = nqueens()
    expected = assignment.load_expected()
    hidden = next(c for c in assignment.hidden_cases if c.function == "board2str")
    out = fake_gradebook(tmp_path, [dict(student="hal", cases={hidden.name: dict(value=expected[hidden.name] + "\n")})])
    assert run(feedback_command, "--out", out).exit_code == 0
    text = page(out, "hal")
    assert "wrong answer: only whitespace differs: your string ends with a newline" in text
    assert "line " not in re.sub(r"<style>.*?</style>", "", text, flags=re.S).split("Hidden checks")[1]


def test_cell_errors_are_numbered_among_all_code_cells_and_stored(tmp_path):
    kept = [(1, CodeCell("import os")), (3, CodeCell("\n\nx = 1\ny = 2\nz = 3\nw = 4\n"))]
    assert cell_errors(kept, [(1, "NameError: name 'q' is not defined")]) == [
        {"cell": 3, "source": "x = 1\ny = 2\nz = 3", "error": "NameError: name 'q' is not defined"}]


def test_an_old_gradebook_without_cell_errors_still_opens(tmp_path):
    out = fake_gradebook(tmp_path, [dict(student="olga", cell_errors=[{"cell": 4, "source": "1/0",
                                                                        "error": "ZeroDivisionError"}])])
    assert [e.cell for e in load_submissions(out, "n-queens")[0].cell_errors] == [4]
    db = sqlite3.connect(out / "gradebook.db")
    db.execute("DROP TABLE cell_errors")                     # as a gradebook written before the table existed,
    db.execute("PRAGMA user_version = 0")                    # which recorded no schema version
    db.commit()
    db.close()
    assert load_submissions(out, "n-queens")[0].cell_errors == ()
    Gradebook(out / "gradebook.db").close()                  # opening it to write adds the table
    tables = {r[0] for r in sqlite3.connect(out / "gradebook.db").execute("SELECT name FROM sqlite_master")}
    assert "cell_errors" in tables


@pytest.mark.browser
def test_explained_pages_in_a_browser(graded):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with browser_page(PHONE, device_scale_factor=2) as browser:
        browser.goto((graded / "feedback" / "heidi" / "feedback.html").as_uri())
        cell = browser.locator(".cell-error")
        assert cell.count() == 1 and cell.is_visible()
        top = browser.evaluate("document.querySelector('.cell-error').getBoundingClientRect().top")
        assert top < PHONE["height"]                                  # on the first screen, above the checks
        assert "nqueens_helpers" in browser.locator(".cell-error .error-output").inner_text()
        assert browser.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        browser.screenshot(path=str(SCREENSHOTS / "feedback-failing-cell.png"))
        browser.goto((graded / "feedback" / "carol" / "feedback.html").as_uri())
        why = browser.locator("section.case.failed pre.diff")
        assert why.count() == 1 and "received '5|-|-|-|-|-|*|\\n'" in why.inner_text()
        why.scroll_into_view_if_needed()
        browser.screenshot(path=str(SCREENSHOTS / "feedback-trailing-newline.png"))
        browser.goto((graded / "feedback" / "bob" / "feedback.html").as_uri())
        assert browser.locator(".cause").inner_text() == "Most of your failures come from get_n: fix it first."
        assert remote_requests(browser) == []
        browser.screenshot(path=str(SCREENSHOTS / "feedback-root-cause.png"))


def test_the_notebook_check_cells_point_at_the_same_function(graded):
    """bob's generated notebook (get_n off by one), run cell by cell: count_solutions' checks point at get_n."""
    import nbformat

    _, assignment = nqueens()
    bob = nbformat.read(ROOT / "examples" / "n-queens" / "submissions" / "bob.ipynb", as_version=4)
    namespace, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
        for cell in bob.cells:
            if cell.cell_type == "code" and "demo" not in cell.metadata.get("tags", []):
                exec(compile(cell.source, "<cell>", "exec"), namespace)  # noqa: S102 - our own example
    text = printed.getvalue()
    counts = text[text.index("✗ FAIL  count_solutions(4)"):]
    assert "    hint: " + runtime.fix_first("get_n") in counts
    assert "a wrong count means is_solved" not in counts                # the case's own hint would mislead
    assert runtime.fix_first("get_n") == "This check calls `get_n`, which fails its own checks: fix `get_n` first."
    assert "This check calls <code>get_n</code>, which fails its own checks" in page(graded, "bob")


def test_uses_come_from_the_reference_and_from_cases_toml(tmp_path):
    import copy

    from autograder.core import call_graph
    from autograder.core.assignment import AssignmentError, _uses

    _, assignment = nqueens()
    uses = call_graph.function_uses(assignment)
    assert uses["count_solutions"] == {"get_n", "is_solved"}          # through get_solutions, which is not tested
    assert uses["get_n"] == set() and call_graph.uses_in_order(uses, "count_solutions") == ["get_n", "is_solved"]
    declared = copy.copy(assignment)
    declared.solution_path = tmp_path / "missing.ipynb"              # no reference: the declaration alone
    declared.uses = _uses({"board2str": ["get_n"]}, "cases.toml")
    assert call_graph.function_uses(declared) == {"board2str": {"get_n"}, "get_n": set(), "is_solved": set(),
                                                  "count_solutions": set()}
    with pytest.raises(AssignmentError, match=r"\[uses\] maps a function to a list of names"):
        _uses({"board2str": "get_n"}, "cases.toml")
