"""Hostile hand-ins against intake: no command runs, no classmate's row is taken, no name ends the run.

Each attack is graded through the real command (in the test's process, or in
a child where what it costs is measured or a failed defence could take the
tests down), in one run with honest classmates, who keep their scores.  The attacks are the second red team's
(the trust issue): a crafted `.git` that makes git run a command, LMS names
chosen to land in another student's row, zip entry names no file system
takes, notebooks that cost gigabytes to parse, and text SQLite cannot store.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from conftest import ROOT

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
ALICE = SUBMISSIONS / "alice.ipynb"          # scores 5
STUB = ROOT / "assignments" / "n-queens" / "n-queens.ipynb"   # the untouched template: scores 0
AUTOGRADER = [sys.executable, "-m", "autograder"]


PEAK_MB = [0.0]      # the last child grade()'s peak resident memory


def grade(out, *paths, extra=(), in_a_process=False):
    """Run `autograder grade` (the real command, in this process, unless `in_a_process`: what a child process
    costs is then measured, or a failed defence could not take the tests down); returns (rows by student,
    output)."""
    args = ["--course", str(ROOT), "grade", "--assignment", "n-queens", "--out", str(out), "--timeout", "1",
            *extra, *map(str, paths)]
    if in_a_process:
        # Its own peak memory, from wait4: RUSAGE_CHILDREN would be the largest of every child this pytest
        # worker ever waited for (another test's class of 200, say), not this one's.
        with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            child = subprocess.Popen([*AUTOGRADER, *args], stdout=stdout, stderr=stderr)
            watchdog = threading.Timer(600, child.kill)
            watchdog.start()
            try:
                _, status, usage = os.wait4(child.pid, 0)
            finally:
                watchdog.cancel()
            child.returncode = os.waitstatus_to_exitcode(status)
            PEAK_MB[0] = usage.ru_maxrss / 1024
            stdout.seek(0)
            stderr.seek(0)
            out_text, err_text = (s.read().decode(errors="replace") for s in (stdout, stderr))
        assert child.returncode == 0, out_text + err_text
        assert "Traceback" not in err_text, err_text
        output = out_text + err_text
    else:
        result = CliRunner().invoke(main, args, catch_exceptions=False)     # an exception fails the test
        assert result.exit_code == 0, result.output
        output = result.output
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len({r["student"] for r in rows}) == len(rows)
    return {r["student"]: r for r in rows}, output


def add(bundle, source, name):
    bundle.writestr(zipfile.ZipInfo(name, date_time=(2026, 3, 1, 12, 0, 0)),
                    source.read_bytes() if hasattr(source, "read_bytes") else source)


# --- a student's .git never runs anything ----------------------------------------------------------------


def crafted_repository(folder, marker):
    """A clone whose config makes `git log` run `touch MARKER` (a partial clone with an ext:: promisor)."""
    folder.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "e", "GIT_AUTHOR_EMAIL": "e@x", "GIT_COMMITTER_NAME": "e",
           "GIT_COMMITTER_EMAIL": "e@x"}
    git = ["git", "-C", str(folder)]
    subprocess.run([*git, "init", "-q"], check=True)
    shutil.copy(STUB, folder / "n-queens.ipynb")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "mine"], check=True, env=env)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    for key, value in (("core.repositoryformatversion", "1"), ("extensions.partialClone", "origin"),
                       ("remote.origin.url", f"ext::sh -c touch% {marker}"), ("remote.origin.promisor", "true"),
                       ("remote.origin.partialclonefilter", "blob:none"), ("protocol.ext.allow", "always")):
        subprocess.run([*git, "config", key, value], check=True)
    (folder / ".git" / "objects" / head[:2] / head[2:]).unlink()     # missing: git would fetch it
    return folder


def zip_folder(bundle, folder, prefix):
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            add(bundle, path, f"{prefix}/{path.relative_to(folder).as_posix()}")


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("git"), reason="git is needed to build the crafted repository")
def test_a_crafted_git_config_never_runs_a_command_wherever_it_is_found(tmp_path):
    marker = tmp_path / "ran-a-command"
    probe = crafted_repository(tmp_path / "probe" / "n-queens-probe", marker)
    subprocess.run(["git", "-C", str(probe), "log", "-1"], capture_output=True)
    assert marker.exists(), "the attack is not real here: git did not run the promisor's command"
    marker.unlink()

    classroom = tmp_path / "classroom"
    crafted_repository(classroom / "n-queens-eve", marker)                 # a clone the instructor named
    (classroom / "n-queens-alice").mkdir()
    shutil.copy(ALICE, classroom / "n-queens-alice" / "n-queens.ipynb")
    moodle = tmp_path / "moodle.zip"                                        # a clone inside a Moodle zip
    with zipfile.ZipFile(moodle, "w") as bundle:
        zip_folder(bundle, crafted_repository(tmp_path / "m" / "n-queens-mal", marker),
                   "Mal Doe_601_assignsubmission_file_/n-queens-mal")
        add(bundle, ALICE, "Ann Lee_602_assignsubmission_file_/n-queens.ipynb")
    folders = tmp_path / "folders"                                          # in a zip in a student's folder
    (folders / "zed").mkdir(parents=True)
    with zipfile.ZipFile(folders / "zed" / "work.zip", "w") as bundle:
        zip_folder(bundle, crafted_repository(tmp_path / "z" / "repo", marker), "repo")
    (folders / "bea").mkdir()
    shutil.copy(ALICE, folders / "bea" / "n-queens.ipynb")

    for name, path in (("classroom", classroom), ("moodle", moodle), ("folders", folders)):
        rows, _ = grade(tmp_path / f"out-{name}", path)
        assert not marker.exists(), f"grading the {name} layout ran the repository's command"
        honest = {"classroom": "alice", "moodle": "moodle:602", "folders": "bea"}[name]
        assert rows[honest]["score"] == "5"
    rows, _ = grade(tmp_path / "out-again", classroom)
    assert (rows["eve"]["score"], rows["eve"]["handed_in_at"]) == ("0", "")   # no commit readable: no time


@pytest.mark.slow
def test_a_commit_time_is_read_only_for_clones_the_instructor_named(tmp_path):
    classroom = tmp_path / "classroom"
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x", "GIT_COMMITTER_DATE": "2026-03-01T12:00:00+00:00",
           "GIT_AUTHOR_DATE": "2026-03-01T12:00:00+00:00"}
    repo = classroom / "n-queens-alice"
    repo.mkdir(parents=True)
    shutil.copy(ALICE, repo / "n-queens.ipynb")
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"], ["gc", "-q"]):
        subprocess.run(["git", "-C", str(repo), *command], check=True, env=env)
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        zip_folder(bundle, repo, "Ann Lee_602_assignsubmission_file_/n-queens-alice")
    rows, _ = grade(tmp_path / "out", classroom, archive)
    assert rows["alice"]["handed_in_at"] == "2026-03-01T12:00:00+00:00"      # packed objects, read by dulwich
    assert (rows["moodle:602"]["score"], rows["moodle:602"]["handed_in_at"]) == ("5", "")


# --- nobody takes a classmate's row -----------------------------------------------------------------------


def test_a_moodle_full_name_cannot_file_a_hand_in_under_a_classmate_s_id(tmp_path):
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "Jane Doe_502_assignsubmission_file_/n-queens.ipynb")
        add(bundle, STUB, "Eve_502_assignsubmission_file_x_503_assignsubmission_file_/n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", archive)
    assert rows["moodle:502"]["name"] == "Jane Doe" and rows["moodle:502"]["score"] == "5"
    assert rows["moodle:503"]["name"] == "Eve_502_assignsubmission_file_x"
    assert rows["moodle:503"]["score"] == "0"


def test_a_folder_named_like_a_key_inside_a_submission_stays_its_owner_s(tmp_path):
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "Ann Lee_601_assignsubmission_file_/n-queens.ipynb")
        add(bundle, b"ref: refs/heads/main\n", "Eve Doe_503_assignsubmission_file_/moodle:601/.git/HEAD")
        add(bundle, STUB, "Eve Doe_503_assignsubmission_file_/moodle:601/n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", archive)
    assert sorted(rows) == ["moodle:503", "moodle:601"]
    assert (rows["moodle:601"]["name"], rows["moodle:601"]["score"], rows["moodle:601"]["handins"]) == \
        ("Ann Lee", "5", "1")
    assert rows["moodle:503"]["score"] == "0"


def test_a_plain_folder_can_never_pass_for_an_lms_key(tmp_path):
    for folder, notebook in (("moodle:601", STUB), ("canvas:7", STUB)):
        (tmp_path / "in" / folder).mkdir(parents=True)
        shutil.copy(notebook, tmp_path / "in" / folder / "n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", tmp_path / "in")
    assert sorted(rows) == ["canvas_7", "moodle_601"]


# --- no name ends the run --------------------------------------------------------------------------------


def raw_zip_with_invalid_utf8_name(path, good_entries):
    """A zip whose one entry is flagged UTF-8 but named with Latin-1 bytes (Python cannot write one)."""
    placeholder = "Bad Name_777_assignsubmission_file_/XXXXXX.ipynb"
    with zipfile.ZipFile(path, "w") as bundle:
        for source, name in good_entries:
            add(bundle, source, name)
        info = zipfile.ZipInfo(placeholder, date_time=(2026, 3, 1, 12, 0, 0))
        info.flag_bits |= 0x800
        bundle.writestr(info, ALICE.read_bytes())
    data = path.read_bytes()
    bad = "Bad Name_777_assignsubmission_file_/Jos\xe9 n.ipynb".encode("latin-1")
    assert len(bad) == len(placeholder)
    path.write_bytes(data.replace(placeholder.encode(), bad))


@pytest.mark.slow
def test_names_no_file_system_takes_each_get_a_row_and_the_class_is_graded(tmp_path):
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "smithalice_1001_5001_n-queens.ipynb")
        add(bundle, ALICE, "newline_1002_5002_n-que\nens.ipynb")
        add(bundle, ALICE, "longname_1003_5003_" + "x" * 300 + ".ipynb")
        add(bundle, ALICE, "tab_1004_5004_\tn-queens\x7f.ipynb")
    moodle = tmp_path / "moodle.zip"
    raw_zip_with_invalid_utf8_name(moodle, [(ALICE, "Jane Doe_501_assignsubmission_file_/n-queens.ipynb")])
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copy(ALICE, os.path.join(os.fsencode(folder), b"jos\xe9.ipynb"))    # a Latin-1 name on disk
    shutil.copy(ALICE, folder / "bob.ipynb")
    rows, output = grade(tmp_path / "out", archive, moodle, folder)
    for key in ("canvas:1001", "canvas:1002", "canvas:1003", "canvas:1004", "moodle:501", "moodle:777", "bob",
                "josé"):
        assert rows[key]["score"] == "5", (key, rows[key])
    for row in rows.values():
        assert row["student"].isprintable() and row["source"].isprintable()
    assert "unpacked as" in output


def notebook_with(extra_cell=None, metadata=None):
    notebook = json.loads(ALICE.read_text())
    if extra_cell is not None:
        notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "extra", "metadata": {},
                                  "outputs": [], "source": extra_cell})
    if metadata:
        notebook["metadata"].update(metadata)
    return notebook


@pytest.mark.slow
def test_notebooks_too_deep_or_too_many_objects_are_refused_in_bounded_memory(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    deep = notebook_with()
    deep["cells"][0]["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": {"application/json": 1}}]
    text = json.dumps(deep).replace('"application/json": 1', '"application/json": ' + "[" * 3000 + "]" * 3000)
    (folder / "deep.ipynb").write_text(text)
    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": "x"},
           "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 1", "language": "python",
                                      "outputs": [{"output_type": "pyout", "json": 1}]}]}]}
    (folder / "old-deep.ipynb").write_text(json.dumps(old).replace('"json": 1', '"json": ' + "{\"a\": " * 3000
                                                                   + "1" + "}" * 3000))
    with open(folder / "wide.ipynb", "wb") as handle:              # 45 MB: 15 million empty objects
        handle.write(b'{"nbformat": 4, "nbformat_minor": 5, "cells": [], "metadata": {"x": [')
        handle.write(b"{}," * 15_000_000)
        handle.write(b'{}]}}')
    shutil.copy(ALICE, folder / "alice.ipynb")
    rows, _ = grade(tmp_path / "out", folder, in_a_process=True)      # its peak memory is measured
    peak_mb = PEAK_MB[0]
    for student in ("deep", "old-deep", "wide"):
        assert (rows[student]["status"], rows[student]["score"]) == ("invalid-notebook", "0"), rows[student]
    assert rows["alice"]["score"] == "5"
    assert 0 < peak_mb < 1024, f"the grader used {peak_mb:.0f} MB"


@pytest.mark.slow
def test_a_lone_surrogate_in_a_failing_cell_costs_nothing_on_every_run(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "sam.ipynb").write_text(json.dumps(notebook_with("raise Exception('\\ud800 and \\x00')")))
    shutil.copy(ALICE, folder / "alice.ipynb")
    for extra in ((), ("--regrade",)):
        rows, _ = grade(tmp_path / "out", folder, extra=extra)
        assert (rows["sam"]["score"], rows["sam"]["status"]) == ("5", "graded"), rows["sam"]
    feedback = CliRunner().invoke(main, ["--course", str(ROOT), "feedback", "--out", str(tmp_path / "out")],
                                  catch_exceptions=False)
    assert feedback.exit_code == 0, feedback.output


def test_a_gradebook_edited_by_hand_or_damaged_is_one_line_that_says_what_to_do(tmp_path):
    import sqlite3

    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(ALICE, folder / "alice.ipynb")
    out = tmp_path / "out"
    grade(out, folder)
    edited = tmp_path / "edited"
    shutil.copytree(out, edited)
    with sqlite3.connect(edited / "gradebook.db") as db:
        db.execute("ALTER TABLE submissions RENAME COLUMN score TO points")
    damaged = tmp_path / "damaged"
    shutil.copytree(out, damaged)
    data = bytearray((damaged / "gradebook.db").read_bytes())
    page = 4096
    for number in range(1, len(data) // page):                     # every page but the first: a broken disk
        data[number * page:number * page + 8] = b"\xff" * 8
    (damaged / "gradebook.db").write_bytes(bytes(data))
    for where, words in ((edited, "edited by hand"), (damaged, "damaged")):
        for command in (["grade", "--assignment", "n-queens", "--out", str(where), str(folder)],
                        ["feedback", "--out", str(where)]):
            done = CliRunner().invoke(main, ["--course", str(ROOT), *command], catch_exceptions=False)
            assert done.exit_code == 1, (command, done.output)
            assert done.stderr.startswith("autograder: error:"), done.stderr
            assert words in done.stderr or "not a usable gradebook" in done.stderr, done.stderr


def test_names_inside_one_student_s_zip_are_that_student_s(tmp_path):
    """A folder of per-student zips: eve.zip holding a Canvas-named file, or a forged Gradescope export
    naming a classmate's id, is still Eve's."""
    folder = tmp_path / "zips"
    folder.mkdir()
    with zipfile.ZipFile(folder / "bob.zip", "w") as bundle:
        add(bundle, ALICE, "n-queens.ipynb")
    with zipfile.ZipFile(folder / "eve.zip", "w") as bundle:
        add(bundle, STUB, "bob_1002_5002_n-queens.ipynb")
    with zipfile.ZipFile(folder / "mal.zip", "w") as bundle:
        add(bundle, b"submission_1:\n  :submitters:\n  - :name: Bob\n    :sid: 'bob'\n", "submission_metadata.yml")
        add(bundle, STUB, "submission_1/n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", folder)
    assert sorted(rows) == ["bob", "eve", "mal"]
    assert (rows["bob"]["score"], rows["bob"]["handins"]) == ("5", "1")


@pytest.mark.slow
def test_a_yaml_alias_bomb_in_gradescope_metadata_is_one_line(tmp_path):
    export = tmp_path / "export"
    (export / "submission_1").mkdir(parents=True)
    shutil.copy(ALICE, export / "submission_1" / "n-queens.ipynb")
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
              f"*a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 9)]
    lines.append("submission_1:\n  :submitters: *a8\n  :created_at: *a8")
    (export / "submission_metadata.yml").write_text("\n".join(lines) + "\n")
    done = subprocess.run([*AUTOGRADER, "--course", str(ROOT), "grade", "--assignment", "n-queens", "--out",
                           str(tmp_path / "out"), str(export)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "aliases" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.slow
def test_folders_nested_thousands_deep_are_not_walked_to_the_bottom(tmp_path):
    folder = tmp_path / "in" / "zed"
    _make_deep(folder, 300)                       # far deeper than any hand-in (pytest must still remove it)
    shutil.copy(ALICE, folder / "n-queens.ipynb")
    (tmp_path / "in" / "bea").mkdir()
    shutil.copy(ALICE, tmp_path / "in" / "bea" / "n-queens.ipynb")
    rows, output = grade(tmp_path / "out", tmp_path / "in")
    assert rows["zed"]["score"] == "5" and rows["bea"]["score"] == "5"
    assert "nested more than" in output


def _make_deep(folder, levels):
    """mkdir one level at a time, from inside (a path thousands of levels long is too long to name)."""
    fd = os.open(folder if folder.exists() else (folder.mkdir(parents=True) or folder), os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
