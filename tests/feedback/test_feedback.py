"""`autograder feedback`: one clear report per student, hidden cases by description only."""

import html
import re

import pytest

from autograder import runtime
from autograder.feedback import explain
from autograder.cli.feedback import feedback_command
from autograder.core.folder_names import safe_name
from autograder.core.render import _code, _fence
from browser.chromium import PHONE, browser_page, images, remote_requests
from browser.classes import ROOT, fake_gradebook, graded_example_class, nqueens, run

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

SCREENSHOTS = ROOT / "build" / "screenshots"
HIDDEN_BOARD = "board2str draws a board of another size"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    out = graded_example_class(tmp_path_factory.mktemp("example"))
    result = run(feedback_command, "--out", out)
    assert result.exit_code == 0, result.output
    return out


def page(out, student, kind="html"):
    return (out / "feedback" / safe_name(student) / f"feedback.{kind}").read_text(encoding="utf-8")


@pytest.mark.slow
def test_every_student_of_the_example_class_gets_html_and_markdown(example):
    students = sorted(line.split(",")[0] for line in (example / "grades.csv").read_text().splitlines()[1:])
    assert len(students) == 17
    for student in students:
        text = page(example, student)
        assert text.startswith("<!DOCTYPE html>") and 'name="viewport"' in text
        assert "src=\"http" not in text and "href=\"http" not in text.replace(
            'href="https://colab.research.google.com/', "")          # self-contained: no remote assets
        assert page(example, student, "md").startswith("# The n-queens puzzle: feedback for")


@pytest.mark.slow
def test_public_cases_show_call_expected_received_and_hint(example):
    bob = page(example, "bob")
    assert "0 / 5" in bob             # get_n off by one: only what a constant earns, withheld
    assert "<code>board2str([0, 1, 2, 3, 4, 5])</code>" in bob
    expected_board = html.escape(runtime.show(nqueens()[1].load_expected()["board2str([0, 1, 2, 3, 4, 5])"]))
    assert f"<pre>{expected_board}</pre>" in bob                     # a board shown as a board
    assert "<pre>-|0|1|2|3|4|\n0|*|-|-|-|-|\n" in bob                 # and what bob's code returned
    # bob's only bug is get_n off by one: the page names it once, and the board cases point there
    assert bob.count('<p class="cause">Most of your failures come from <code>get_n</code>: fix it first.</p>') == 1
    assert "This check calls <code>get_n</code>, which fails its own checks" in bob
    assert "Print both boards and compare them line by line" not in bob
    markdown = page(example, "bob", "md")
    assert "| `board2str([0, 1, 2, 3, 4, 5])` | 0 / 0.25 | wrong answer |" in markdown
    assert "```\n-|0|1|2|3|4|5|\n0|*|-|-|-|-|-|" in markdown


def test_errors_are_explained_with_a_short_traceback_of_the_students_code(example):
    judy = page(example, "judy")                  # the template, handed in as it was: said once, at the top
    assert judy.count("left from the template") == 1 and "Start with <code>get_n</code>" in judy
    assert 'class="cause"' not in judy            # nothing written: no function is "the" cause
    assert "in get_n, line" not in judy           # no block repeats what the notice says
    heidi_page = page(example, "heidi")
    assert "in get_solutions, line 3 of its cell" in heidi_page and "ipython-input" not in heidi_page
    heidi = page(example, "heidi", "md")
    assert "Your code uses a name that does not exist" in heidi
    assert heidi.count("multiset_permutations' is not defined") == 1     # later repeats are folded into it
    assert re.search(r"The same error in \d+ more checks?: `count_solutions\(", heidi), heidi
    # the failing cell is named at the top, with its first lines and its error, as nbgrader shows it
    assert heidi.index("## A cell of your notebook failed") < heidi.index("## Public checks")
    assert "Code cell 2:\n\n```python\nimport numpy as np\nimport nqueens_helpers" in heidi
    assert "```\nModuleNotFoundError: No module named 'nqueens_helpers'\n```" in heidi
    assert "A cell of your notebook failed (see the top of this page)" in heidi
    for block in re.findall(r"Where, in your code:\n\n```\n(.*?)\n```", heidi, re.S):
        assert len(block.splitlines()) <= 10


