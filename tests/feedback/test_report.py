"""`autograder report`: the class report, checked in a real headless browser."""

import html
import sqlite3
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from autograder.cli.feedback import feedback_command
from autograder.cli.release import release_command
from autograder.cli.report import report_command

COMMANDS = (feedback_command, report_command, release_command)
from browser.chromium import DESKTOP, browser_page, images, remote_requests
from browser.classes import ROOT, fake_gradebook, graded_example_class, nqueens, run

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

SCREENSHOTS = ROOT / "build" / "screenshots"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    out = graded_example_class(tmp_path_factory.mktemp("example"))
    result = run(report_command, "--out", out, "--assignment", "n-queens")
    assert result.exit_code == 0, result.output
    return out


def rows(report, table_id):
    table = re.search(rf'<table id="{table_id}"[^>]*>(.*?)</table>', report, re.S).group(1)
    return re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S)


@pytest.mark.slow
def test_report_has_its_plots_and_tables(example):
    report = (example / "report.html").read_text(encoding="utf-8")
    assert report.count('src="data:image/png;base64,') == 2
    assert "http" not in re.sub(r'<a href="[^"]*"', "", report)          # nothing to fetch
    _, assignment = nqueens()
    assert len(rows(report, "case-table")) == len(assignment.cases)
    assert len(rows(report, "student-table")) == 17
    assert "cell 2: ModuleNotFoundError: No module named &#39;nqueens_helpers&#39;" in report   # heidi's failing cell


@pytest.mark.slow
def test_failures_name_the_students_who_hit_them(example):
    report = (example / "report.html").read_text(encoding="utf-8")
    failures = rows(report, "failure-table")
    heidi = [r for r in failures if "multiset_permutations" in r]
    assert len(heidi) == 1 and "heidi" in heidi[0] and "8 results" in heidi[0]
    wrong = [r for r in failures if "<code>is_solved</code>" in r and "<code>wrong value</code>" in r]
    assert wrong and "bob" in wrong[0]
    groups = [r for r in rows(report, "wrong-answer-table") if "bob" in r]
    own = [r for r in groups if "get_n([0, 2, 4, 6, 1, 3, 5])" in r]
    assert len(own) == 1 and "comes from" not in own[0]         # get_n's own case: the bug itself
    assert len(groups) > 3 and all("comes from <code>get_n</code>" in r for r in groups if r not in own)
    causes = rows(report, "cause-table")          # bob's one bug, in get_n, breaks is_solved and board2str
    get_n = [r for r in causes if '<td class="function"><code>get_n</code>' in r]
    assert len(get_n) == 1 and "bob" in get_n[0] and "<code>is_solved</code>" in get_n[0]


def test_zero_scores_and_notebooks_that_did_not_run_are_listed(example):
    report = (example / "report.html").read_text(encoding="utf-8")
    listed = {re.search(r"<td>(.*?)</td>", r).group(1) for r in rows(report, "not-run-table")}
    assert listed == {"trent", "heidi", "ivan"}         # peggy's demo cell loops, but she scores 5: not listed
    nothing = [re.search(r"<td>(.*?)</td>", r).group(1) for r in rows(report, "wrote-nothing-table")]
    assert nothing == ["judy", "victor"]                # one row each, not one per case
    assert not any("judy" in r for r in rows(report, "failure-table"))
    slowest = rows(report, "slowest-table")
    # The two slowest: peggy's looping demo cell and ivan's loops (each stopped at its own limit).
    assert {re.search(r"<td>(.*?)</td>", r).group(1) for r in slowest[:2]} == {"ivan", "peggy"}
    seconds = [float(re.findall(r'<td class="num">([0-9.]+)</td>', r)[0]) for r in slowest]
    assert seconds == sorted(seconds, reverse=True)


def test_hidden_cases_appear_by_description_only(example):
    report = (example / "report.html").read_text(encoding="utf-8")
    _, assignment = nqueens()
    for case in assignment.hidden_cases:
        assert case.call.text not in report
        assert html.escape(case.description) in report
    assert "-|0|1|2|3|\n" not in report                                   # no received values at all


