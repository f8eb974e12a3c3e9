"""No upload costs more than its limits (issue 38): disk and files per upload and per class, notebooks per
submission, resubmissions, and what stays in --out after grading.

Each limit is stated in docs/grading.md ("What one upload may cost"); each test here builds an upload of at
most 1 MB that the old limits (per zip, not per upload) let cost far more, and checks what it costs now and
what its row says.  The disk is measured on the folder intake unpacks into, right after intake.
"""

import io
import json
import os
import sqlite3
import zipfile

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.intake import IntakeOptions, budget, collect
from autograder.intake.assemble import MAX_NOTEBOOKS
from conftest import ROOT
from lms_downloads import add, blackboard_receipt
from test_intake_layouts import grade, read_rows

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

OPTIONS = IntakeOptions("n-queens", "n-queens.ipynb")
SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
ALICE, BOB = SUBMISSIONS / "alice.ipynb", SUBMISSIONS / "bob.ipynb"      # 5 and 0 points
MB = 1024 * 1024


def zipped(entries, method=zipfile.ZIP_DEFLATED):
    """The bytes of a zip of `entries` [(name, bytes)]."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method, compresslevel=9) as bundle:
        for name, data in entries:
            bundle.writestr(name, data)
    return buffer.getvalue()


def canvas_download(path, uploads):
    """A Canvas download: {file name in the download: bytes}."""
    with zipfile.ZipFile(path, "w") as bundle:
        for name, data in uploads.items():
            add(bundle, name, data)
    return path


def cost(folder):
    """(bytes, files and folders) under `folder`."""
    size = count = 0
    for here, folders, files in os.walk(folder):
        count += len(folders) + len(files)
        size += sum(os.lstat(os.path.join(here, name)).st_size for name in files)
    return size, count


def rows_of(intake, student):
    return [h for h in intake.handins if h.student == student]


# --- disk ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_1_mb_upload_of_nested_zips_unpacks_at_most_the_upload_s_bytes(tmp_path):
    # Ten copies of a zip of two 40 MB files of zeros: 10 x 80 MB before (each zip had 2 GB to itself).
    inner = zipped([("a.bin", bytes(40 * MB)), ("b.bin", bytes(40 * MB))])
    upload = zipped([(f"copy{n}/inner{n}.zip", inner) for n in range(10)], zipfile.ZIP_STORED)
    assert len(upload) < MB
    download = canvas_download(tmp_path / "submissions.zip", {
        "smithalice_1001_5001_work.zip": upload, "jonesbob_1002_5002_n-queens.ipynb": ALICE.read_bytes()})
    intake = collect([download], tmp_path / "handins", OPTIONS)
    size, _ = cost(tmp_path / "handins")
    assert size <= budget.UPLOAD.bytes + download.stat().st_size
    (limit,) = [h for h in rows_of(intake, "canvas:1001") if h.status == "too-large"]
    assert "one upload may unpack at most 100 MB" in limit.message and "were not unpacked" in limit.message
    assert [h.status for h in rows_of(intake, "canvas:1002")] == [None]      # the classmate is read as usual


@pytest.mark.slow
def test_a_1_mb_upload_of_nested_zips_makes_at_most_the_upload_s_files_and_folders(tmp_path):
    # 30 inner zips of 1,000 empty files each: 30,036 files were unpacked from one upload before.
    inner = zipped([(f"f{n}", b"") for n in range(1000)])
    upload = zipped([(f"inner{n}.zip", inner) for n in range(30)])
    assert len(upload) < MB
    download = canvas_download(tmp_path / "submissions.zip", {"smithalice_1001_5001_work.zip": upload})
    intake = collect([download], tmp_path / "handins", OPTIONS)
    _, count = cost(tmp_path / "handins")
    opened = sum(1 for _ in (tmp_path / "handins").iterdir())          # one folder per zip opened
    assert count <= budget.UPLOAD.files + opened + 1
    (limit,) = [h for h in rows_of(intake, "canvas:1001") if h.status == "too-large"]
    assert "one upload may unpack at most" in limit.message


def test_folders_made_count_as_files_so_deep_paths_cannot_multiply_them(tmp_path, monkeypatch):
    monkeypatch.setattr(budget, "UPLOAD", budget.Limits(bytes=100 * MB, entries=2_000, files=100))
    upload = zipped([(f"{n}/" + "d/" * 30 + "x.txt", b"x") for n in range(20)])
    download = canvas_download(tmp_path / "submissions.zip", {"smithalice_1001_5001_work.zip": upload})
    intake = collect([download], tmp_path / "handins", OPTIONS)
    _, count = cost(tmp_path / "handins")
    assert count <= 100 + 3          # the download's folder and file, the upload's folder
    (limit,) = [h for h in rows_of(intake, "canvas:1001") if h.status == "too-large"]
    assert "one upload may unpack at most 100 files and folders" in limit.message


@pytest.mark.slow
def test_all_of_one_student_s_zips_share_one_upload_s_limits(tmp_path, monkeypatch):
    monkeypatch.setattr(budget, "UPLOAD", budget.Limits(bytes=3 * MB, entries=2_000, files=1_000))
    part = zipped([("part.bin", os.urandom(MB))], zipfile.ZIP_STORED)      # 1 MB each, three zips of two
    download = canvas_download(tmp_path / "submissions.zip", {
        f"smithalice_1001_500{n}_part{n}.zip": zipped([(f"a{n}.zip", part), (f"b{n}.zip", part)])
        for n in range(3)})
    collect([download], tmp_path / "handins", OPTIONS)
    size, _ = cost(tmp_path / "handins")
    assert size <= 3 * MB + download.stat().st_size


def test_the_class_s_limits_hold_across_students_and_say_so_in_each_row(tmp_path, monkeypatch):
    monkeypatch.setattr(budget, "CLASS", budget.Limits(bytes=3 * MB, entries=100_000, files=50_000))
    big = zipped([("data.bin", os.urandom(MB))], zipfile.ZIP_STORED)
    uploads = {f"student{n}_{1001 + n}_{5001 + n}_work.zip": zipped([("n-queens.ipynb", ALICE.read_bytes()),
                                                                      ("data.bin", big)]) for n in range(4)}
    intake = collect([canvas_download(tmp_path / "submissions.zip", uploads)], tmp_path / "handins", OPTIONS)
    size, _ = cost(tmp_path / "handins")
    assert size <= 3 * MB
    stopped = [h for h in intake.handins if h.status == "too-large"]
    assert stopped and all("one class run may unpack at most 3 MB" in h.message for h in stopped)
    assert len({h.student for h in intake.handins}) == 4           # every student still has a row


def test_an_lms_download_with_more_entries_than_the_class_may_read_is_refused_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(budget, "CLASS", budget.Limits(bytes=100 * MB, entries=50, files=50))
    download = canvas_download(tmp_path / "submissions.zip", {f"s{n}_{1000 + n}_{5000 + n}_n-queens.ipynb": b"{}"
                                                              for n in range(60)})
    intake = collect([download], tmp_path / "handins", OPTIONS)
    (row,) = intake.handins
    assert row.status == "too-large" and "it has 60 entries; one class run may unpack at most 50 zip entries" \
        in row.message


# --- notebooks per submission ----------------------------------------------------------------------------


@pytest.mark.parametrize("folders", [False, True])
def test_at_most_five_notebooks_of_one_submission_are_graded_and_the_rest_are_named(tmp_path, folders):
    notebooks = [(f"{f'v{n}/' if folders else ''}try{n}.ipynb", ALICE.read_bytes()) for n in range(12)]
    download = canvas_download(tmp_path / "submissions.zip", {"smithalice_1001_5001_work.zip": zipped(notebooks)})
    intake = collect([download], tmp_path / "handins", OPTIONS)
    graded = [h for h in intake.handins if h.status is None]
    assert len(graded) == MAX_NOTEBOOKS == 5
    note = next(n for n in graded[0].notes if "at most 5" in n)
    assert "12 notebooks in one submission; at most 5 of one submission are graded, so 7 were not" in note
    assert "try3.ipynb" in note and all(note in h.notes for h in graded)


def test_the_notebook_named_like_the_assignment_is_among_the_five(tmp_path):
    notebooks = [(f"a{n}.ipynb", BOB.read_bytes()) for n in range(9)] + [("z/n-queens.ipynb", ALICE.read_bytes())]
    intake = collect([canvas_download(tmp_path / "s.zip", {"smithalice_1001_5001_w.zip": zipped(notebooks)})],
                     tmp_path / "handins", OPTIONS)
    assert [h.source.rsplit("/", 1)[-1] for h in intake.handins if h.status is None][0] == "n-queens.ipynb"


# --- resubmissions ---------------------------------------------------------------------------------------


def blackboard_attempts(path, notebooks):
    """One student's attempts, in order, each its notebook and receipt."""
    with zipfile.ZipFile(path, "w") as bundle:
        for number, notebook in enumerate(notebooks):
            stamp = f"2026-03-0{1 + number}-10-00-00"
            stored = f"N-Queens_asmith_attempt_{stamp}_n-queens.ipynb"
            when = f"Sunday, March {1 + number}, 2026 10:00:00 AM EST"
            add(bundle, f"N-Queens_asmith_attempt_{stamp}.txt",
                blackboard_receipt("Alice Smith", "asmith", when, [("n-queens.ipynb", stored)]))
            add(bundle, stored, notebook)
    return path


