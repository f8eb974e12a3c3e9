"""Issue 30's "Done when", each graded with the real command: LMS downloads as they ship, students' habits,
and identity only from what an LMS wrote (issue 32, items 6 and 10)."""

import csv
import json
import shutil
import sqlite3
import subprocess
import zipfile

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.intake import IntakeOptions, collect
from conftest import ROOT
from lms_downloads import ALICE, BOB, CLASS, add, blackboard, d2l, drive, gradescope_unzipped, gradescope_zip, teams
from test_intake_layouts import clone, git, grade, read_rows, run

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

OPTIONS = IntakeOptions("n-queens", "n-queens.ipynb")


def cli(course, *args):
    result = CliRunner().invoke(main, ["--course", str(course), *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.output


# --- every LMS's download ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("layout", [gradescope_zip, gradescope_unzipped])
def test_a_gradescope_export_zipped_or_unzipped_gives_one_row_per_submitter_with_names_emails_and_times(
        layout, tmp_path):
    path, _ = layout(tmp_path)
    rows, _ = grade(tmp_path / "out", path)
    assert {k: (r["name"], r["score"]) for k, r in rows.items()} == {
        f"gradescope:{900 + n}": (name, "5" if notebook == ALICE else "2.9")
        for n, (name, _, notebook) in enumerate(CLASS)}
    assert rows["gradescope:900"]["handed_in_at"] == "2026-03-01T18:00:00+00:00"
    with sqlite3.connect(tmp_path / "out" / "gradebook.db") as db:
        emails = dict(db.execute("SELECT student, email FROM submissions"))
    assert emails["gradescope:901"] == "bjones@uni.example"


@pytest.mark.slow
def test_blackboard_d2l_drive_and_teams_downloads_of_one_class_give_one_row_per_student(tmp_path):
    downloads = [layout(tmp_path)[0] for layout in (blackboard, d2l, drive, teams)]
    rows, output = grade(tmp_path / "out", *downloads)
    for lms in ("blackboard", "d2l", "drive", "teams"):
        mine = {k: r for k, r in rows.items() if k.startswith(f"{lms}:")}
        assert sorted(r["name"] for r in mine.values()) == sorted(name for name, _, _ in CLASS), lms
        assert {r["name"]: r["score"] for r in mine.values()} == {
            name: "5" if notebook == ALICE else "2.9" for name, _, notebook in CLASS}, lms
    # The LMS's own time: Blackboard's receipt (with its zone), D2L's file name; never the zip entry's.
    bob = rows["blackboard:bjones"]
    assert (bob["handed_in_at"], bob["handins"]) == ("2026-03-03T15:15:01-05:00", "2")
    assert "Blackboard's receipt" in bob["time_source"] and "attempt 2 of 2" in bob["message"]
    assert rows["d2l:name:Alice Smith"]["handed_in_at"] == "2026-03-02T15:15:00"
    # Zoe's own upload in the Drive folder carries no name: its own row, keyed by its path, and said.
    assert rows["N-Queens-20260302T151500Z-001.zip_N-Queens/n-queens.ipynb"]["score"] == "5"
    assert "Google Drive folder download" in output


@pytest.mark.slow
def test_blackboard_and_d2l_rosters_import_and_match_their_downloads(course_copy, tmp_path):
    roster = tmp_path / "full_grade_centre.csv"
    roster.write_text('"Last Name","First Name","Username","Student ID","Last Access","Availability",'
                      '"N-Queens [Total Pts: 5 Score] |664617"\n'
                      + "".join(f'"{name.split()[1]}","{name.split()[0]}","{user}","S{n}","","Yes",""\n'
                                for n, (name, user, _) in enumerate(CLASS)), encoding="utf-8")
    assert "4 student(s) added" in cli(course_copy, "roster", "import", roster)
    path, _ = blackboard(tmp_path)
    rows, _ = grade(tmp_path / "out", path, course=course_copy)
    assert {k: r["on_roster"] for k, r in rows.items()} == {f"blackboard:{u}": "yes" for _, u, _ in CLASS}
    cli(course_copy, "feedback", "--out", tmp_path / "out")
    cli(course_copy, "release", "--out", tmp_path / "out", "--to", tmp_path / "release")
    upload = (tmp_path / "release" / "blackboard_grades.csv").read_text()
    # The Grade Centre's own column, imported with the roster: a title would make Blackboard add a new column.
    assert upload.splitlines()[0] == '"Last Name","First Name","Username","N-Queens [Total Pts: 5 Score] |664617"'
    assert '"Jones","Bob","bjones","2.9"' in upload


@pytest.mark.slow
def test_d2l_submissions_under_one_name_without_a_class_list_are_never_merged_nor_released(course_copy, tmp_path):
    """The trial: with no roster, two students called Chris Lee (D2L submissions 154320 and 154321) became one
    row, the last counting for both: 0, the other's 5 gone.  D2L's download names no user, so nothing there
    tells one student's resubmission from two namesakes: each keeps a row, and no number is released."""
    path = tmp_path / "N-Queens Download Nov 2, 2026 1000 AM.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        add(bundle, "154320-98760 - Chris Lee - Nov 1, 2026 915 PM - n-queens.ipynb", ALICE)
        add(bundle, "154321-98761 - Chris Lee - Nov 1, 2026 1130 PM - n-queens.ipynb", BOB)
        add(bundle, "154322-98762 - Ann Park - Nov 1, 2026 800 PM - n-queens.ipynb", ALICE)
    out = tmp_path / "out"
    rows, output = grade(out, path, course=course_copy)
    # The earlier is not run (issue 38: D2L takes any number of resubmissions, each could take its whole budget):
    # no score, never 0, until the class list places each or --all-submissions asks.
    assert {k: (r["score"], r["status"]) for k, r in rows.items()} == {
        "d2l:submission:154320": ("", "superseded"), "d2l:submission:154321": ("2.9", "graded"),
        "d2l:name:Ann Park": ("5", "graded")}
    assert "154321-98761 - Chris Lee - Nov 1, 2026 1130 PM - n-queens.ipynb) counts if both are one student's" \
        in rows["d2l:submission:154320"]["message"]
    assert all("one student's resubmissions, or students of one name?" in rows[k]["message"]
               for k in ("d2l:submission:154320", "d2l:submission:154321"))
    everyone, _ = grade(tmp_path / "all", path, extra=["--all-submissions"], course=course_copy)
    assert {k: r["score"] for k, r in everyone.items()} == {
        "d2l:submission:154320": "5", "d2l:submission:154321": "2.9", "d2l:name:Ann Park": "5"}
    assert "1 name(s) with several D2L submissions and no class list" in " ".join(output.split())
    cli(course_copy, "feedback", "--out", out)
    refused = CliRunner().invoke(main, ["--course", str(course_copy), "release", "--out", str(out), "--to",
                                        str(tmp_path / "release")])
    assert refused.exit_code != 0 and "cannot be placed without a class list" in " ".join(refused.output.split())
    assert not (tmp_path / "release").exists() or not any((tmp_path / "release").iterdir())


# --- one submission, two notebooks; a zip inside a submission -------------------------------------------


@pytest.mark.slow
def test_a_canvas_submission_with_a_blank_copy_scores_5_and_names_both_notebooks(tmp_path):
    archive = tmp_path / "submissions.zip"
    template = ROOT / "assignments" / "n-queens" / "n-queens.ipynb"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, "smithalice_1001_5001_n-queens.ipynb", ALICE)
        add(bundle, "smithalice_1001_5002_Copy of n-queens.ipynb", template)
        add(bundle, "jonesbob_1002_5003_draft.ipynb", template)
        add(bundle, "jonesbob_1002_5004_final.ipynb", ALICE)
    out = tmp_path / "out"
    rows, _ = grade(out, archive)
    alice, bob = rows["canvas:1001"], rows["canvas:1002"]
    assert (alice["score"], alice["handins"]) == ("5", "1") and alice["source"].endswith("_n-queens.ipynb")
    assert "n-queens.ipynb, Copy of n-queens.ipynb" in alice["message"] and "n-queens.ipynb counts" in alice["message"]
    assert (bob["score"], bob["handins"]) == ("5", "2") and "best one counts" in bob["message"]
    cli(ROOT, "feedback", "--out", out)
    page = next((out / "feedback").glob("*canvas_1001*/feedback.html")).read_text()
    assert "About your hand-in: 2 notebooks in one submission" in page and "Copy of n-queens.ipynb" in page


def test_a_zip_inside_a_canvas_or_moodle_submission_is_opened_as_the_student_s(tmp_path):
    inner = tmp_path / "work.zip"
    with zipfile.ZipFile(inner, "w") as bundle:
        add(bundle, "work/n-queens.ipynb", ALICE)
    canvas, moodle = tmp_path / "submissions.zip", tmp_path / "moodle.zip"
    with zipfile.ZipFile(canvas, "w") as bundle:
        add(bundle, "smithalice_1001_5001_work.zip", inner)
    with zipfile.ZipFile(moodle, "w") as bundle:
        add(bundle, "Jane Doe_501_assignsubmission_file/work.zip", inner)
    rows, _ = grade(tmp_path / "out", canvas, moodle)
    assert (rows["canvas:1001"]["score"], rows["moodle:501"]["score"]) == ("5", "5")
    assert "came in a zip, smithalice_1001_5001_work.zip" in rows["canvas:1001"]["message"]


def test_zips_nested_deeper_than_two_are_not_opened(tmp_path):
    data = ALICE.read_bytes()
    for depth in range(4):
        path = tmp_path / f"level{depth}.zip"
        with zipfile.ZipFile(path, "w") as bundle:
            add(bundle, "n-queens.ipynb" if depth == 0 else f"level{depth - 1}.zip", data)
        data = path.read_bytes()
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, "Jane Doe_501_assignsubmission_file/level3.zip", data)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    (row,) = intake.handins
    assert (row.student, row.status) == ("moodle:501", "no-notebook")
    assert any("nested more than 2 deep" in ignored for ignored in intake.ignored)