@pytest.mark.slow
def test_hidden_failures_keep_their_messages_out(tmp_path):
    out = fake_gradebook(tmp_path, [dict(student="eve", cases={
        "hidden: board2str draws a board of another size": dict(
            status="error", message="ValueError: 4 is not in list [3, 1, 4, 2, 0]")})])
    assert run(report_command, "--out", out).exit_code == 0
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "ValueError (message not shown: hidden case)" in report and "[3, 1, 4, 2, 0]" not in report


@pytest.mark.browser
def test_report_renders_in_a_browser(example):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with browser_page(DESKTOP) as browser:
        browser.goto((example / "report.html").as_uri())
        loaded = images(browser)
        assert [i[0] for i in loaded] == ["histogram", "pass-rates"]
        assert all(width > 300 and height > 100 and complete for _, width, height, complete in loaded)
        for table in ("case-table", "wrong-answer-table", "failure-table", "wrote-nothing-table", "not-run-table",
                      "slowest-table", "student-table"):
            assert browser.locator(f"#{table} tbody tr").count() > 0, table
            assert browser.locator(f"#{table}").is_visible()
        assert remote_requests(browser) == []
        browser.screenshot(path=str(SCREENSHOTS / "report.png"), full_page=True)
    assert (SCREENSHOTS / "report.png").stat().st_size > 50_000


@pytest.mark.slow
def test_commands_take_the_course_from_the_main_group(tmp_path, monkeypatch):
    @click.group()
    @click.option("--course", "course_root", type=click.Path(file_okay=False, path_type=Path))
    @click.pass_context
    def group(ctx, course_root):          # what autograder.cli.main does
        ctx.obj = course_root

    for command in COMMANDS:
        group.add_command(command)
    out = fake_gradebook(tmp_path / "out", [dict(student="alice")])
    result = CliRunner().invoke(group, ["--course", str(ROOT), "report", "--out", str(out)])
    assert result.exit_code == 0, result.output
    monkeypatch.chdir(ROOT / "assignments")                                  # no --course: found from here
    assert CliRunner().invoke(group, ["feedback", "--out", str(out)]).exit_code == 0
    assert (out / "report.html").is_file() and (out / "feedback" / "alice" / "feedback.html").is_file()


@pytest.mark.slow
def test_wrong_answers_are_grouped_by_the_value_received(tmp_path):
    wrong = {"count_solutions(5)": dict(value=0)}
    out = fake_gradebook(tmp_path, [
        dict(student="ann", cases=wrong), dict(student="ben", cases=wrong), dict(student="cid", cases=wrong),
        dict(student="dee", cases={"count_solutions(5)": dict(value=12)}),
        dict(student="eve", cases={"is_solved([0, 2, 4, 6, 1, 3, 5])": dict(value=1)}),
        dict(student="fay")])
    assert run(report_command, "--out", out).exit_code == 0
    report = (out / "report.html").read_text(encoding="utf-8")
    groups = rows(report, "wrong-answer-table")
    five = [r for r in groups if "<pre>0</pre>" in r or "<pre>12</pre>" in r]
    assert len(five) == 2 and "count_solutions(5)" in five[0]                  # most common value first
    assert "<pre>0</pre>" in five[0] and '<td class="num">3</td>' in five[0] and "ann, ben, cid" in five[0]
    assert "<pre>12</pre>" in five[1] and "dee" in five[1]
    typed = [r for r in groups if "eve" in r]
    assert "expected a bool, got a number" in typed[0] and "<pre>1</pre>" in typed[0]
    # cases sorted by pass rate, worst first
    rates = [int(re.search(r'<td class="num">(\d+)%</td>', r).group(1)) for r in rows(report, "case-table")]
    assert rates == sorted(rates) and rates[0] == 33 and rates[-1] == 100