@pytest.mark.slow
def test_older_resubmissions_are_recorded_not_run_unless_asked(tmp_path):
    download = blackboard_attempts(tmp_path / "gradebook_CS101_N-Queens_2026-03-09-10-00-00.zip",
                                   [ALICE, ALICE, BOB, ALICE])
    rows, output = grade(tmp_path / "out", download)
    alice = rows["blackboard:asmith"]
    assert (alice["score"], alice["status"], alice["handins"]) == ("5", "graded", "4")
    with sqlite3.connect(tmp_path / "out" / "gradebook.db") as db:
        statuses = sorted(status for (status,) in db.execute("SELECT status FROM submissions"))
    assert statuses == ["graded", "superseded", "superseded", "superseded"]
    assert "3 older submission(s) not run" in " ".join(output.split())
    # Asked for: each runs (the third, bob's notebook, scores 0; the last still counts).
    rows, _ = grade(tmp_path / "all", download, extra=["--all-submissions"])
    with sqlite3.connect(tmp_path / "all" / "gradebook.db") as db:
        scores = sorted(score for (score,) in db.execute("SELECT score FROM submissions"))
    assert scores == [0, 5, 5, 5] and rows["blackboard:asmith"]["score"] == "5"


@pytest.mark.slow
def test_a_superseded_hand_in_runs_when_asked_later(tmp_path):
    download = blackboard_attempts(tmp_path / "gradebook_CS101_N-Queens_2026-03-09-10-00-00.zip", [BOB, ALICE])
    grade(tmp_path / "out", download)
    rows, _ = grade(tmp_path / "out", download, extra=["--all-submissions"])   # the superseded one runs now
    with sqlite3.connect(tmp_path / "out" / "gradebook.db") as db:
        assert sorted(s for (s,) in db.execute("SELECT status FROM submissions")) == ["graded", "graded"]
    assert rows["blackboard:asmith"]["score"] == "5"


