"""`autograder init` makes a copy of the course someone else's: course.toml, then every badge,
link, the rubric and the release CSV follow it, and `build --check` is clean afterwards."""

import csv
import io
import shutil
import subprocess
import sys
import tomllib

import pytest
from click.testing import CliRunner
from openpyxl import load_workbook

from autograder.cli.main import main
from autograder.core.course import EXAMPLE_REPOSITORY, CourseError, github_repository, load_course
from autograder.core.course_file import parse_deadline, render
from autograder.cli.release import release_command
from autograder.feedback.pages import build_pages
from autograder.core.assignment import load_assignment
from autograder.core.lms_columns import best_column
from autograder.roster.lms_files import RosterFileError, canvas_columns
from autograder.roster.store import CourseRecords
from browser.classes import fake_gradebook, run
from conftest import ROOT, without_colab_badge

AUTOGRADER = [sys.executable, "-m", "autograder"]   # the grader of the interpreter running the tests
NEW_REPOSITORY = "https://github.com/prof-ada/queens-2027"
NEW_COLAB = "https://colab.research.google.com/github/prof-ada/queens-2027/blob/fall-2027/"
OLD = "ContextLab/n-queens-course"

# A Canvas "Export Entire Gradebook" file, as Canvas writes it (BOM, Points Possible row, totals).
CANVAS_EXPORT = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Integration ID,Section,"
    "N-Queens Puzzle (880101),Uninformed Search (880102),Bitwise Queens (880103),"
    "No Three in Line (880104),Quiz 1 (880200),Assignments Current Points,Current Score,Final Score\n"
    "    Points Possible,,,,,,5.00,5.00,5.00,5.00,10.00,(read only),(read only),(read only)\n"
    "\"Smith, Alice\",1001,s1,alice,,CS 101,,,,,,,,\n")