# --- Colab parity ---------------------------------------------------------------------------------------


def colab_notebook(tmp_path):
    """alice's correct notebook with Colab's habits among its imports: tqdm, and google.colab's files and drive."""
    notebook = json.loads(ALICE.read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    first = next(c for c in code if "import" in "".join(c["source"]))
    first["source"] = ("import tqdm\nfrom tqdm.auto import tqdm as progress\nfrom google.colab import files, drive\n"
                       "drive.mount('/content/drive')\nuploaded = files.upload()\nimport pandas as pd\n"
                       "import ipywidgets\nimport matplotlib.pyplot as plt\n" + "".join(first["source"]))
    path = tmp_path / "colab.ipynb"
    path.write_text(json.dumps(notebook))
    return path


def test_a_correct_notebook_with_tqdm_and_google_colab_among_its_imports_scores_5(tmp_path):
    out = tmp_path / "out"
    rows, _ = grade(out, colab_notebook(tmp_path))
    assert (rows["colab"]["score"], rows["colab"]["status"]) == ("5", "graded")
    assert "google.colab, which is a stand-in" in rows["colab"]["message"]
    cli(ROOT, "feedback", "--out", out)
    page = next((out / "feedback").glob("colab*/feedback.md")).read_text()
    assert "About your hand-in: the notebook uses google.colab, which is a stand-in" in page


@pytest.mark.kernel
def test_the_colab_notebook_runs_in_the_student_environment_too(tmp_path):
    """The student environment (requirements-student.txt) has what the worker has: the same notebook runs top
    to bottom in it, but for Colab's own module, which only Colab has."""
    from conftest import STUDENT_PYTHON
    notebook = json.loads(colab_notebook(tmp_path).read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["source"] = "".join(line for line in "".join(cell["source"]).splitlines(True)
                                     if "google.colab" not in line and "drive.mount" not in line
                                     and "files.upload" not in line)
    (tmp_path / "local.ipynb").write_text(json.dumps(notebook))
    done = subprocess.run([STUDENT_PYTHON.parent / "jupyter", "nbconvert", "--to", "notebook", "--execute",
                           "--output", "ran", tmp_path / "local.ipynb"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


# --- GitHub Classroom by the roster ---------------------------------------------------------------------


CLASSROOM50 = "username,first_name,last_name,email,section,github_id\n" \
              "alice,Alice,Smith,alice@uni.example,A,101\nbob,Bob,Jones,bob@uni.example,B,102\n"


@pytest.mark.slow
def test_classroom_clones_named_any_way_are_matched_by_the_roster_s_github_usernames(course_copy, tmp_path):
    classroom = tmp_path / "classroom"
    for name, notebook in (("cs-principles-n-queens-alice", ALICE), ("n-queens-puzzle-bob", BOB),
                           ("n-queens-puzzle-mallory", BOB)):
        repo = classroom / name
        repo.mkdir(parents=True)
        git(repo, "init", "-q")
        shutil.copy(notebook, repo / "n-queens.ipynb")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "hand in")
    unrostered = run(tmp_path / "plain", classroom, course=course_copy)
    assert "cannot be told from the name alone" in " ".join(unrostered.output.split())
    assert sorted(r["student"] for r in read_rows(tmp_path / "plain")) == [
        "cs-principles-n-queens-alice", "n-queens-puzzle-bob", "n-queens-puzzle-mallory"]   # never a guessed slice
    roster = tmp_path / "roster.csv"
    roster.write_text(CLASSROOM50)
    assert "Classroom 50 roster: 2 student(s) added" in cli(course_copy, "roster", "import", roster)
    rows, output = grade(tmp_path / "out", classroom, course=course_copy)
    assert {k: (r["name"], r["score"], r["on_roster"]) for k, r in rows.items()} == {
        "alice": ("Alice Smith", "5", "yes"), "bob": ("Bob Jones", "2.9", "yes"),
        "n-queens-puzzle-mallory": ("n-queens-puzzle-mallory", "2.9", "no")}
    output = " ".join(output.split())
    assert "match no GitHub username on the roster" in output and "n-queens-puzzle-mallory" in output


@pytest.mark.slow
def test_classroom_50_s_download_is_read_by_its_roster_and_released_as_its_scores_csv(course_copy, tmp_path):
    """`gh teacher download <org> cs-principles n-queens` clones each team member's
    `cs-principles-n-queens-<username>` into `cs-principles-n-queens_submissions_<time>/`, with its scores.csv at
    the top and Classroom 50's own result.json in each clone (download.go).  Its roster.csv names the teaching
    team too (`role`): they are no students, so never missing."""
    download = tmp_path / "cs-principles-n-queens_submissions_2026_11_02_T_10_00_00"
    for user, notebook in (("alice", ALICE), ("bob", BOB)):
        repo = download / f"cs-principles-n-queens-{user}"
        repo.mkdir(parents=True)
        git(repo, "init", "-q")
        shutil.copy(notebook, repo / "n-queens.ipynb")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "hand in")
        (repo / "result.json").write_text('{"schema": "classroom50/result/v1", "score": 13, "max-score": 13}')
        (repo / "results.json").write_text("[]")
    (download / "scores.csv").write_text("username,first_name,last_name,email,section,score,max_score,datetime,"
                                         "submission_tag,submitted_by,review_url,late,override\n")
    roster = tmp_path / "roster.csv"
    roster.write_text("username,first_name,last_name,email,section,github_id,role\n"
                      "alice,Alice,Smith,alice@uni.example,A,101,student\nbob,Bob,Jones,bob@uni.example,B,102,\n"
                      "tina,Tina,Assist,tina@uni.example,,103,ta\n")
    toml = course_copy / "course.toml"
    toml.write_text(toml.read_text().replace('lms = "other"', 'lms = "classroom"'))
    imported = CliRunner().invoke(main, ["--course", str(course_copy), "roster", "import", str(roster)])
    assert "Classroom 50 roster: 2 student(s) added" in imported.output
    assert "Tina Assist (tina) is ta on the teaching team, not a student" in imported.output
    rows, output = grade(tmp_path / "out", download, course=course_copy)
    assert {k: (r["name"], r["score"], r["on_roster"]) for k, r in rows.items()} == {
        "alice": ("Alice Smith", "5", "yes"), "bob": ("Bob Jones", "2.9", "yes")}
    assert "warning" not in output
    released = CliRunner().invoke(main, ["--course", str(course_copy), "release", "--out", str(tmp_path / "out"),
                                         "--to", str(tmp_path / "release"), "--format", "lms"])
    assert released.exit_code == 0, released.output
    files = sorted(p.name for p in (tmp_path / "release").iterdir() if p.suffix == ".csv")
    assert files == ["adjustments.csv", "classroom50_scores.csv", "lateness.csv"]      # no Canvas file, no D2L
    with open(tmp_path / "release" / "classroom50_scores.csv", newline="", encoding="utf-8") as handle:
        scores = {row["username"]: row for row in csv.DictReader(handle)}
    assert (scores["alice"]["first_name"], scores["alice"]["last_name"], scores["alice"]["score"],
            scores["alice"]["max_score"], scores["alice"]["section"]) == ("Alice", "Smith", "5", "5", "A")
    assert scores["bob"]["score"] == "2.9" and "tina" not in scores


# --- identity only from what the LMS wrote (issue 32, item 6) -------------------------------------------


CANVAS_ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section,N-Queens (501)\n"
                 '"King, Carol",1003,S1003,cking,Section B,\n"Smith, Alice",1001,S1001,asmith,Section A,\n')


def test_a_file_or_repository_named_after_a_login_is_never_that_student_s(course_copy, tmp_path):
    roster = tmp_path / "export.csv"
    roster.write_text(CANVAS_ROSTER)
    cli(course_copy, "roster", "import", roster)
    folder = tmp_path / "in"
    folder.mkdir()
    template = ROOT / "assignments" / "n-queens" / "n-queens.ipynb"
    shutil.copy(template, folder / "cking.ipynb")                          # Mallory's stub, named after a login
    shutil.copy(template, folder / "s1003.ipynb")                          # ... after an SIS id
    clone(tmp_path / "classroom", "cking", ALICE)                          # ... a repository after a login
    rows, _ = grade(tmp_path / "out", folder, tmp_path / "classroom", course=course_copy)
    assert rows["canvas:1003"]["status"] in ("missing", "not-yet")         # Carol's row is not the stub's
    assert rows["cking"]["on_roster"] == "no" and rows["s1003"]["on_roster"] == "no"


SEPARATORS = ["\\", "/", "\u2215", "\u2044", "\uff0f", "\u29f8", ":", "\x00", "\n", "\u202e"]


@pytest.mark.parametrize("separator", SEPARATORS, ids=[f"U+{ord(s):04X}" for s in SEPARATORS])
def test_no_separator_or_look_alike_files_a_hand_in_under_a_classmate_s_lms_id(separator, tmp_path):
    """Mallory (Moodle 503, Canvas 1003, Blackboard mallory, D2L "Mallory Evans") names her file so that what
    follows a separator looks like Jane's (502, 1002, jane, "Jane Doe"): every LMS's parser keeps it hers."""
    stub = (ROOT / "assignments" / "n-queens" / "n-queens.ipynb").read_bytes()
    s = separator
    downloads = {
        "moodle": ([("Jane Doe_502_assignsubmission_file_n-queens.ipynb", ALICE),
                    (f"Mallory Evans_503_assignsubmission_file_x{s}x_502_assignsubmission_file_{s}n-queens.ipynb",
                     stub)], "moodle:502", "moodle:503"),
        "moodle-folders": ([("Jane Doe_502_assignsubmission_file/n-queens.ipynb", ALICE),
                            (f"Mallory Evans_503_assignsubmission_file/x{s}Jane Doe_502_assignsubmission_file{s}"
                             "n-queens.ipynb", stub)], "moodle:502", "moodle:503"),
        "canvas": ([("doejane_1002_5002_n-queens.ipynb", ALICE),
                    (f"evansmallory_1003_5003_x{s}doejane_1002_5004_n-queens.ipynb", stub)], "canvas:1002",
                   "canvas:1003"),
        "blackboard": ([("N-Queens_jane_attempt_2026-03-02-10-00-00_n-queens.ipynb", ALICE),
                        (f"N-Queens_mallory_attempt_2026-03-02-11-00-00_x{s}N-Queens_jane_attempt_"
                         "2026-03-03-10-00-00_n-queens.ipynb", stub)], "blackboard:jane", "blackboard:mallory"),
        "d2l": ([("1-1 - Jane Doe - Mar 2, 2026 315 PM - n-queens.ipynb", ALICE),
                 (f"2-2 - Mallory Evans - Mar 2, 2026 316 PM - x{s}3-3 - Jane Doe - Mar 3, 2026 315 PM - "
                  "n-queens.ipynb", stub)], "d2l:name:Jane Doe", "d2l:name:Mallory Evans"),
    }
    for lms, (entries, jane, mallory) in downloads.items():
        archive = tmp_path / f"{lms}.zip"
        with zipfile.ZipFile(archive, "w") as bundle:
            for name, data in entries:
                try:
                    add(bundle, name, data)
                except ValueError:           # a NUL: zipfile cuts the name there, as an LMS's zip tool would not
                    add(bundle, name.replace("\x00", "_"), data)
        intake = collect([archive], tmp_path / f"out-{lms}", OPTIONS)
        graded = {h.student: h for h in intake.handins if h.status is None or h.status == "unsafe-path"}
        janes = [h for h in intake.handins if h.student == jane]
        assert len(janes) == 1 and janes[0].sha256 == _sha(ALICE.read_bytes()), (lms, sorted(graded))
        if separator != "/":     # no LMS writes a `/` into a name: there it is a folder, and Jane's row stands
            assert any(h.student == mallory for h in intake.handins), (lms, sorted(graded))


def _sha(data):
    import hashlib
    return hashlib.sha256(data).hexdigest()


# --- names never decide whether a hand-in is graded (issue 32, item 10) ---------------------------------


@pytest.mark.parametrize("name", [".", "...", "CON", "..", " ", "Test Student", "a/b", "-", "NUL.txt"])
def test_any_full_name_gets_its_row(name, tmp_path):
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, f"{name}_701_assignsubmission_file/n-queens.ipynb", ALICE)
        add(bundle, f"{name}_702_assignsubmission_file_n-queens.ipynb", ALICE)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    rows = {h.student: h for h in intake.handins}
    assert "moodle:702" in rows and rows["moodle:702"].status is None
    if "/" not in name and name not in (".", ".."):   # a zip entry `./…` or `../…` is no folder of a student
        assert "moodle:701" in rows and rows["moodle:701"].status is None, sorted(rows)


