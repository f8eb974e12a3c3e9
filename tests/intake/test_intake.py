"""Hand-ins as LMSs and GitHub Classroom deliver them."""

import csv
import os
import shutil
import sqlite3
import stat
import subprocess
import zipfile

from click.testing import CliRunner

from autograder.cli.main import main
from autograder.intake import IntakeOptions, collect
from conftest import ROOT
import pytest

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
OPTIONS = IntakeOptions("n-queens", "n-queens.ipynb")


def by_student(intake):
    return {h.student: h for h in intake.handins}


def grade(out, *paths, extra=()):
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", str(out), *extra, *map(str, paths)])
    assert result.exit_code == 0, result.output
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}, result.output


def canvas_zip(path):
    with zipfile.ZipFile(path, "w") as bundle:
        bundle.write(SUBMISSIONS / "alice.ipynb", "alice_1001_5001_n-queens.ipynb")
        bundle.write(SUBMISSIONS / "carol.ipynb", "carolking_LATE_1002_5002_Copy of n-queens.ipynb")
        bundle.writestr("dave_1003_5003_answers.pdf", b"%PDF-1.4 not a notebook")
        bundle.writestr("../../evil_1004_5004_n-queens.ipynb", "{}")
        link = zipfile.ZipInfo("mallet_1005_5005_n-queens.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        bundle.writestr(link, "/etc/passwd")
    return path


@pytest.mark.slow
def test_canvas_zip_names_students_and_refuses_unsafe_entries(tmp_path):
    rows, _ = grade(tmp_path / "out", canvas_zip(tmp_path / "submissions.zip"))
    assert rows["canvas:1001"]["score"] == "5" and rows["canvas:1001"]["status"] == "graded"
    assert rows["canvas:1001"]["name"] == "alice"
    assert rows["canvas:1002"]["score"] == "4.3"         # a Drive-renamed notebook grades like any other
    assert rows["canvas:1002"]["late"] == "yes"          # Canvas's _LATE_ mark is kept
    assert rows["canvas:1003"]["status"] == "wrong-file-type"
    assert rows["canvas:1004"]["status"] == "unsafe-path"
    assert rows["canvas:1005"]["status"] == "unsafe-path"
    assert not (tmp_path / "evil_1004_5004_n-queens.ipynb").exists()
    written = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert all((tmp_path / "out") in p.parents or p.name == "submissions.zip" for p in written)


def test_moodle_folders_name_students(tmp_path):
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(SUBMISSIONS / "alice.ipynb", "Alice Smith_4711_assignsubmission_file_/n-queens.ipynb")
        bundle.write(SUBMISSIONS / "bob.ipynb", "Bob Jones_4712_assignsubmission_file_/nqueens (1).ipynb")
    intake = collect([archive], tmp_path / "out", OPTIONS)
    assert sorted(by_student(intake)) == ["moodle:4711", "moodle:4712"]
    assert sorted(h.name for h in intake.handins) == ["Alice Smith", "Bob Jones"]


def test_gradescope_export_uses_its_metadata(tmp_path):
    export = tmp_path / "export"
    (export / "submission_111").mkdir(parents=True)
    (export / "submission_222").mkdir()
    shutil.copy(SUBMISSIONS / "alice.ipynb", export / "submission_111" / "n-queens.ipynb")
    shutil.copy(SUBMISSIONS / "bob.ipynb", export / "submission_222" / "n-queens.ipynb")
    (export / "submission_metadata.yml").write_text(
        "submission_111:\n"
        "  :submitters:\n"
        "  - :name: Ada Lovelace\n    :sid: '1'\n    :email: ada@example.edu\n"
        "  - :name: Alan Turing\n    :sid: '2'\n    :email: alan@example.edu\n"
        "  :created_at: 2026-03-01 10:00:00.000000000 -08:00\n"
        "submission_222:\n"
        "  :submitters:\n"
        "  - :name: Grace Hopper\n    :sid: '3'\n"
        "  :created_at: 2026-03-01 11:00:00.000000000 -08:00\n")
    intake = collect([export], tmp_path / "out", OPTIONS)
    assert sorted(by_student(intake)) == ["gradescope:1", "gradescope:2", "gradescope:3"]
    assert by_student(intake)["gradescope:1"].name == "Ada Lovelace"
    assert by_student(intake)["gradescope:1"].email == "ada@example.edu"
    assert by_student(intake)["gradescope:1"].submitted_at == "2026-03-01T18:00:00+00:00"


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@example.edu",
                        "GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@example.edu"})