@pytest.mark.slow
def test_one_row_per_student_who_wrote_nothing_and_late_hand_ins(tmp_path):
    _, assignment = nqueens()
    nothing = {c.name: dict(status="error", message="NotImplementedError: replace this line with your code")
               for c in assignment.cases}
    out = fake_gradebook(tmp_path, [
        dict(student="judy", cases=nothing), dict(student="vic", status="empty", no_cases=True),
        dict(student="peg", message="1 notebook cell(s) raised an error or were stopped",
             cell_errors=[{"cell": 9, "source": "while True:\n    pass", "error": "stopped after 10 s (time limit)"}]),
        dict(student="hal", message="1 notebook cell(s) raised an error or were stopped",
             cell_errors=[{"cell": 2, "source": "import nqueens_helpers", "error": "ModuleNotFoundError: x"}],
             cases={"count_solutions(1)": dict(status="error", message="NameError: name 'f' is not defined")}),
        dict(student="lou")])
    # Lou's hand-in came 9 h after the deadline the run applied: `report` brings the gradebook up to date first
    # (lateness, who is missing), so what it shows is what that rule makes of it, not a value written by hand.
    db = sqlite3.connect(out / "gradebook.db")
    db.execute("INSERT OR REPLACE INTO late_rules VALUES ('n-queens', '2026-12-02T00:00:00-05:00', 'per-day', 0.5, "
               "NULL)")
    db.execute("UPDATE submissions SET submitted_at = CASE student WHEN 'lou' THEN '2026-12-02T09:00:00-05:00' "
               "ELSE '2026-12-01T09:00:00-05:00' END")
    db.commit()
    db.close()
    assert run(report_command, "--out", out).exit_code == 0
    report = (out / "report.html").read_text(encoding="utf-8")
    assert [re.search(r"<td>(.*?)</td>", r).group(1) for r in rows(report, "wrote-nothing-table")] == ["judy", "vic"]
    assert not any("NotImplementedError" in r for r in rows(report, "failure-table"))   # not one row per case
    listed = [re.search(r"<td>(.*?)</td>", r).group(1) for r in rows(report, "not-run-table")]
    assert listed == ["hal"]                  # peg's looping demo cell cost her nothing
    late = rows(report, "late-table")
    assert len(late) == 1 and "lou" in late[0] and "2026-12-02T09:00:00-05:00" in late[0]
    assert "late by 9.0 h" in late[0] and "0.5 point(s) off" in late[0]
    assert '<span class="late-tag">late</span>' in report


@pytest.mark.browser
def test_the_report_sorts_and_groups_in_a_browser(example):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with browser_page(DESKTOP) as browser:
        browser.goto((example / "report.html").as_uri())
        rates = browser.eval_on_selector_all("#case-table tbody tr td:nth-child(4)",
                                             "cells => cells.map(c => parseInt(c.textContent))")
        assert rates == sorted(rates) and rates[0] < rates[-1]
        groups = browser.locator("#wrong-answer-table tbody tr")
        frank = groups.filter(has_text="frank")
        assert frank.count() >= 1 and "expected a bool, got a number" in frank.first.inner_text()
        carol = groups.filter(has_text="carol").first.inner_text()
        assert "only whitespace differs" in carol
        nothing = browser.eval_on_selector_all("#wrote-nothing-table tbody tr td:first-child",
                                               "cells => cells.map(c => c.textContent)")
        assert nothing == ["judy", "victor"]

        def scores():
            return browser.eval_on_selector_all("#student-table tbody tr td:nth-child(2)",
                                                "cells => cells.map(c => parseFloat(c.textContent))")

        header = browser.locator("#student-table th", has_text="score")
        header.click()
        assert scores() == sorted(scores()) and scores()[0] == 0
        header.click()
        assert scores() == sorted(scores(), reverse=True) and scores()[0] == 5
        assert remote_requests(browser) == []
        browser.locator("#wrong-answers").scroll_into_view_if_needed()
        browser.screenshot(path=str(SCREENSHOTS / "report-wrong-answers.png"), full_page=False)
        browser.locator("#students").scroll_into_view_if_needed()
        browser.screenshot(path=str(SCREENSHOTS / "report-students-sorted.png"), full_page=False)
        browser.screenshot(path=str(SCREENSHOTS / "report-explained.png"), full_page=True)
    assert (SCREENSHOTS / "report-wrong-answers.png").stat().st_size > 20_000
