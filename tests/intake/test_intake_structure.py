"""A layout is decided by what the LMS wrote, never by a vote of file names (issue 38, item 5), and every file a
student hands in gets a row, whichever path it came by (issue 41, item 3).

Each test is one finding of the red team: a student's own file names, a stray folder or metadata file, or a
`.git` in a student's folder used to decide how the whole download was read.
"""

import shutil
import zipfile

import pytest

from autograder.intake import IntakeOptions, collect
from conftest import ROOT
from lms_downloads import ALICE, BOB, CLASS, add, canvas
from test_intake_layouts import git

OPTIONS = IntakeOptions("n-queens", "n-queens.ipynb")
STUB = ROOT / "assignments" / "n-queens" / "n-queens.ipynb"
# More of them than classmates: a vote of names made the level Blackboard's when half its files were so named.
BLACKBOARD_NAMES = [f"N-Queens_mallory_attempt_2026-11-20-10-00-0{n}_n-queens.ipynb" for n in range(5)]


def rows(intake):
    found = {}
    for handin in intake.handins:
        found.setdefault(handin.student, []).append(handin)
    return found


def no_notebook_ignored(intake):
    """A notebook is never only "ignored": it has a row, whatever layout it came in."""
    dropped = [i for i in intake.ignored if i.split(" (")[0].lower().endswith((".ipynb", ".py", ".ipynb.txt"))]
    assert not dropped, dropped


def canvas_class(bundle, extra=()):
    for number, (name, _, notebook) in enumerate(CLASS):
        sortable = "".join(reversed(name.lower().split()))
        add(bundle, f"{sortable}_{1001 + number}_{5001 + number}_n-queens.ipynb", notebook)
    for name, data in extra:
        add(bundle, name, data)


# --- one student's names never decide the layout --------------------------------------------------------