def test_classroom_repositories(tmp_path):
    classroom = tmp_path / "classroom"
    for user, notebook in (("alice", "alice.ipynb"), ("bob", None)):
        repo = classroom / f"n-queens-{user}"
        repo.mkdir(parents=True)
        git(repo, "init", "-q")
        (repo / "README.md").write_text("# my work\n")
        if notebook:
            shutil.copy(SUBMISSIONS / notebook, repo / "n-queens.ipynb")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "hand in")
    rows, output = grade(tmp_path / "out", classroom)
    assert rows["alice"]["score"] == "5"
    assert rows["bob"]["status"] == "no-notebook"
    assert "README.md" not in output  # files of a repository are not hand-ins


def test_two_notebooks_in_one_canvas_submission_are_both_graded_the_best_counts_and_both_are_recorded(tmp_path):
    # Canvas's download holds one submission's files: neither notebook is named like the assignment, so each
    # is graded and the best counts, whichever file a browser happened to write last.
    handins = tmp_path / "handins"
    handins.mkdir()
    early = shutil.copy(SUBMISSIONS / "alice.ipynb", handins / "zoe_1_1_draft.ipynb")
    late = shutil.copy(SUBMISSIONS / "bob.ipynb", handins / "zoe_1_2_final.ipynb")
    os.utime(early, (1_700_000_000, 1_700_000_000))
    os.utime(late, (1_700_100_000, 1_700_100_000))
    rows, _ = grade(tmp_path / "out", handins)
    assert rows["canvas:1"]["score"] == "5" and rows["canvas:1"]["handins"] == "2"
    assert rows["canvas:1"]["source"].endswith("zoe_1_1_draft.ipynb")
    assert "2 notebooks in one submission (draft.ipynb, final.ipynb)" in rows["canvas:1"]["message"]
    db = sqlite3.connect(tmp_path / "out" / "gradebook.db")
    recorded = db.execute("SELECT score, counted FROM submissions WHERE name = 'zoe' ORDER BY score").fetchall()
    assert recorded == [(0.0, 0), (5.0, 1)]


def test_a_student_pattern_overrides_the_name_rules(tmp_path):
    folder = tmp_path / "in" / "section-2" / "s1234567"
    folder.mkdir(parents=True)
    shutil.copy(SUBMISSIONS / "alice.ipynb", folder / "n-queens.ipynb")
    intake = collect([tmp_path / "in"], tmp_path / "out", IntakeOptions(
        "n-queens", "n-queens.ipynb", student_pattern=r"(?P<student>s\d{7})/"))
    assert list(by_student(intake)) == ["s1234567"]


def test_a_damaged_zip_gets_a_row(tmp_path):
    archive = tmp_path / "broken.zip"
    archive.write_bytes(b"PK\x03\x04 this is not really a zip")
    rows, _ = grade(tmp_path / "out", archive)
    assert rows["broken"]["status"] == "invalid-zip"


def test_non_utf8_and_non_notebook_json_get_clear_statuses(tmp_path):
    (tmp_path / "latin.ipynb").write_bytes("{\"cells\": [\"café\"]}".encode("latin-1"))
    (tmp_path / "notnb.ipynb").write_text('{"hello": "world"}')
    rows, _ = grade(tmp_path / "out", tmp_path / "latin.ipynb", tmp_path / "notnb.ipynb")
    assert rows["latin"]["status"] == "invalid-notebook" and "UTF-8" in rows["latin"]["message"]
    assert rows["notnb"]["status"] == "invalid-notebook"


def test_missing_path_and_unwritable_output_are_one_line_errors(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                  "--out", str(tmp_path / "o"), str(tmp_path / "nope.ipynb")])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = runner.invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                  "--out", str(blocker / "sub"), str(SUBMISSIONS / "alice.ipynb")])
    assert result.exit_code == 1 and "cannot write to" in result.output and result.output.count("\n") == 1
    result = runner.invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens", "--jobs", "0",
                                  "--out", str(tmp_path / "o"), str(SUBMISSIONS / "alice.ipynb")])
    assert result.exit_code == 2


def test_a_relative_output_folder_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(SUBMISSIONS / "alice.ipynb", tmp_path / "alice.ipynb")
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens",
                                       "--out", "out/grades", "alice.ipynb"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "grades" / "grades.csv").read_text().splitlines()[1].startswith("alice,n-queens,5,")
