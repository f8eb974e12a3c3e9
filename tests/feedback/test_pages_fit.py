"""Every page fits its screen: the class report and each kind of feedback page, on a 390 px phone and a
1366 px laptop, in headless Chromium.  No element may stick out of the element that holds it (so nothing
is cut off or scrolls the page sideways), and a screenshot of each is kept for a person to look at:
under $AUTOGRADER_ARTIFACTS when it is set (CI keeps that folder), else build/screenshots/pages.
"""

import os
import shutil
from pathlib import Path

import pytest

from browser.chromium import OVERFLOWS, SCREENS, one_browser
from browser.classes import EXAMPLE_SUBMISSIONS, grade, graded_example_class, run
from autograder.cli.feedback import feedback_command
from autograder.cli.report import report_command
from autograder.publish.course.report import semester_report
from coursebooks import sample_book
from autograder.core.folder_names import safe_name
from conftest import ROOT

ARTIFACTS = Path(os.environ.get("AUTOGRADER_ARTIFACTS") or ROOT / "build" / "screenshots") / "pages"
# One page of each kind a student meets, from the example class (examples/n-queens/expected.csv).
KINDS = {"perfect": "alice", "partial": "bob", "time-out": "ivan", "blank template": "judy",
         "invalid notebook": "trent"}

@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """{kind: path of its page}: the example class's feedback and report, and a late hand-in's feedback."""
    out = graded_example_class(tmp_path_factory.mktemp("pages"))
    assert run(feedback_command, "--out", out).exit_code == 0
    assert run(report_command, "--out", out).exit_code == 0
    found = {kind: out / "feedback" / safe_name(student) / "feedback.html" for kind, student in KINDS.items()}
    found["report"] = out / "report.html"
    late = tmp_path_factory.mktemp("late")
    shutil.copy(EXAMPLE_SUBMISSIONS / "bob.ipynb", late / "lena.ipynb")
    (late / "times.csv").write_text("student,submitted_at\nlena,2026-03-03T10:00:00+00:00\n")
    grade(late / "out", late / "lena.ipynb", extra=("--deadline", "2026-03-01T23:59:00+00:00", "--late-policy",
                                                   "per-day", "--late-penalty", "0.5", "--times", late / "times.csv"))
    assert run(feedback_command, "--out", late / "out").exit_code == 0
    found["late"] = late / "out" / "feedback" / "lena" / "feedback.html"
    # bitwise-queens: calls and values that are long lines (its wrong-answer table was 2,350 px wide at 1366)
    # graded once per test run, like n-queens' class above, not once per test worker
    bitwise = graded_example_class(tmp_path_factory.mktemp("bitwise") / "out", "bitwise-queens")
    assert run(report_command, "--out", bitwise).exit_code == 0
    found["bitwise report"] = bitwise / "report.html"
    found["semester"] = tmp_path_factory.mktemp("semester") / "semester_report.html"
    found["semester"].write_text(semester_report(sample_book(students=30)), encoding="utf-8")
    return found


@pytest.fixture(scope="module")
def open_page(pages):
    """One Chromium for this module's pages (after `pages`, which runs kernels, is made): a fresh context each."""
    with one_browser() as open_page:
        yield open_page


@pytest.mark.browser
@pytest.mark.parametrize("screen", SCREENS)
@pytest.mark.parametrize("kind", [*KINDS, "late", "report", "bitwise report", "semester"])
def test_no_element_sticks_out_of_its_container(pages, open_page, kind, screen):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open_page(SCREENS[screen], device_scale_factor=1) as page:
        page.goto(pages[kind].as_uri())
        page.screenshot(path=str(ARTIFACTS / f"{kind.replace(' ', '-')}-{screen}.png"), full_page=True)
        found = page.evaluate(OVERFLOWS)
        assert found["bad"] == [] and found["scrollWidth"] <= found["width"], found
        text = page.inner_text("body")
        assert ".Open" not in text and "off.Open" not in text          # sentences keep their spaces
        if kind == "late":
            assert "Late:" in text and "point(s) off. Open" in text, text[:2000]
        if kind == "blank template":
            assert text.count("left from the template") == 1 and "Start with get_n:" in text
            assert page.locator("section.case h3 code").count() <= 5    # public repeats folded, one block a function
        if kind == "semester":
            assert "Students who need a look" in text and "missed 2 assignments" in text
            assert page.locator("script").count() == 1 and "alert(1)" in text      # a name stays text
        if kind == "report" and screen == "phone":
            # the tables became cards whose values carry their column's heading
            assert page.locator("td[data-label='received']").count() > 0
            assert page.evaluate("getComputedStyle(document.querySelector('thead')).display") == "none"
            # the pass-rate chart is the narrow drawing, shown at a scale its labels survive
            chart = page.evaluate("""() => { const i = document.getElementById('pass-rates');
                                             return [i.currentSrc === i.src, i.naturalWidth, i.clientWidth]; }""")
            assert chart[0] is False and chart[2] >= 0.7 * chart[1], chart


@pytest.mark.browser
def test_the_test_student_is_listed_but_counted_nowhere(tmp_path, open_page):
    from browser.classes import fake_gradebook
    out = fake_gradebook(tmp_path / "out", [dict(student="canvas:1001", source="ann_1001_1_n-queens.ipynb"),
                                            dict(student="canvas:1002", source="studenttest_1002_2_n-queens.ipynb",
                                                 no_cases=True, status="empty")])
    import sqlite3
    with sqlite3.connect(out / "gradebook.db") as db:
        db.execute("UPDATE submissions SET name = 'Test Student' WHERE student = 'canvas:1002'")
    assert run(report_command, "--out", out).exit_code == 0
    with open_page(SCREENS["laptop"]) as page:
        page.goto((out / "report.html").as_uri())
        stats = page.inner_text(".stats")
        assert stats.startswith("1\nstudents") and "0\nwrote nothing" in stats, stats
        assert "Test Student" in page.inner_text("#test-accounts")
        assert "Test Student (canvas:1002) (the LMS's test account: not counted)" in page.inner_text("#student-table")
