"""`autograder release`: LMS files and zips, GitHub Classroom branches; twice is a no-op."""

import csv
import json
import os
import shutil
import subprocess
import zipfile

import pytest

from autograder.cli.release import release_command
from browser.classes import EXAMPLE_SUBMISSIONS, fake_gradebook, grade, run

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")   # (conftest.py says why)

GET_N = "get_n([0, 2, 4, 6, 1, 3, 5])"


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def snapshot(folder):
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


CLASS = [
    dict(student="smithalice", source="submissions.zip:smithalice_1001_5001_n-queens.ipynb"),
    dict(student="carolking", source="submissions.zip:carolking_LATE_1002_5002_Copy of n-queens.ipynb",
         cases={GET_N: dict(status="failed", received="6")}),
    dict(student="Bob Jones", source="moodle.zip:Bob Jones_4712_assignsubmission_file_/nqueens (1).ipynb"),
    dict(student="dave", source="dave.ipynb", status="invalid-notebook", message="dave.ipynb is not a notebook",
         no_cases=True),
]


def test_lms_release_names_files_the_way_the_lms_pairs_them(tmp_path):
    out = fake_gradebook(tmp_path / "out", CLASS)
    target = tmp_path / "lms"
    result = run(release_command, "--out", out, "--to", target)
    assert result.exit_code == 0, result.output
    names = sorted(p.relative_to(target / "feedback").as_posix() for p in (target / "feedback").rglob("*.html"))
    assert names == ["Bob Jones_4712_assignsubmission_file_/feedback.html", "carolking_LATE_1002_5002_feedback.html",
                     "dave_feedback.html", "smithalice_1001_5001_feedback.html"]
    with zipfile.ZipFile(target / "n-queens-feedback.zip") as bundle:
        assert sorted(bundle.namelist()) == names
        assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in bundle.infolist())
        assert bundle.read("dave_feedback.html") == (target / "feedback" / "dave_feedback.html").read_bytes()
    canvas = read_csv(target / "canvas_grades.csv")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "The n-queens puzzle"]
    assert ["carolking", "1002", "", "", "", "4.8"] in canvas and ["dave", "", "", "", "", "0"] in canvas
    gradescope = read_csv(target / "gradescope_grades.csv")
    assert gradescope[0] == ["Name", "SID", "Email", "Total Score", "Max Points", "Status", "handed_in_at", "late"]
    assert ["smithalice", "", "", "5", "5", "graded", "2026-03-01T10:00:00", ""] in gradescope
    lateness = read_csv(target / "lateness.csv")
    assert lateness[0] == ["Student", "ID", "handed_in_at", "late", "penalty", "late_note"]
    assert ["smithalice", "1001", "2026-03-01T10:00:00", "", "0", ""] in lateness
    column = run(release_command, "--out", out, "--to", tmp_path / "other", "--lms-column", "N-Queens (4242)")
    assert read_csv(tmp_path / "other" / "canvas_grades.csv")[0][-1] == "N-Queens (4242)"
    assert column.exit_code == 0


def test_lms_release_twice_changes_nothing_and_a_regrade_updates_only_who_changed(tmp_path):
    out = fake_gradebook(tmp_path / "out", CLASS)
    target = tmp_path / "lms"
    first = run(release_command, "--out", out, "--to", target)
    assert "for 4 student(s)" in first.output
    before = snapshot(target)
    again = run(release_command, "--out", out, "--to", target)
    assert again.exit_code == 0 and "nothing changed since the last release" in again.output
    assert snapshot(target) == before                                       # same bytes, same mtimes, same zip
    # regrade: carol fixed get_n, alice now fails it; the others' results are the same
    fake_gradebook(out, [dict(CLASS[0], cases={GET_N: dict(status="failed", received="8")}),
                         {k: v for k, v in CLASS[1].items() if k != "cases"}])
    regraded = run(release_command, "--out", out, "--to", target)
    assert regraded.exit_code == 0
    assert "for 2 student(s) whose results changed: carolking, smithalice" in regraded.output
    after = snapshot(target)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {"feedback/carolking_LATE_1002_5002_feedback.html", "feedback/smithalice_1001_5001_feedback.html",
                       "n-queens-feedback.zip", "canvas_grades.csv", "gradescope_grades.csv", "release_manifest.json"}
    manifest = json.loads((target / "release_manifest.json").read_text())
    assert sorted(manifest["students"]) == ["Bob Jones", "carolking", "dave", "smithalice"]


def test_the_zip_is_the_same_bytes_in_another_folder(tmp_path):
    out = fake_gradebook(tmp_path / "out", CLASS)
    run(release_command, "--out", out, "--to", tmp_path / "a")
    run(release_command, "--out", out, "--to", tmp_path / "b")
    assert (tmp_path / "a" / "n-queens-feedback.zip").read_bytes() == (tmp_path / "b" / "n-queens-feedback.zip").read_bytes()