def test_timeouts_and_broken_notebooks_say_what_to_try(example):
    ivan = page(example, "ivan")
    assert "Some checks ran out of time." in ivan and "What to try:" in ivan
    # Each loop was stopped at its case's own limit, and the page says how long the reference takes.
    assert re.search(r"(no result within|stopped after) [0-9.]+ s", ivan)
    assert "the reference solution takes about" in ivan
    trent = page(example, "trent")
    assert "could not be read as a Jupyter notebook" in trent and "Download .ipynb" in trent
    assert "not run" in trent and "0 / 5" in trent
    assert "has no code in it" in page(example, "victor")


def test_hidden_cases_show_description_and_result_only(example):
    _, assignment = nqueens()
    bob = page(example, "bob")
    for case in assignment.hidden_cases:
        assert html.escape(case.description) in bob
        assert case.call.text not in bob
    # bob's hidden board2str returned a 4 x 4 board, which would show the hidden input's size
    assert "-|0|1|2|3|\n0|-|-|-|-|" not in bob
    assert "-|0|1|2|3|4|\n0|-|-|-|-|*|" not in bob                    # nor the hidden expected board


def test_hidden_messages_received_values_and_tracebacks_never_show(tmp_path):
    secret = "is_solved([0, 2, 0])"
    out = fake_gradebook(tmp_path, [dict(student="eve", cases={
        f"hidden: {HIDDEN_BOARD}": dict(status="error", message="ValueError: 4 is not in list [3, 1, 4, 2, 0]",
                                        traceback='  File "<ipython-input-1-abc>", line 2, in board2str\n'
                                                  "    SECRET_TRACEBACK_LINE\n"),
        "hidden: is_solved rejects two queens in one row, with no diagonal conflict": dict(
            status="failed", message=f"wrong value for {secret}", received="SECRET_RECEIVED"),
    })])
    assert run(feedback_command, "--out", out).exit_code == 0
    for kind in ("html", "md"):
        text = page(out, "eve", kind)
        for leaked in ("[3, 1, 4, 2, 0]", "4 is not in list", "SECRET_TRACEBACK_LINE", "SECRET_RECEIVED", secret,
                       "[0, 2, 0]"):
            assert leaked not in text, (kind, leaked)
        assert "raised an error (ValueError)" in text
        assert HIDDEN_BOARD in text


def test_a_page_that_would_say_anything_of_a_hidden_case_in_words_not_the_graders_is_withheld(tmp_path,
                                                                                              monkeypatch):
    """The leak guard searches no page for an input (a hand-in can spell one any way it likes): a hidden case's
    words must be the grader's own (explain.hidden_words), or the page is not written.  Here a bug upstream
    passes a hidden case's message through, however it is spelled."""
    out = fake_gradebook(tmp_path, [
        dict(student="mallet", cases={f"hidden: {HIDDEN_BOARD}": dict(status="error",
                                                                      message="ValueError: is:ACFHJEIBDG")}),
        dict(student="alice")])
    real = explain.hidden_result
    monkeypatch.setattr(explain, "hidden_result", lambda status, message: message or real(status, message))
    result = run(feedback_command, "--out", out)
    assert result.exit_code == 1
    assert "withheld the feedback of mallet" in result.output and "not one of the grader's own words" in result.output
    assert not (out / "feedback" / "mallet").exists() and (out / "feedback" / "alice" / "feedback.html").is_file()


def test_every_word_a_hidden_case_can_get_is_the_graders_own():
    """Whatever the gradebook holds (a message, a status this grader never writes, an exception class a notebook
    named after an input), a hidden case's result is one of a fixed, finite list."""
    words = explain.hidden_words()
    messages = ["", "ValueError: 4 is not in list [3, 1, 4, 2, 0]", "Leak_0_2_4: x", "is:ACFHJEIBDG",
                "expected a list, got an is acfhjeibdg", "wrong value: the strings differ (expected 3 lines, got 4)",
                "returned an object of type Leak_0_2, not a plain value", "too slow: right answer in 1 s"]
    for status in (*explain.CASE_STATUS, "Leak_0_2_4", None, "failed"):
        for message in messages:
            assert explain.hidden_result(status, message) in words, (status, message)
    assert len(words) < 200 and not any(character.isdigit() for word in words for character in word)