def tracked_copy(destination):
    """The course as a fork has it: every tracked file, nothing built or installed."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for name in filter(None, files.decode().split("\0")):
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return destination


def _init(tmp_path_factory, *extra):
    """A fork made ours by `autograder init` in a process of its own, as the README shows it."""
    root = tracked_copy(tmp_path_factory.mktemp("fork") / "queens-2027")
    export = root.parent / "gradebook-export.csv"
    export.write_text(CANVAS_EXPORT, encoding="utf-8")
    command = [*AUTOGRADER, "--course", root, "init", "--yes",
               "--name", "Search and the n-queens puzzle, fall 2027",
               "--repository", "git@github.com:prof-ada/queens-2027.git", "--branch", "fall-2027",
               "--lms", "canvas", "--canvas-gradebook", export,
               "--deadline", "n-queens=2027-09-20T23:59:00-04:00", "--deadline", "uninformed-search=2027-10-04",
               "--late-policy", "n-queens=per-day:0.5", "--late-policy", "uninformed-search=cap:2.5",
               "--lms-column", "bitwise-queens=Bitwise Queens (880103)",
               "--submission-timeout", "120", *extra]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return root, result


@pytest.fixture(scope="module")
def adopted(tmp_path_factory):
    """init, which then builds: every reference runs (the slow tier's, with `build --check` after it)."""
    return _init(tmp_path_factory)


@pytest.fixture(scope="module")
def configured(tmp_path_factory):
    """The same init, course.toml only (`--no-build`): what needs no generated file is checked on it."""
    return _init(tmp_path_factory, "--no-build")


@pytest.mark.slow
def test_init_writes_course_toml_with_every_setting(configured):
    root, result = configured
    data = tomllib.loads((root / "course.toml").read_text())
    assert data["course"] == {"name": "Search and the n-queens puzzle, fall 2027", "repository": NEW_REPOSITORY,
                              "branch": "fall-2027", "points_per_assignment": 5, "lms": "canvas"}
    assert data["limits"] == {"case_timeout": 5, "cell_timeout": 30, "submission_timeout": 120}
    tables = data["assignment"]
    assert tables["n-queens"] == {"deadline": "2027-09-20T23:59:00-04:00", "late_policy": "per-day",
                                  "late_penalty": 0.5, "lms_column": "N-Queens Puzzle (880101)"}
    assert tables["uninformed-search"]["deadline"] == parse_deadline("2027-10-04T23:59")
    assert tables["uninformed-search"]["late_policy"] == "cap" and tables["uninformed-search"]["late_cap"] == 2.5
    assert {a: t.get("lms_column") for a, t in tables.items()} == {
        "n-queens": "N-Queens Puzzle (880101)", "uninformed-search": "Uninformed Search (880102)",
        "bitwise-queens": "Bitwise Queens (880103)", "no-three-in-line": "No Three in Line (880104)"}
    course = load_course(root)
    assert load_assignment(course, "n-queens").budget == 120      # the new default time limit applies
    assert "not built: run `autograder build` before you push" in result.stdout
    assert "warning" not in result.stderr


@pytest.mark.slow
def test_every_generated_file_points_at_the_new_repository(adopted):
    root, result = adopted
    assert "Colab links to share" in result.stdout and NEW_COLAB + "assignments/n-queens/n-queens.ipynb" in result.stdout
    assert "warning" not in result.stderr
    course = load_course(root)
    for assignment_id in course.assignment_ids():
        assignment = load_assignment(course, assignment_id)
        text = assignment.student_path.read_text()
        assert f"{NEW_COLAB}assignments/{assignment_id}/{assignment.notebook}" in text
        assert OLD not in text
        # The example class still matches the student notebook (the tests of a fork pass).
        judy = root / "examples" / assignment_id / "submissions" / "judy.ipynb"
        assert without_colab_badge(judy) == without_colab_badge(assignment.student_path)
        # init changes no code: the reference's recorded times are kept, never measured again on a busy machine
        timing = assignment.timing_path.relative_to(root)
        assert assignment.timing_path.read_bytes() == (ROOT / timing).read_bytes()
    for path in [*(root / "assignments").rglob("*"), root / "course.toml"]:
        assert not path.is_file() or OLD not in path.read_text(), path
    build = subprocess.run([*AUTOGRADER, "--course", root, "build", "--check"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    assert "all generated files are up to date" in build.stdout and "example repository" not in build.stderr


@pytest.mark.slow
def test_the_rubric_states_the_new_deadlines_and_late_policies(adopted):
    root, _ = adopted
    book = load_workbook(root / "public_rubric.xlsx")
    rows = {sheet.title: list(sheet.iter_rows(values_only=True)) for sheet in book.worksheets}
    assert rows["n-queens"][-2][:2] == ("Due", "Mon 20 Sep 2027, 23:59 (UTC-04:00)")
    assert rows["n-queens"][-1][:2] == ("Late hand-ins", "late hand-ins lose 0.5 points per started day late")
    assert rows["uninformed-search"][-1][1] == "late hand-ins earn at most 2.5 points"
    assert rows["bitwise-queens"][-1][0] == "Total"             # no deadline: no rows about one


@pytest.mark.slow
def test_feedback_student_readme_and_release_csv_use_the_new_values(configured, tmp_path):
    root, _ = configured
    course = load_course(root)
    out = fake_gradebook(tmp_path / "out", [dict(student="smithalice",
                                                 source="submissions.zip:smithalice_1001_5001_n-queens.ipynb")])
    page = build_pages(course, load_assignment(course, "n-queens"), out).pages[0]
    assert NEW_COLAB + "assignments/n-queens/n-queens.ipynb" in page.html and OLD not in page.html
    assert course.name in page.html

    released = run(release_command, "--out", out, "--to", tmp_path / "lms", obj=root)
    assert released.exit_code == 0, released.output
    with open(tmp_path / "lms" / "canvas_grades.csv", newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert header[-1] == "N-Queens Puzzle (880101)"
    override = run(release_command, "--out", out, "--to", tmp_path / "other", "--lms-column", "Other (1)", obj=root)
    assert override.exit_code == 0
    assert (tmp_path / "other" / "canvas_grades.csv").read_text().splitlines()[0].endswith(",Other (1)")

    bundle = run(release_command, "--students", "--to", tmp_path / "students", obj=root)
    assert bundle.exit_code == 0, bundle.output
    readme = (tmp_path / "students" / "README.md").read_text()
    assert readme.count(NEW_COLAB) == 4 and OLD not in readme and course.name in readme


def test_init_again_with_no_changes_rewrites_the_same_file(configured):
    root, _ = configured
    before = (root / "course.toml").read_text()
    result = CliRunner().invoke(main, ["--course", str(root), "init", "--yes", "--no-build"])
    assert result.exit_code == 0, result.output
    assert (root / "course.toml").read_text() == before


def test_a_deadline_and_a_column_can_be_removed_again(configured, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(configured[0] / "autograder" / "assignments", root / "autograder" / "assignments")
    shutil.copy(configured[0] / "course.toml", root / "course.toml")
    result = CliRunner().invoke(main, ["--course", str(root), "init", "--yes", "--no-build",
                                       "--deadline", "n-queens=none", "--late-policy", "n-queens=none",
                                       "--lms-column", "n-queens="])
    assert result.exit_code == 0, result.output
    assert tomllib.loads((root / "course.toml").read_text())["assignment"]["n-queens"] == {"late_policy": "none"}
    assert "n-queens: no deadline" in result.output


def test_interactive_init_asks_and_re_asks_a_bad_answer(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(ROOT / "course.toml", root / "course.toml")
    shutil.copytree(ROOT / "autograder" / "assignments", root / "autograder" / "assignments")
    (root / "course.toml").write_text((root / "course.toml").read_text().replace(
        '[assignment.n-queens]', '[grading]\nowner = "ta team"\n\n[assignment.n-queens]\nextra = [1, 2]'))
    answers = [
        "My course",                                   # name
        "https://gitlab.com/me/queens",                # repository: refused, asked again
        "https://github.com/me/queens",
        "",                                            # branch: keep main
        "moodle",                                      # lms
        "Mars/Olympus", "Europe/Paris",                # the course's time zone: refused, asked again
        # Asked in course order (course.toml's, as no deadline is set yet), not alphabetically:
        "none", "none", "",                            # n-queens: no deadline, policy none, column
        "tomorrow", "2027-02-01T12:00:00+00:00", "cap:9", "cap:3", "",  # uninformed-search: bad, good
        "none", "none", "",                            # bitwise-queens
        "2027-01-15 17:00 +01:00", "per-day:0.25", "Assignment 3",   # no-three-in-line
        "", "", "600",                                 # time limits
    ]
    result = CliRunner().invoke(main, ["--course", str(root), "init", "--no-build"], input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "is not a GitHub repository URL" in result.output
    assert "is not a date and time" in result.output and "from 0 to 5" in result.output
    data = tomllib.loads((root / "course.toml").read_text())
    assert data["course"]["repository"] == "https://github.com/me/queens" and data["course"]["lms"] == "moodle"
    assert data["course"]["timezone"] == "Europe/Paris" and "is not a time zone's name" in result.output
    assert data["grading"] == {"owner": "ta team"}                       # keys init does not know survive
    assert data["assignment"]["n-queens"] == {"late_policy": "none", "extra": [1, 2]}
    assert data["assignment"]["no-three-in-line"] == {"deadline": "2027-01-15T17:00:00+01:00",
                                                      "late_policy": "per-day", "late_penalty": 0.25,
                                                      "lms_column": "Assignment 3"}
    assert data["assignment"]["uninformed-search"] == {"deadline": "2027-02-01T12:00:00+00:00",
                                                       "late_policy": "cap", "late_cap": 3.0}
    assert data["limits"]["submission_timeout"] == 600


@pytest.mark.slow
def test_build_warns_in_one_line_while_the_example_repository_is_in_place(build_check_of_the_course):
    result = build_check_of_the_course
    warnings = [line for line in result.stderr.splitlines() if "example repository" in line]
    assert len(warnings) == 1 and EXAMPLE_REPOSITORY in warnings[0] and "autograder init" in warnings[0]


@pytest.mark.parametrize("bad", ["", "https://gitlab.com/a/b", "https://github.com/a", "https://github.com/a/b/c",
                                 "github.com/-a/b", "https://github.com/a/b c"])
def test_a_repository_that_is_not_a_github_url_is_refused(bad):
    with pytest.raises(CourseError, match="not a GitHub repository URL"):
        github_repository(bad)


def test_init_refuses_bad_options_with_one_line_and_writes_nothing(course_copy):
    before = (course_copy / "course.toml").read_text()
    for options, message in [(["--repository", "https://example.org/x"], "not a GitHub repository URL"),
                             (["--branch", "a..b"], "not a git branch name"),
                             (["--deadline", "nope=2027-01-01"], "no assignment 'nope'"),
                             (["--late-policy", "n-queens=cap:7"], "from 0 to 5"),
                             (["--late-policy", "n-queens=per-day:0"], "from 0.01 to 5"),
                             (["--canvas-gradebook", str(ROOT / "README.md")], "not a Canvas gradebook export")]:
        result = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--yes", "--no-build", *options])
        assert result.exit_code != 0 and message in result.output, (options, result.output)
        assert (course_copy / "course.toml").read_text() == before


def test_a_deadline_written_as_a_toml_date_time_is_kept(course_copy):
    path = course_copy / "course.toml"
    path.write_text(path.read_text().replace('[assignment.n-queens]\n# deadline = "2026-12-01T23:59:00-05:00"',
                                             '[assignment.n-queens]\ndeadline = 2027-03-01T09:00:00+01:00'))
    result = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--yes", "--no-build"])
    assert result.exit_code == 0, result.output
    assert "n-queens: Mon 1 Mar 2027, 09:00 (UTC+01:00)" in result.output
    assert tomllib.loads(path.read_text())["assignment"]["n-queens"]["deadline"].isoformat() == "2027-03-01T09:00:00+01:00"
    asked = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--no-build"], input="\n" * 16)
    assert asked.exit_code == 0, asked.output                          # Enter keeps it, asked too
    assert "deadline (ISO 8601; none for no deadline) [2027-03-01 09:00:00+01:00]:" in asked.output
    assert "n-queens: Mon 1 Mar 2027, 09:00 (UTC+01:00)" in asked.output


def test_canvas_columns_are_read_and_matched_only_when_clear(tmp_path):
    export = tmp_path / "grades.csv"
    export.write_text(CANVAS_EXPORT, encoding="utf-8")
    columns = canvas_columns(export)
    assert columns == ["N-Queens Puzzle (880101)", "Uninformed Search (880102)", "Bitwise Queens (880103)",
                       "No Three in Line (880104)", "Quiz 1 (880200)"]
    assert best_column("n-queens", "The n-queens puzzle", columns) == "N-Queens Puzzle (880101)"
    assert best_column("graphs", "Graph colouring", columns) is None
    assert best_column("hw", "Homework", ["Homework 1 (1)", "Homework 2 (2)"]) is None     # a tie: ask
    export.write_text("Student,ID,Section,Current Score\n", encoding="utf-8")
    with pytest.raises(RosterFileError, match="no assignment columns"):
        canvas_columns(export)
    export.write_text("First name,Last name,Email address\nAda,L,ada@x\n", encoding="utf-8")
    with pytest.raises(RosterFileError, match="not a Canvas gradebook export: its first columns are not"):
        canvas_columns(export)


@pytest.mark.parametrize("delimiter", [",", ";"])
def test_init_and_roster_import_read_the_same_canvas_exports(course_copy, tmp_path, delimiter):
    """One reader for Canvas's export: where Canvas writes `;` (a locale whose decimal mark is a comma) init
    once refused what `roster import` read.  Both read either, and the same columns."""
    rows = list(csv.reader(io.StringIO(CANVAS_EXPORT.lstrip("\ufeff"))))
    export = tmp_path / "export.csv"
    with open(export, "w", newline="", encoding="utf-8-sig") as handle:
        csv.writer(handle, delimiter=delimiter).writerows(rows)
    init = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--yes", "--no-build", "--lms", "canvas",
                                     "--canvas-gradebook", str(export)])
    assert init.exit_code == 0, init.output
    assert tomllib.loads((course_copy / "course.toml").read_text())["assignment"]["n-queens"]["lms_column"] == \
        "N-Queens Puzzle (880101)"
    imported = CliRunner().invoke(main, ["--course", str(course_copy), "roster", "import", str(export)])
    assert imported.exit_code == 0, imported.output
    assert "1 student(s) added" in imported.output
    with CourseRecords.of(load_course(course_copy), create=False) as records:
        assert records.lms_columns() == canvas_columns(export)
        assert [(s.name, s.lms_id) for s in records.students()] == [("Alice Smith", "1001")]


def test_shipped_course_toml_is_what_init_writes():
    """So `autograder init` on a fresh fork changes only what the instructor changes."""
    data = tomllib.loads((ROOT / "course.toml").read_text())
    assert render(data, load_course(ROOT).assignment_ids()) == (ROOT / "course.toml").read_text()


def test_release_follows_the_course_lms_when_no_format_is_given(course_copy, tmp_path):
    out = fake_gradebook(tmp_path / "out", [dict(student="alice")])
    path = course_copy / "course.toml"
    path.write_text(path.read_text().replace('lms = "other"', 'lms = "classroom"'))
    result = run(release_command, "--out", out, "--to", tmp_path / "no-clones-here", obj=course_copy)
    assert result.exit_code == 1 and "is not a folder of GitHub Classroom clones" in result.output
    lms = run(release_command, "--out", out, "--to", tmp_path / "lms", "--format", "lms", obj=course_copy)
    # A Classroom course's own grade file is Classroom 50's; no Canvas file with every id blank beside it.
    assert lms.exit_code == 0 and (tmp_path / "lms" / "classroom50_scores.csv").is_file()
    assert not (tmp_path / "lms" / "canvas_grades.csv").exists()


def test_a_canvas_column_without_its_id_is_written_with_a_warning(course_copy):
    result = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--yes", "--no-build", "--lms", "canvas",
                                       "--lms-column", "n-queens=N-Queens"])
    assert result.exit_code == 0, result.output
    assert "warning: n-queens: Canvas heads grade columns `Name (id)`" in result.stderr
    assert load_course(course_copy).lms_column("n-queens") == "N-Queens"



def test_init_offers_the_machine_s_time_zone_and_reads_deadlines_on_the_course_s_clock(course_copy):
    """D2L's times (no offset) were read at the deadline's offset until course.toml was edited by hand: init asks
    for the zone, offering this machine's, and a deadline typed without an offset is on that zone's clock."""
    answers = ["", "", "", "d2l", "", "2026-10-01 23:59", "none", "", "none", "none", "", "none", "none", "",
               "none", "none", "", "", "", ""]
    result = CliRunner(env={"TZ": "America/Chicago"}).invoke(
        main, ["--course", str(course_copy), "init", "--no-build"], input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "time zone" in result.output and "[America/Chicago]" in result.output
    course = load_course(course_copy)
    assert course.timezone == "America/Chicago"
    deadline = course.assignments[course.assignment_ids()[0]]["deadline"]
    assert str(deadline) == "2026-10-01T23:59:00-05:00"         # the zone's summer offset on that day
    result = CliRunner(env={"TZ": "America/Chicago"}).invoke(
        main, ["--course", str(course_copy), "init", "--no-build"],
        input="\n".join(["", "", "", "d2l", "Europe/Paris", "2026-11-20 09:00"] + [""] * 20) + "\n")
    assert result.exit_code == 0, result.output
    course = load_course(course_copy)
    assert course.timezone == "Europe/Paris"
    assert str(course.assignments[course.assignment_ids()[0]]["deadline"]) == "2026-11-20T09:00:00+01:00"
    kept = CliRunner(env={"TZ": "Asia/Tokyo"}).invoke(main, ["--course", str(course_copy), "init", "--yes",
                                                             "--no-build"])
    assert kept.exit_code == 0 and load_course(course_copy).timezone == "Europe/Paris"   # --yes keeps it
    cleared = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--yes", "--no-build", "--timezone",
                                        "none"])
    assert cleared.exit_code == 0 and load_course(course_copy).timezone == ""


def test_a_column_the_export_given_lacks_is_refused_at_once(course_copy, tmp_path):
    export = tmp_path / "export.csv"
    export.write_text(CANVAS_EXPORT, encoding="utf-8")
    before = (course_copy / "course.toml").read_text()
    result = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--yes", "--no-build", "--lms", "canvas",
                                       "--canvas-gradebook", str(export),
                                       "--lms-column", "n-queens=N-Queens Puzzle (999999)"])
    assert result.exit_code == 1 and "has no such column" in result.output
    assert "'N-Queens Puzzle (880101)'" in result.output and "nothing was written" in result.output
    assert (course_copy / "course.toml").read_text() == before
    fine = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--yes", "--no-build", "--lms", "canvas",
                                     "--canvas-gradebook", str(export),
                                     "--lms-column", "n-queens=N-Queens Puzzle (880101)"])
    assert fine.exit_code == 0, fine.output