# --- the odd ones ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_trailing_nuls_marimo_look_alike_names_and_plaintext_language_info_each_get_clear_words(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "nadia.ipynb").write_bytes(ALICE.read_bytes() + b"\0" * 4096)
    (folder / "zed.ipynb").write_bytes(ALICE.read_bytes()[:100] + b"\0" * 10 + ALICE.read_bytes()[100:])
    notebook = json.loads(ALICE.read_text())
    code = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    cells = "\n\n".join(f"@app.cell\ndef _():\n" + "".join(f"    {line}" for line in source.splitlines(True))
                        + "\n    return\n" for source in code)
    (folder / "mara.py").write_text(f"import marimo\n\n__generated_with = \"0.25.2\"\napp = marimo.App()\n\n\n{cells}"
                                    "\n\nif __name__ == \"__main__\":\n    app.run()\n")
    shutil.copy(ALICE, folder / "x_4_0_y.ipynb")                           # looks like a Canvas name: is not one
    # nbformat's own tests/no_min_version.ipynb (no kernelspec, language_info "plaintext"), a solution added.
    plain = {"cells": notebook["cells"], "metadata": {"language_info": {"name": "plaintext"}, "orig_nbformat": 4},
             "nbformat": 4}
    (folder / "pat.ipynb").write_text(json.dumps(plain))
    rows, output = grade(tmp_path / "out", folder)
    assert rows["nadia"]["score"] == "5" and "4,096 NUL bytes" in rows["nadia"]["message"]
    assert rows["zed"]["status"] == "invalid-notebook" and "NUL bytes (the first at byte 100)" in rows["zed"]["message"]
    assert rows["mara"]["score"] == "5" and "marimo notebook" in rows["mara"]["message"]
    assert rows["x_4_0_y"]["score"] == "5" and "canvas:4" not in rows
    assert "named like an LMS's download" in output
    assert (rows["pat"]["score"], rows["pat"]["status"]) == ("5", "graded")
