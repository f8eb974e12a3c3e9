"""`autograder report`: the class report, checked in a real headless browser."""

import html
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from autograder.feedback.cli import COMMANDS, report_command
from browser.chromium import DESKTOP, browser_page, images, remote_requests
from browser.classes import ROOT, fake_gradebook, graded_example_class, nqueens, run

SCREENSHOTS = ROOT / "build" / "screenshots"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    out = graded_example_class(tmp_path_factory.mktemp("example"))
    result = run(report_command, "--out", out, "--assignment", "n-queens")
    assert result.exit_code == 0, result.output
    return out


def rows(report, table_id):
    table = re.search(rf'<table id="{table_id}">(.*?)</table>', report, re.S).group(1)
    return re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)


def test_report_has_its_plots_and_tables(example):
    report = (example / "report.html").read_text(encoding="utf-8")
    assert report.count('src="data:image/png;base64,') == 2
    assert "http" not in re.sub(r'<a href="[^"]*"', "", report)          # nothing to fetch
    _, assignment = nqueens()
    assert len(rows(report, "case-table")) == len(assignment.cases)
    assert len(rows(report, "student-table")) == 17
    assert "1 notebook cell(s) raised an error" in report


def test_failures_name_the_students_who_hit_them(example):
    report = (example / "report.html").read_text(encoding="utf-8")
    failures = rows(report, "failure-table")
    heidi = [r for r in failures if "multiset_permutations" in r]
    assert len(heidi) == 1 and "heidi" in heidi[0] and "8 results" in heidi[0]
    wrong = [r for r in failures if "<code>is_solved</code>" in r and "<code>wrong value</code>" in r]
    assert wrong and "bob" in wrong[0]


def test_zero_scores_and_notebooks_that_did_not_run_are_listed(example):
    report = (example / "report.html").read_text(encoding="utf-8")
    listed = {re.search(r"<td>(.*?)</td>", r).group(1) for r in rows(report, "not-run-table")}
    assert {"judy", "trent", "victor", "heidi"} <= listed
    assert "alice" not in listed
    slowest = rows(report, "slowest-table")
    assert "<td>ivan</td>" in slowest[0] and "<td>peggy</td>" in slowest[1]


def test_hidden_cases_appear_by_description_only(example):
    report = (example / "report.html").read_text(encoding="utf-8")
    _, assignment = nqueens()
    for case in assignment.hidden_cases:
        assert case.call.text not in report
        assert html.escape(case.description) in report
    assert "-|0|1|2|3|\n" not in report                                   # no received values at all


def test_hidden_failures_keep_their_messages_out(tmp_path):
    out = fake_gradebook(tmp_path, [dict(student="eve", cases={
        "hidden: board2str draws a board of another size": dict(
            status="error", message="ValueError: 4 is not in list [3, 1, 4, 2, 0]")})])
    assert run(report_command, "--out", out).exit_code == 0
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "ValueError (message not shown: hidden case)" in report and "[3, 1, 4, 2, 0]" not in report


def test_report_renders_in_a_browser(example):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with browser_page(DESKTOP) as browser:
        browser.goto((example / "report.html").as_uri())
        loaded = images(browser)
        assert [i[0] for i in loaded] == ["histogram", "pass-rates"]
        assert all(width > 300 and height > 100 and complete for _, width, height, complete in loaded)
        for table in ("case-table", "failure-table", "not-run-table", "slowest-table", "student-table"):
            assert browser.locator(f"#{table} tbody tr").count() > 0, table
            assert browser.locator(f"#{table}").is_visible()
        assert remote_requests(browser) == []
        browser.screenshot(path=str(SCREENSHOTS / "report.png"), full_page=True)
    assert (SCREENSHOTS / "report.png").stat().st_size > 50_000


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