# --- what stays in --out ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_what_was_unpacked_is_removed_after_grading_and_every_later_command_works(tmp_path):
    inner = zipped([("work/n-queens.ipynb", ALICE.read_bytes())])
    download = canvas_download(tmp_path / "submissions.zip", {"smithalice_1001_5001_work.zip": inner,
                                                              "jonesbob_1002_5002_n-queens.ipynb": BOB.read_bytes()})
    out = tmp_path / "out"
    rows, output = grade(out, download)
    assert not (out / "handins").exists() and "removed what was unpacked" in " ".join(output.split())
    assert (rows["canvas:1001"]["score"], rows["canvas:1002"]["score"]) == ("5", "0")
    course = ["--course", str(ROOT)]
    for verb in (["feedback", "--out", str(out)], ["report", "--out", str(out)],
                 ["similarity", "--assignment", "n-queens", "--out", str(out)],
                 ["release", "--out", str(out), "--to", str(tmp_path / "release")]):
        result = CliRunner().invoke(main, course + verb)
        assert result.exit_code == 0, (verb, result.output)
    assert (out / "feedback").is_dir() and any((tmp_path / "release").iterdir())
    # Grading again unpacks again: an unchanged hand-in is skipped by its hash, a regrade gives the same rows.
    _, again = grade(out, download)
    assert "graded 0 hand-in(s)" in again and not (out / "handins").exists()
    regraded, _ = grade(out, download, extra=["--regrade"])
    assert {k: r["score"] for k, r in regraded.items()} == {k: r["score"] for k, r in rows.items()}
    kept, _ = grade(tmp_path / "kept", download, extra=["--keep-unpacked"])
    assert any((tmp_path / "kept" / "handins").rglob("n-queens.ipynb"))


# --- what a hand-in's bytes cannot do --------------------------------------------------------------------