def test_init_asks_a_canvas_course_for_canvas_s_address_and_the_course_s_id(tmp_path):
    """`canvas pull` and `release --to canvas` need both: asked when the LMS is Canvas, re-asked when wrong; the
    address as pasted (a course's page) becomes the API's base, and plain http is refused."""
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(ROOT / "course.toml", root / "course.toml")
    shutil.copytree(ROOT / "autograder" / "assignments", root / "autograder" / "assignments")
    answers = ["My course", "https://github.com/me/queens", "", "canvas", "",             # the time zone: Enter
               "http://canvas.uni.edu", "https://canvas.uni.edu/courses/4200/assignments",   # refused, then taken
               "forty-two", "4200",                                                        # refused, then taken
               "", *[""] * 12, "", "", ""]
    result = CliRunner().invoke(main, ["--course", str(root), "init", "--no-build"], input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "is not Canvas's https address" in result.output and "is not a Canvas id" in result.output
    data = tomllib.loads((root / "course.toml").read_text())
    assert (data["course"]["canvas_url"], data["course"]["canvas_course"]) == ("https://canvas.uni.edu", 4200)
    from autograder.core.course import load_course
    course = load_course(root)
    assert (course.canvas_url, course.canvas_course) == ("https://canvas.uni.edu", "4200")
    again = CliRunner().invoke(main, ["--course", str(root), "init", "--yes", "--no-build",
                                      "--canvas-course", "4201"])
    assert again.exit_code == 0, again.output
    assert tomllib.loads((root / "course.toml").read_text())["course"]["canvas_course"] == 4201