# --- GitHub Classroom -------------------------------------------------------------------------

def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def make_clone(folder, notebook, branch="main"):
    folder.mkdir(parents=True)
    git(folder, "init", "-q", "-b", branch)
    git(folder, "config", "user.name", "Student")
    git(folder, "config", "user.email", "student@example.edu")
    shutil.copy(notebook, folder / "n-queens.ipynb")
    (folder / "README.md").write_text("my work\n")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "my n-queens")
    return folder


def state(repo):
    """Everything a release must leave alone: branches, HEAD, index and working tree."""
    return dict(refs=[line for line in git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
                      if not line.startswith("refs/heads/feedback ")],
                head=git(repo, "symbolic-ref", "HEAD"), status=git(repo, "status", "--porcelain", "--ignored"),
                index=(repo / ".git" / "index").read_bytes(),
                files=sorted(p.name for p in repo.iterdir()))


@pytest.fixture
def classroom(tmp_path):
    clones = tmp_path / "n-queens-submissions"
    make_clone(clones / "n-queens-alice", EXAMPLE_SUBMISSIONS / "alice.ipynb")
    bob = make_clone(clones / "n-queens-bob", EXAMPLE_SUBMISSIONS / "bob.ipynb", branch="master")
    git(bob, "checkout", "-q", "-b", "experiments")
    (bob / "scratch.txt").write_text("uncommitted work in progress\n")       # an untracked file stays put
    out = tmp_path / "out"
    grade(out, clones)
    return clones, out


@pytest.mark.slow
def test_classroom_release_commits_feedback_on_a_branch_and_touches_nothing_else(classroom):
    clones, out = classroom
    alice, bob = clones / "n-queens-alice", clones / "n-queens-bob"
    before = {repo: state(repo) for repo in (alice, bob)}
    result = run(release_command, "--out", out, "--to", clones, "--format", "classroom")
    assert result.exit_code == 0, result.output
    assert "for 2 student(s) whose results changed: alice, bob" in result.output
    for repo in (alice, bob):
        assert state(repo) == before[repo]
        assert git(repo, "rev-list", "--count", "feedback") == "2"          # the student's commit + feedback
        assert git(repo, "log", "-1", "--format=%an %s", "feedback").startswith("autograder Feedback for")
        assert git(repo, "ls-tree", "--name-only", "-r", "feedback") == \
            "README.md\nfeedback/feedback.html\nfeedback/feedback.md\nn-queens.ipynb"
    assert "0 / 5" in git(bob, "show", "feedback:feedback/feedback.md")
    assert git(bob, "rev-parse", "feedback~1") == git(bob, "rev-parse", "master")
    manifest = json.loads((out / "classroom_release.json").read_text())
    assert manifest["students"]["bob"]["commit"] == git(bob, "rev-parse", "feedback")


@pytest.mark.slow
def test_classroom_release_twice_is_a_no_op_and_a_regrade_updates_only_who_changed(classroom):
    clones, out = classroom
    alice, bob = clones / "n-queens-alice", clones / "n-queens-bob"
    run(release_command, "--out", out, "--to", clones, "--format", "classroom")
    tips = {repo: git(repo, "rev-parse", "feedback") for repo in (alice, bob)}
    again = run(release_command, "--out", out, "--to", clones, "--format", "classroom")
    assert again.exit_code == 0 and "nothing changed since the last release" in again.output
    assert {repo: git(repo, "rev-parse", "feedback") for repo in (alice, bob)} == tips
    # bob fixes his notebook on master, is graded again: only bob gets a new feedback commit
    git(bob, "checkout", "-q", "master")
    shutil.copy(EXAMPLE_SUBMISSIONS / "alice.ipynb", bob / "n-queens.ipynb")
    # a later commit time: hand-ins committed within the same second tie in the gradebook
    subprocess.run(["git", "-C", str(bob), "commit", "-q", "-am", "fix everything"], check=True,
                   env={**os.environ, "GIT_AUTHOR_DATE": "2030-01-01T12:00:00+00:00",
                        "GIT_COMMITTER_DATE": "2030-01-01T12:00:00+00:00"})
    grade(out, clones)
    regraded = run(release_command, "--out", out, "--to", clones, "--format", "classroom")
    assert "for 1 student(s) whose results changed: bob" in regraded.output
    assert git(alice, "rev-parse", "feedback") == tips[alice]
    assert git(bob, "rev-parse", "feedback~1") == tips[bob]
    assert "5 / 5" in git(bob, "show", "feedback:feedback/feedback.md")
    assert git(bob, "status", "--porcelain") == "?? scratch.txt"