def test_a_canvas_zip_with_one_student_s_blackboard_named_files_gives_every_classmate_their_canvas_row(tmp_path):
    """Mallory (Canvas 1005) uploads five files named like Blackboard attempts: a vote of names made the whole
    zip Blackboard's, and every classmate "ignored (not named by Blackboard)"."""
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        canvas_class(bundle, [(f"evansmallory_1005_{5005 + n}_{name}", STUB)
                              for n, name in enumerate(BLACKBOARD_NAMES)])
    intake = collect([archive], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert sorted(found) == [f"canvas:{1001 + n}" for n in range(5)]
    assert all(h.status is None for key in found for h in found[key]), intake.handins
    assert not [k for k in found if k.startswith("blackboard:")]
    no_notebook_ignored(intake)


def test_a_flat_moodle_download_with_blackboard_named_files_stays_moodle_s(tmp_path):
    archive = tmp_path / "CS101-N-Queens-42.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for number, (name, _, notebook) in enumerate(CLASS):
            add(bundle, f"{name}_{501 + number}_assignsubmission_file_n-queens.ipynb", notebook)
        for name in BLACKBOARD_NAMES:
            add(bundle, f"Mallory Evans_505_assignsubmission_file_{name}", STUB)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    assert sorted(rows(intake)) == [f"moodle:{501 + n}" for n in range(5)]
    no_notebook_ignored(intake)


D2L_NAMES = [f"{n}-1 - Carol King - Mar {2 + n}, 2026 315 PM - n-queens.ipynb" for n in range(2)]


@pytest.mark.parametrize("lookalikes", [BLACKBOARD_NAMES[:2], D2L_NAMES], ids=["blackboard", "d2l"])
def test_a_plain_class_folder_with_files_named_like_blackboard_or_d2l_s_is_read_as_a_class(lookalikes, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(ALICE, folder / "alice.ipynb")
    shutil.copy(BOB, folder / "bob.ipynb")
    for name in lookalikes:
        shutil.copy(STUB, folder / name)
    intake = collect([folder], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert {"alice", "bob"} <= set(found) and len(found) == 4, sorted(found)
    assert not [k for k in found if ":" in k]               # no LMS key from a name a student chose
    no_notebook_ignored(intake)


def test_a_flat_moodle_participant_whose_name_is_lower_case_keeps_the_moodle_key(tmp_path):
    """`mallory evans_503_assignsubmission_file_1002_7_n-queens.ipynb` fits Canvas's grammar too (a lower-case
    name, then `_1002_7_`): Moodle's marker comes first, so it is Moodle participant 503's, not Canvas 1002's."""
    archive = tmp_path / "CS101-N-Queens-42.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, "jane doe_502_assignsubmission_file_n-queens.ipynb", ALICE)
        add(bundle, "mallory evans_503_assignsubmission_file_1002_7_n-queens.ipynb", STUB)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    assert sorted(rows(intake)) == ["moodle:502", "moodle:503"]
    assert rows(intake)["moodle:503"][0].name == "mallory evans"


# --- a student's own upload is never an LMS download ------------------------------------------------------


def test_a_lone_zip_beside_students_notebooks_is_that_student_s_never_a_download(tmp_path):
    """Mallory's zip holds files she named as Canvas names Bob's and Carol's: read as an LMS download, her stub
    took Bob's Canvas id and filled the row of Carol, who handed in nothing."""
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(ALICE, folder / "alice.ipynb")
    shutil.copy(BOB, folder / "bob.ipynb")
    with zipfile.ZipFile(folder / "mallory.zip", "w") as bundle:
        add(bundle, "jonesbob_1002_5002_n-queens.ipynb", STUB)
        add(bundle, "kingcarol_1003_5003_n-queens.ipynb", STUB)
    intake = collect([folder], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert not [k for k in found if ":" in k], sorted(found)
    assert {"alice", "bob"} <= set(found) and all("mallory.zip" in h.source for k in set(found) - {"alice", "bob"}
                                                  for h in found[k])
    assert any("named by an LMS for different students" in n for n in intake.notes), intake.notes


def test_a_lone_zip_is_still_the_download_it_is_when_nothing_is_beside_it(tmp_path):
    folder = tmp_path / "Downloads"
    folder.mkdir()
    path, count = canvas(tmp_path)
    shutil.move(path, folder / path.name)
    (folder / "roster.csv").write_text("Student,ID\n")
    (folder / "notes.txt").write_text("grade these by Friday\n")        # beside a download: nobody's hand-in
    intake = collect([folder], tmp_path / "out", OPTIONS)
    assert sorted(rows(intake)) == [f"canvas:{1001 + n}" for n in range(count)]
    assert "notes.txt" in intake.ignored


def test_a_git_folder_a_student_put_in_their_own_folder_gives_no_hand_in_time(tmp_path):
    """An unzipped Moodle download, and a plain class folder: a `.git` in a student's folder made their own
    commit date the hand-in time, and the folder's whole name the key."""
    moodle = tmp_path / "moodle"
    plain = tmp_path / "plain"
    for folder, names in ((moodle, ["Jane Doe_502_assignsubmission_file", "Bo Li_503_assignsubmission_file"]),
                          (plain, ["jane", "bo"])):
        for name in names:
            (folder / name).mkdir(parents=True)
            shutil.copy(ALICE, folder / name / "n-queens.ipynb")
        git(folder / names[0], "init", "-q")
        git(folder / names[0], "add", ".")
        git(folder / names[0], "commit", "-q", "-m", "on time, says my clock", date="2020-01-01T00:00:00+00:00")
    for folder, jane in ((moodle, "moodle:502"), (plain, "jane")):
        intake = collect([folder], tmp_path / f"out-{folder.name}", OPTIONS)
        found = rows(intake)
        assert len(found) == 2 and jane in found, sorted(found)
        assert found[jane][0].submitted_at is None and found[jane][0].time_source == "", found[jane]


def test_a_class_of_clones_named_any_way_still_has_its_commit_times(tmp_path):
    classroom = tmp_path / "classroom"
    for user in ("alice", "bob"):
        repo = classroom / user
        repo.mkdir(parents=True)
        shutil.copy(ALICE, repo / "n-queens.ipynb")
        git(repo, "init", "-q")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "hand in")
    intake = collect([classroom], tmp_path / "out", OPTIONS)
    assert {h.student: h.submitted_at for h in intake.handins} == {
        "alice": "2026-03-01T12:00:00+00:00", "bob": "2026-03-01T12:00:00+00:00"}


# --- a stray folder or metadata file decides nothing --------------------------------------------------------


def test_a_folder_named_submitted_files_hides_nothing_beside_it(tmp_path):
    folder = tmp_path / "class"
    (folder / "bob").mkdir(parents=True)
    (folder / "Submitted files" / "Carol King" / "N-Queens").mkdir(parents=True)
    shutil.copy(ALICE, folder / "alice.ipynb")
    shutil.copy(BOB, folder / "bob" / "n-queens.ipynb")
    shutil.copy(ALICE, folder / "Submitted files" / "Carol King" / "N-Queens" / "n-queens.ipynb")
    intake = collect([folder], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert {"alice", "bob"} <= set(found) and len(found) == 3, sorted(found)
    no_notebook_ignored(intake)


def test_a_drive_download_holding_a_submitted_files_folder_is_read_as_drive_s(tmp_path):
    archive = tmp_path / "N-Queens-20260302T151500Z-001.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for name, _, notebook in CLASS:
            add(bundle, f"N-Queens/{name} - n-queens.ipynb", notebook)
        add(bundle, "N-Queens/Submitted files/Zoe/N-Queens/n-queens.ipynb", STUB)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert {f"drive:{name}" for name, _, _ in CLASS} < set(found) and len(found) == len(CLASS) + 1, sorted(found)


def test_a_teams_library_s_loose_notebook_gets_a_row_and_its_working_files_are_said(tmp_path):
    archive = tmp_path / "OneDrive_1_3-5-2026.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for name, _, notebook in CLASS:
            add(bundle, f"Student Work/Submitted files/{name}/N-Queens/n-queens.ipynb", notebook)
        add(bundle, "Student Work/Submitted files/n-queens.ipynb", STUB)
        add(bundle, "Student Work/Working files/Alice Smith/N-Queens/n-queens.ipynb", STUB)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert {f"teams:{name}" for name, _, _ in CLASS} < set(found) and len(found) == len(CLASS) + 1, sorted(found)
    assert any("Working files/ (Teams' working copies: not turned in)" in i for i in intake.ignored)


@pytest.mark.parametrize("metadata", ["{}\n", "submission_1:\n  :submitters:\n  - :name: Bob\n    :sid: 'bob'\n"])
def test_a_gradescope_metadata_file_in_a_class_folder_stops_nothing(metadata, tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(ALICE, folder / "alice.ipynb")
    shutil.copy(BOB, folder / "bob.ipynb")
    (folder / "submission_metadata.yml").write_text(metadata)
    intake = collect([folder], tmp_path / "out", OPTIONS)
    assert sorted(rows(intake)) == ["alice", "bob"]


def test_a_gradescope_export_whose_metadata_lists_nobody_gives_each_submission_a_row(tmp_path):
    export = tmp_path / "export"
    for number in (1, 2):
        (export / f"submission_{number}").mkdir(parents=True)
        shutil.copy(ALICE, export / f"submission_{number}" / "n-queens.ipynb")
    (export / "submission_metadata.yml").write_text("{}\n")
    intake = collect([export], tmp_path / "out", OPTIONS)
    assert len(rows(intake)) == 2 and any("is not in submission_metadata.yml" in n for n in intake.notes)


def test_a_file_that_does_not_fit_blackboard_s_download_gets_a_row_never_ignored(tmp_path):
    """The download's own name says Blackboard: an entry Blackboard did not name is a row keyed by its path."""
    archive = tmp_path / "gradebook_CS101-2026_N-Queens_2026-03-05-10-00-00.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, "N-Queens_asmith_attempt_2026-03-02-15-15-00_n-queens.ipynb", ALICE)
        add(bundle, "stray.ipynb", STUB)
        add(bundle, "extra/n-queens.ipynb", STUB)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert "blackboard:asmith" in found and len(found) == 3, sorted(found)
    no_notebook_ignored(intake)


# --- several claims on one name: none wins by entry order --------------------------------------------------


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("order", ["copy first", "copy last"])
def test_three_drive_files_claiming_one_student_are_all_named_and_none_wins(order, tmp_path):
    """Dan's Classroom copy, and two uploads by others named like it: the zip holds three entries of one name.
    Unpacked, the first kept the name and took Dan's key; now each is a row of its own, all named."""
    archive = tmp_path / "N-Queens-20260302T151500Z-001.zip"
    claims = [ALICE, STUB, STUB] if order == "copy first" else [STUB, STUB, ALICE]
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, "N-Queens/Ann Lee - n-queens.ipynb", ALICE)
        for notebook in claims:
            add(bundle, "N-Queens/Dan Diaz - n-queens.ipynb", notebook)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert "drive:Dan Diaz" not in found and "drive:Ann Lee" in found and len(found) == 4, sorted(found)
    warning = next(n for n in intake.notes if "named as Classroom's copy for 'Dan Diaz'" in n)
    assert warning.count("Dan Diaz - n-queens") == 3, warning


def test_a_drive_file_named_like_a_classroom_copy_is_keyed_by_that_name_with_a_word(tmp_path):
    archive = tmp_path / "N-Queens-20260302T151500Z-001.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, "N-Queens/Ann Lee - n-queens.ipynb", ALICE)
        add(bundle, "N-Queens/Dan Diaz - n-queens.ipynb", STUB)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    assert sorted(rows(intake)) == ["drive:Ann Lee", "drive:Dan Diaz"]
    warning = next(n for n in intake.notes if "Drive keeps any name an uploader gives a file" in n)
    assert "Dan Diaz - n-queens.ipynb" in warning


# --- every file a row, whichever path it came by (issue 41, item 3) -------------------------------------------


def odd_files(tmp_path):
    """The same three hand-ins, given four ways: a plain class folder, a folder per student, a plain zip and a
    Canvas zip.  Bob's is a Quarto document; Carol's is Safari's save of GitHub's Raw page."""
    alice, bob, carol = ALICE.read_bytes(), b"---\ntitle: n-queens\n---\n\n```{python}\nprint(1)\n```\n", \
        ALICE.read_bytes()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "alice.ipynb").write_bytes(alice)
    (plain / "bob.qmd").write_bytes(bob)
    (plain / "carol.ipynb.txt").write_bytes(carol)
    folders = tmp_path / "folders"
    for user, name, data in (("alice", "n-queens.ipynb", alice), ("bob", "n-queens.qmd", bob),
                             ("carol", "n-queens.ipynb.txt", carol)):
        (folders / user).mkdir(parents=True)
        (folders / user / name).write_bytes(data)
    plain_zip = tmp_path / "class.zip"
    with zipfile.ZipFile(plain_zip, "w") as bundle:
        for user, name, data in (("alice", "n-queens.ipynb", alice), ("bob", "n-queens.qmd", bob),
                                 ("carol", "n-queens.ipynb.txt", carol)):
            add(bundle, f"{user}/{name}", data)
    canvas_zip = tmp_path / "submissions.zip"
    with zipfile.ZipFile(canvas_zip, "w") as bundle:
        add(bundle, "smithalice_1001_5001_n-queens.ipynb", alice)
        add(bundle, "jonesbob_1002_5002_n-queens.qmd", bob)
        add(bundle, "kingcarol_1003_5003_n-queens.ipynb.txt", carol)
    return {"plain folder": (plain, ["alice", "bob", "carol"]), "folders": (folders, ["alice", "bob", "carol"]),
            "plain zip": (plain_zip, ["alice", "bob", "carol"]),
            "canvas zip": (canvas_zip, ["canvas:1001", "canvas:1002", "canvas:1003"])}


def test_a_quarto_file_and_a_notebook_saved_as_txt_get_the_same_row_whichever_path_they_came_by(tmp_path):
    seen = {}
    for way, (path, (alice, bob, carol)) in odd_files(tmp_path).items():
        intake = collect([path], tmp_path / f"out-{way}", OPTIONS)
        found = {k: v[0] for k, v in rows(intake).items()}
        assert sorted(found) == [alice, bob, carol], (way, sorted(found), intake.ignored)
        assert found[alice].status is None and found[carol].status is None, way
        assert found[bob].status == "wrong-file-type" and "quarto convert" in found[bob].message, way
        assert any("saved under another name (.txt" in n for n in found[carol].notes), (way, found[carol].notes)
        no_notebook_ignored(intake)
        seen[way] = (found[bob].status, found[carol].status, found[carol].sha256)
    assert len(set(seen.values())) == 1, seen


def test_a_class_folder_s_files_are_rows_but_the_course_s_own_are_not(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(ALICE, folder / "alice.ipynb")
    (folder / "bob.pdf").write_bytes(b"%PDF-1.4\n")
    (folder / "roster.csv").write_text("name\n")
    (folder / "README.md").write_text("# the class\n")
    intake = collect([folder], tmp_path / "out", OPTIONS)
    found = {k: v[0] for k, v in rows(intake).items()}
    assert sorted(found) == ["alice", "bob"]
    assert found["bob"].status == "wrong-file-type" and "bob.pdf" in found["bob"].message
    assert sorted(i for i in intake.ignored) == ["README.md (the course's file, not a hand-in)",
                                                  "roster.csv (the course's file, not a hand-in)"]


# --- a zip made by Windows PowerShell (issue 41, item 4) ------------------------------------------------------


def windows_zip(path, system):
    with zipfile.ZipFile(path, "w") as bundle:
        for number, (name, _, notebook) in enumerate(CLASS):
            sortable = "".join(reversed(name.lower().split()))
            info = zipfile.ZipInfo(f"n-queens submissions\\{sortable}_{1001 + number}_{5001 + number}_n-queens.ipynb",
                                   date_time=(2026, 3, 5, 10, 0, 0))
            info.create_system = system
            bundle.writestr(info, notebook.read_bytes())
        info = zipfile.ZipInfo("..\\..\\escaped.ipynb", date_time=(2026, 3, 5, 10, 0, 0))
        info.create_system = system
        bundle.writestr(info, STUB.read_bytes())
    return path


def test_a_canvas_zip_remade_by_compress_archive_splits_on_backslash_as_ms_dos_zips_do(tmp_path):
    intake = collect([windows_zip(tmp_path / "submissions.zip", 0)], tmp_path / "out", OPTIONS)
    found = {k: v[0] for k, v in rows(intake).items()}
    sortables = ["".join(reversed(name.lower().split())) for name, _, _ in CLASS]
    assert {k: h.name for k, h in found.items() if k.startswith("canvas:")} == {
        f"canvas:{1001 + n}": sortables[n] for n in range(len(CLASS))}
    assert any(h.status == "unsafe-path" and "escaped.ipynb" in h.source for h in intake.handins)
    assert any("made on Windows" in n and "in 5 entry name(s)" in n for n in intake.notes), intake.notes


def test_a_backslash_in_a_zip_made_on_unix_stays_a_character_of_the_name(tmp_path):
    intake = collect([windows_zip(tmp_path / "submissions.zip", 3)], tmp_path / "out", OPTIONS)
    assert not any("made on Windows" in n for n in intake.notes)
    assert all("\\" in h.source or h.status for h in intake.handins), [h.source for h in intake.handins]


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_three_entries_of_one_student_s_name_in_a_plain_zip_are_all_named_and_none_wins(tmp_path):
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, "bob.ipynb", BOB)
        for notebook in (STUB, ALICE, STUB):
            add(bundle, "alice.ipynb", notebook)
    intake = collect([archive], tmp_path / "out", OPTIONS)
    found = rows(intake)
    assert "alice" not in found and "bob" in found and len(found) == 4, sorted(found)
    assert any("3 notebooks of one name, each claiming 'alice'" in n for n in intake.notes), intake.notes


def test_a_file_no_lms_named_among_a_canvas_download_s_is_listed_not_a_row(tmp_path):
    path, count = canvas(tmp_path)
    with zipfile.ZipFile(path) as bundle:
        bundle.extractall(tmp_path / "unzipped")
    (tmp_path / "unzipped" / "notes.txt").write_text("grade these by Friday\n")
    intake = collect([tmp_path / "unzipped"], tmp_path / "out", OPTIONS)
    assert sorted(rows(intake)) == [f"canvas:{1001 + n}" for n in range(count)]
    assert intake.ignored == ["notes.txt (not named by Canvas)"]