def test_odd_student_names_get_safe_folders_and_escaped_pages(tmp_path):
    names = ["Alice Smith", "<script>alert(1)</script>", "../../etc/passwd", "Zoë O'Brien", "CON", "Alice_Smith"]
    out = fake_gradebook(tmp_path, [dict(student=n) for n in names])
    assert run(feedback_command, "--out", out).exit_code == 0
    folders = {p.name for p in (out / "feedback").iterdir()}
    assert len(folders) == len(names) and "Alice_Smith" in folders
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+", f) and not f.startswith(".") for f in folders)
    assert all(p.resolve().is_relative_to((out / "feedback").resolve()) for p in (out / "feedback").rglob("*"))
    text = page(out, "<script>alert(1)</script>")
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    markdown = page(out, "<script>alert(1)</script>", "md")
    assert "<script>" not in markdown
    assert "Zo" in page(out, "Zoë O'Brien") and "O&#39;Brien" in page(out, "Zoë O'Brien")


def test_every_status_is_explained():
    statuses = ["timeout", "memory", "crashed", "invalid-notebook", "empty", "wrong-file-type", "unsafe-path",
                "too-large", "invalid-zip", "no-notebook", "unreadable"]
    for status in statuses:
        what, action = explain.submission_problem(status)
        assert what.endswith(".") and action
    for status in ("failed", "error", "timeout", "memory", "crashed"):
        assert explain.CASE_ADVICE[status]
    assert explain.submission_problem("graded", "") is None


def test_markdown_code_cannot_be_closed_by_what_it_shows():
    assert _fence("a\n```\nb") == "````\na\n```\nb\n````"
    assert _code("x | `y`") == "`` x \\| `y` ``"


def test_assignment_defaults_to_the_only_one_and_errors_are_one_line(tmp_path):
    out = fake_gradebook(tmp_path / "out", [dict(student="alice")])
    assert run(feedback_command, "--out", out).exit_code == 0
    missing = run(feedback_command, "--out", tmp_path / "nowhere")
    assert missing.exit_code == 1 and "no gradebook" in missing.output and "Traceback" not in missing.output
    wrong = run(feedback_command, "--out", out, "--assignment", "bitwise-queens")
    assert wrong.exit_code == 1 and "no hand-ins for 'bitwise-queens'" in wrong.output


def test_feedback_twice_writes_nothing_new(example):
    files = sorted((example / "feedback").rglob("*.*"))
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files}
    result = run(feedback_command, "--out", example)
    assert result.exit_code == 0 and "all unchanged" in result.output
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files} == before


@pytest.mark.browser
def test_feedback_page_reads_well_on_a_phone(example):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with browser_page(PHONE, device_scale_factor=2) as browser:
        browser.goto((example / "feedback" / "judy" / "feedback.html").as_uri())
        assert browser.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]   # no sideways scrolling
        # every case has its block, or is named in the block of the same error it repeats
        folded = browser.locator("p.also code").count()
        assert browser.locator("section.case").count() + folded == len(nqueens()[1].cases) and folded
        assert browser.locator("h1").inner_text() == "The n-queens puzzle: feedback for judy"
        font = browser.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
        assert font >= 16
        assert images(browser) == [] and remote_requests(browser) == []
        browser.screenshot(path=str(SCREENSHOTS / "feedback-phone.png"), full_page=False)
    assert (SCREENSHOTS / "feedback-phone.png").stat().st_size > 10_000


def test_a_hidden_case_s_why_passes_only_as_the_sentence_scoring_writes_for_its_requirements(nqueens):
    """A withheld hidden case says which required check did not pass, in the words grade/scoring.py writes
    from cases.toml; any other `why` (a bug passing a hand-in's message through) withholds the page."""
    from autograder.feedback import leak_guard
    from autograder.grade import scoring

    whys = sorted(m.removeprefix("withheld: ") for m in scoring.withheld_messages(nqueens.cases))
    assert whys and all("counts only when" in why for why in whys)
    hidden = dict(description="a hidden check", result=explain.WITHHELD, status="withheld", points=0,
                  max_points=0.2, passed=False)
    assert leak_guard.vet_page({"hidden": [dict(hidden, why=whys[0])]}, nqueens) == []
    forged = leak_guard.vet_page({"hidden": [dict(hidden, why=whys[0] + " is:ACFHJEIBDG")]}, nqueens)
    assert [(u.field, u.text.endswith("is:ACFHJEIBDG")) for u in forged] == [("why", True)]