@pytest.mark.slow
def test_a_4301_digit_integer_or_a_1500_deep_decorator_is_its_hand_in_s_row_and_the_class_is_graded(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    notebook = json.loads(ALICE.read_text())
    notebook["metadata"]["huge"] = "HUGE"
    (folder / "dan.ipynb").write_text(json.dumps(notebook).replace('"HUGE"', "1" * 4301))
    (folder / "erin.py").write_text("import marimo\napp = marimo.App()\n\n@" + "a." * 1500 + "cell\n"
                                    "def _():\n    x = 1\n    return\n")
    (folder / "alice.ipynb").write_bytes(ALICE.read_bytes())
    rows, _ = grade(tmp_path / "out", folder)
    assert rows["alice"]["score"] == "5"
    assert rows["dan"]["status"] == "invalid-notebook" and "more than 4,300 digits" in rows["dan"]["message"]
    assert rows["erin"]["status"] == "empty"      # a decorator no marimo cell has: no cell, no code


def gradescope_export(folder, metadata):
    (folder / "submission_1").mkdir(parents=True)
    (folder / "submission_1" / "n-queens.ipynb").write_bytes(ALICE.read_bytes())
    (folder / "submission_metadata.yml").write_text(metadata)
    return folder


@pytest.mark.parametrize("metadata, words", [
    ("submission_1:\n  :submitters:\n  - {':name': Ann, ':sid': '1'}\n"
     "submission_1:\n  :submitters:\n  - {':name': Ben, ':sid': '2'}\n", "'submission_1' appears twice"),
    ("submission_1:\n  :submitters:\n  - :name: Ann\n    :sid: '1'\n    :sid: '2'\n", "':sid' appears twice"),
    ("submission_1:\n  :created_at: 2026-19-01 10:00:00\n", "month must be in 1..12"),
    ("submission_1:\n  :submitters: 0x" + "f" * 5000 + "\n", "an integer more than 100 characters long"),
])
def test_gradescope_metadata_with_a_key_twice_or_values_python_cannot_take_is_one_line(tmp_path, metadata, words):
    export = gradescope_export(tmp_path / "export", metadata)
    result = CliRunner().invoke(main, ["--course", str(ROOT), "grade", "--assignment", "n-queens", "--out",
                                       str(tmp_path / "out"), str(export)])
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    assert words in " ".join(result.output.split()) and "Traceback" not in result.output


@pytest.mark.slow
def test_gradescope_values_of_the_wrong_type_give_rows_not_a_crash(tmp_path):
    export = gradescope_export(tmp_path / "export", "submission_1:\n  :submitters: 5\n  :created_at: [1]\n")
    rows, _ = grade(tmp_path / "out", export)
    assert rows["gradescope:submission_1"]["score"] == "5"
    assert [r["student"] for r in read_rows(tmp_path / "out")] == ["gradescope:submission_1"]


def test_a_zip_whose_entry_fails_to_inflate_is_that_entry_s_row(tmp_path):
    good = zipped([("n-queens.ipynb", ALICE.read_bytes())])
    broken = bytearray(zipped([("n-queens.ipynb", ALICE.read_bytes())]))
    start = broken.index(b"n-queens.ipynb") + len("n-queens.ipynb")
    broken[start + 10:start + 40] = bytes(range(30))          # the deflate stream, damaged (zlib.error)
    download = canvas_download(tmp_path / "submissions.zip", {"smithalice_1001_5001_w.zip": bytes(broken),
                                                              "jonesbob_1002_5002_w.zip": good})
    intake = collect([download], tmp_path / "handins", OPTIONS)
    assert [h.status for h in rows_of(intake, "canvas:1002")] == [None]
    assert "invalid-zip" in {h.status for h in rows_of(intake, "canvas:1001")}


@pytest.mark.parametrize("zone, when", [(99 * 3600 + 99 * 60, 1_700_000_000), (0, 10 ** 15)])
def test_a_clone_whose_commit_says_an_impossible_time_is_graded_with_its_time_unknown(tmp_path, zone, when):
    # A commit made by hand may say `+9999` or a time in the year 31,690,708: Python refused either with
    # ValueError, which ended the class run (a Classroom clone is the student's own repository).
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo
    clone = tmp_path / "class" / "n-queens-alice"
    clone.mkdir(parents=True)
    (clone / "n-queens.ipynb").write_bytes(ALICE.read_bytes())
    repo = Repo.init(str(clone))
    blob = Blob.from_string(ALICE.read_bytes())
    tree = Tree()
    tree.add(b"n-queens.ipynb", 0o100644, blob.id)
    commit = Commit()
    commit.tree, commit.author, commit.committer, commit.message = tree.id, b"a <a@b>", b"a <a@b>", b"done"
    commit.commit_time = commit.author_time = when
    commit.commit_timezone = commit.author_timezone = zone
    for item in (blob, tree, commit):
        repo.object_store.add_object(item)
    repo.refs[b"refs/heads/main"] = commit.id
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    (handin,) = collect([tmp_path / "class"], tmp_path / "handins", OPTIONS).handins
    assert (handin.student, handin.status, handin.submitted_at) == ("alice", None, None)