def test_classroom_release_builds_on_origins_feedback_branch(tmp_path):
    origin = make_clone(tmp_path / "origin" / "n-queens-carol", EXAMPLE_SUBMISSIONS / "carol.ipynb")
    git(origin, "branch", "feedback", "HEAD")                                # as GitHub Classroom makes it
    clones = tmp_path / "clones"
    clones.mkdir()
    subprocess.run(["git", "clone", "-q", str(origin), str(clones / "n-queens-carol")], check=True)
    carol = clones / "n-queens-carol"
    assert git(carol, "branch", "--list", "feedback") == ""
    grade(tmp_path / "out", clones)
    assert run(release_command, "--out", tmp_path / "out", "--to", clones, "--format", "classroom").exit_code == 0
    assert git(carol, "rev-parse", "feedback~1") == git(carol, "rev-parse", "origin/feedback")


def test_classroom_release_says_which_students_it_could_not_release(classroom, tmp_path):
    clones, out = classroom
    shutil.rmtree(clones / "n-queens-bob" / ".git")
    result = run(release_command, "--out", out, "--to", clones, "--format", "classroom")
    assert result.exit_code == 1
    assert "not released for bob: no git clone at" in result.output
    assert git(clones / "n-queens-alice", "rev-list", "--count", "feedback") == "2"


def test_people_read_names_beside_the_lms_keys(tmp_path):
    """A Canvas download keys students by user id; what feedback and release print names them too."""
    from autograder.cli.feedback import feedback_command
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(EXAMPLE_SUBMISSIONS / "alice.ipynb", "smithalice_1001_5001_n-queens.ipynb")
    grade(tmp_path / "out", archive)
    written = run(feedback_command, "--out", tmp_path / "out")
    assert "1 written (smithalice (canvas:1001))" in written.output, written.output
    released = run(release_command, "--out", tmp_path / "out", "--to", tmp_path / "lms")
    assert "whose results changed: smithalice (canvas:1001)" in released.output, released.output


@pytest.mark.slow
def test_classroom_feedback_is_never_released_onto_work_that_was_not_graded(classroom):
    """The trial: carol pushed new work, the instructor pulled, and `release` put the old grade's feedback on top
    of the new, ungraded commit.  The clone's file is held against the one graded: a changed one waits for a
    regrade, and the others are released."""
    clones, out = classroom
    bob = clones / "n-queens-bob"
    git(bob, "checkout", "-q", "master")
    shutil.copy(EXAMPLE_SUBMISSIONS / "alice.ipynb", bob / "n-queens.ipynb")
    git(bob, "commit", "-q", "-am", "pulled: new work")
    result = run(release_command, "--out", out, "--to", clones, "--format", "classroom")
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "not released for bob" in said and "is not the file that was graded" in said
    assert git(bob, "branch", "--list", "feedback") == ""
    assert git(clones / "n-queens-alice", "rev-list", "--count", "feedback") == "2"
    grade(out, clones)
    assert run(release_command, "--out", out, "--to", clones, "--format", "classroom").exit_code == 0
    assert "5 / 5" in git(bob, "show", "feedback:feedback/feedback.md")


def test_a_clone_s_file_made_a_link_since_grading_is_never_followed(classroom):
    """What a student pushes after grading is theirs to shape: a link to an endless device is not read (it would
    never end), and the feedback waits, as for any file that is not the one graded."""
    clones, out = classroom
    alice = clones / "n-queens-alice"
    (alice / "n-queens.ipynb").unlink()
    (alice / "n-queens.ipynb").symlink_to("/dev/zero")
    result = run(release_command, "--out", out, "--to", clones, "--format", "classroom")
    assert result.exit_code == 1 and "is not the file that was graded" in " ".join(result.output.split())
    assert git(alice, "branch", "--list", "feedback") == ""


def test_a_classroom_50_clone_s_frozen_feedback_branch_is_left_alone(tmp_path):
    """Classroom 50 keeps `feedback` at the student's first commit, the base of its Feedback pull request, and
    its org rulesets refuse a push to it (wiki/Autograders.md): feedback goes on `autograder-feedback`."""
    from autograder.publish.classroom import commit_files
    repo = make_clone(tmp_path / "cs-principles-n-queens-carol", EXAMPLE_SUBMISSIONS / "carol.ipynb")
    (repo / ".classroom50.yaml").write_text("classroom: cs-principles\nassignment: n-queens\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "accept")
    git(repo, "branch", "feedback", "HEAD")
    frozen = git(repo, "rev-parse", "feedback")
    commit = commit_files(repo, {"feedback.md": "# 4.3 / 5\n"}, "Feedback")
    assert git(repo, "rev-parse", "feedback") == frozen
    assert git(repo, "rev-parse", "autograder-feedback") == commit
    assert git(repo, "show", "autograder-feedback:feedback/feedback.md") == "# 4.3 / 5"
