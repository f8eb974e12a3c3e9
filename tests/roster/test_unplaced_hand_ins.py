"""A hand-in the roster cannot place means nobody can be called `missing`, and the teaching team places it.

Each test is a download the trial of issues 30 and 31 graded into a 0 for students who may have handed in
(docs/semester.md, "Hand-ins the roster cannot place"): Canvas anonymous grading, a Moodle team folder whose
group id is a participant's id too, a GitHub Classroom team repository, a Gradescope folder missing from its
metadata, a Canvas group assignment, files named by whoever saved them, and two D2L students of one name.
While one is unplaced, the roster students without a hand-in are `unresolved`: blank in every file, and
`release` and `gradebook` refuse (their --force writes blanks, never 0); `roster place` settles each, at once
and for every later run, without grading again.
"""

import csv
import io
import json
import os
import shutil
import subprocess
import zipfile

import pytest

from semesters import CANVAS_ROSTER, EXAMPLES, cli, configure

pytestmark = pytest.mark.slow

SUBMISSIONS = EXAMPLES / "n-queens" / "submissions"
EARLY = "2026-10-30T20:00:00-05:00"
CANVAS_KEYS = ["canvas:1001", "canvas:1002", "canvas:1003", "canvas:1004", "canvas:1005"]


def table(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def rows(out):
    return {row["student"]: row for row in table(out / "grades.csv")}


def no_zero(path, score_column="score"):
    """Nobody in the file has a 0: in these classes, every 0 would be one nobody earned."""
    zeros = [row for row in table(path) if row.get(score_column) == "0"]
    assert not zeros, f"{path.name}: {zeros}"


def canvas_course(course, tmp_path):
    configure(course)
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(tmp_path / "export.csv"))
    return course / "grades" / "n-queens"


def grade(course, out, *paths, check=True):
    return cli(course, "grade", "--assignment", "n-queens", "--out", str(out), *map(str, paths), check=check)


def zip_of(path, entries):
    """A zip of example notebooks: {entry name: example student}."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, example in entries.items():
            archive.write(SUBMISSIONS / f"{example}.ipynb", name)
    return path


def test_canvas_anonymous_grading_is_unresolved_until_each_hand_in_is_placed(course_copy, tmp_path):
    course = course_copy
    out = canvas_course(course, tmp_path)
    # content_zipper.rb: an anonymously graded assignment's files are [LATE_]anon_<anonymous id>_<attachment>_<name>.
    download = zip_of(tmp_path / "anon.zip", {"anon_x7Yq2_9301_n-queens.ipynb": "alice",
                                              "anon_Pq3rT_9302_n-queens.ipynb": "dave",
                                              "LATE_anon_a9B8c_9303_n-queens.ipynb": "carol"})
    graded = grade(course, out, download)
    assert "Canvas anonymous grading" in " ".join(graded.stderr.split()) and "missing" not in graded.stdout
    found = rows(out)
    assert {found[k]["status"] for k in CANVAS_KEYS} == {"unresolved"}
    assert all(found[k]["score"] == "" for k in CANVAS_KEYS)
    no_zero(out / "grades.csv")
    # Neither verb writes a number for a student who may have handed in; each names the hand-ins and the fix.
    book = cli(course, "gradebook", "--to", str(tmp_path / "book"), check=False)
    assert book.returncode == 1 and "roster place --assignment n-queens" in book.stderr
    assert "canvas:anon_x7Yq2" in book.stderr and not (tmp_path / "book").exists()
    released = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "rel"), check=False)
    assert released.returncode == 1 and "canvas:anon_Pq3rT" in released.stderr
    assert not (tmp_path / "rel" / "canvas_grades.csv").exists()
    # --force: blanks for the roster, and no row for an anonymous id Canvas could not match.
    cli(course, "release", "--out", str(out), "--to", str(tmp_path / "rel"), "--force")
    canvas = table(tmp_path / "rel" / "canvas_grades.csv")
    assert sorted(r["ID"] for r in canvas) == ["1001", "1002", "1003", "1004", "1005"]
    assert {r["N-Queens (501)"] for r in canvas} == {""}
    cli(course, "gradebook", "--to", str(tmp_path / "book"), "--force")
    imported = table(tmp_path / "book" / "lms" / "canvas_import.csv")[1:]
    assert {r["N-Queens (501)"] for r in imported} == {""}
    # The teaching team learns who is who (the posted grades name them) and places each, from a file.
    (tmp_path / "who.csv").write_text("key,student\ncanvas:anon_x7Yq2,asmith\ncanvas:anon_Pq3rT,Bob Jones\n"
                                      "canvas:anon_a9B8c,1003\n")
    placed = cli(course, "roster", "place", "--assignment", "n-queens", "--file", str(tmp_path / "who.csv"))
    assert "placed on Alice Smith (canvas:1001)" in placed.stdout
    found = rows(out)
    assert (found["canvas:1001"]["score"], found["canvas:1002"]["score"]) == ("5", "2.9")
    assert found["canvas:1003"]["late"] == "yes"           # Canvas's LATE_ mark stays with the hand-in
    assert [found[k]["status"] for k in ("canvas:1004", "canvas:1005")] == ["missing", "missing"]
    assert not any(key.startswith("canvas:anon_") for key in found)
    # Every later run keeps the placements, and grades nothing again.
    again = grade(course, out, download)
    assert "graded 0 hand-in(s)" in again.stdout and rows(out) == found
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    scores = {r["ID"]: r["N-Queens (501)"] for r in table(tmp_path / "book" / "lms" / "canvas_import.csv")[1:]}
    assert scores == {"1001": "5", "1002": "2.9", "1003": "3.3", "1004": "0", "1005": "0"}
    history = (tmp_path / "book" / "history.csv").read_text()
    assert "hand-in canvas:anon_x7Yq2 placed on Alice Smith" in history


MOODLE_PARTICIPANTS = """First name,Last name,Email address,ID number,Roles,Groups
Jane,Doe,jane@uni.example,S501,Student,{queens}
Mary_Ann,O'Neil,maryann@uni.example,S502,Student,{queens}
Raj,Patel,raj@uni.example,S504,Student,No groups
"""
# The grading worksheet gives Raj participant id 7, which is also Team Queens' group id: Moodle numbers
# participants (assign_user_mapping) and groups (groups) apart, so the two may meet.
MOODLE_WORKSHEET = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
                    "Last modified (submission),Last modified (grade),Feedback comments\n"
                    "Participant 7,Raj Patel,raj@uni.example,No submission,,5.00,Yes,-,-,\n"
                    "Participant 8,Jane Doe,jane@uni.example,Submitted for grading,,5.00,Yes,-,-,\n")


def test_a_moodle_team_folder_is_never_a_participant_and_counts_for_the_members_moodle_lists(course_copy, tmp_path):
    course = course_copy
    configure(course)
    toml = course / "course.toml"
    toml.write_text(toml.read_text().replace('lms = "other"', 'lms = "moodle"'))
    (tmp_path / "participants.csv").write_text(MOODLE_PARTICIPANTS.format(queens="No groups"))
    (tmp_path / "worksheet.csv").write_text(MOODLE_WORKSHEET)
    cli(course, "roster", "import", str(tmp_path / "participants.csv"))
    cli(course, "roster", "import", str(tmp_path / "worksheet.csv"))
    # downloader.php, get_student_prefix: a team submission's folder is `<group name>_<group id>`.
    download = zip_of(tmp_path / "team.zip", {"Team Queens_7_assignsubmission_file/n-queens.ipynb": "alice"})
    out = course / "grades" / "n-queens"
    graded = grade(course, out, download)
    assert "a team submission's folder carries its group's id" in " ".join(graded.stderr.split())
    found = rows(out)
    assert found["email:raj@uni.example"]["status"] == "unresolved"         # never the team's 5
    assert found["moodle:7"]["score"] == "5" and found["moodle:7"]["on_roster"] == "no"
    no_zero(out / "grades.csv")
    assert cli(course, "release", "--out", str(out), "--to", str(tmp_path / "rel"), check=False).returncode == 1
    # Moodle's participants list names the group's members: the team's hand-in is each one's.
    (tmp_path / "participants.csv").write_text(MOODLE_PARTICIPANTS.format(queens="Team Queens"))
    cli(course, "roster", "import", str(tmp_path / "participants.csv"))
    grade(course, out, download)
    found = rows(out)
    assert (found["email:jane@uni.example"]["score"], found["email:maryann@uni.example"]["score"]) == ("5", "5")
    assert (found["email:raj@uni.example"]["status"], found["email:raj@uni.example"]["score"]) == ("missing", "0")
    assert "moodle:7" not in found


def test_a_classroom_team_repository_is_placed_on_its_members(course_copy, tmp_path):
    course = course_copy
    configure(course)
    (tmp_path / "roster.csv").write_text('"identifier","github_username","github_id","name"\n'
                                         '"a1","alice","101","Alice Smith"\n"b1","bob","102","Bob Jones"\n'
                                         '"d1","dan","105","Dan Brown"\n')
    cli(course, "roster", "import", str(tmp_path / "roster.csv"))
    clones = tmp_path / "n-queens-puzzle-submissions"
    for repository, example in (("n-queens-puzzle-alice", "alice"), ("n-queens-puzzle-team-rooks", "olivia")):
        folder = clones / repository
        folder.mkdir(parents=True)
        shutil.copy(SUBMISSIONS / f"{example}.ipynb", folder / "n-queens.ipynb")
        for command in (["init", "-q"], ["add", "."], ["-c", "user.name=s", "-c", "user.email=s@x", "commit", "-qm",
                                                         "work"]):
            subprocess.run(["git", "-C", str(folder), *command], check=True,     # before the deadline
                           env={**os.environ, "GIT_AUTHOR_DATE": EARLY, "GIT_COMMITTER_DATE": EARLY})
    out = course / "grades" / "n-queens"
    graded = grade(course, out, clones)        # `gh classroom clone`'s folder: team-rooks after its prefix
    assert "n-queens-puzzle-team-rooks" in graded.stderr and "cannot place" in " ".join(graded.stderr.split())
    found = rows(out)
    assert [found[k]["status"] for k in ("bob", "dan")] == ["unresolved", "unresolved"]
    placed = cli(course, "roster", "place", "--assignment", "n-queens", "team-rooks",
                 "--student", "bob", "--student", "Dan Brown", "--reason", "team Rooks: bob and dan")
    assert "Bob Jones (bob), Dan Brown (dan)" in placed.stdout
    found = rows(out)
    assert (found["bob"]["score"], found["dan"]["score"]) == ("4.8", "4.8")
    assert "team-rooks" not in found
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    classroom = {r["github_username"]: r for r in table(tmp_path / "book" / "lms" / "classroom_grades.csv")}
    assert classroom["dan"]["points_awarded"] == "4.8"
    # The repository the hand-in came from, never one made up from the assignment id and the login.
    assert [classroom[u]["student_repository_name"] for u in ("alice", "bob", "dan")] == \
        ["n-queens-puzzle-alice", "n-queens-puzzle-team-rooks", "n-queens-puzzle-team-rooks"]


GRADESCOPE_METADATA = """submission_2001:
  :submitters:
  - :name: Alice Smith
    :sid: '9001'
    :email: asmith@uni.example
  :created_at: 2026-10-30 20:59:00.123456000 -08:00
"""


def test_a_gradescope_folder_its_metadata_does_not_list_is_unplaced_until_set_aside(course_copy, tmp_path):
    course = course_copy
    configure(course)
    (tmp_path / "roster.csv").write_text("First Name,Last Name,SID,Email,Role,Sections\n"
                                         "Alice,Smith,9001,asmith@uni.example,Student,\n"
                                         "Frank,Ocean,9006,focean@uni.example,Student,\n")
    cli(course, "roster", "import", str(tmp_path / "roster.csv"))
    export = tmp_path / "export" / "assignment_7023745_export"
    for folder, example in (("submission_2001", "alice"), ("submission_2099", "mallory")):
        (export / folder).mkdir(parents=True)
        shutil.copy(SUBMISSIONS / f"{example}.ipynb", export / folder / "n-queens.ipynb")
    (export / "submission_metadata.yml").write_text(GRADESCOPE_METADATA)
    out = course / "grades" / "n-queens"
    grade(course, out, tmp_path / "export")
    frank = rows(out)["gradescope:9006"]
    assert (frank["status"], frank["score"]) == ("unresolved", "")
    # The teaching team says the stray folder is nobody's on the roster: Frank handed in nothing.
    key = next(k for k in rows(out) if "submission_2099" in k)
    cli(course, "roster", "place", "--assignment", "n-queens", key, "--nobody", "--reason", "a TA's test upload")
    frank = rows(out)["gradescope:9006"]
    assert (frank["status"], frank["score"]) == ("missing", "0")
    listed = cli(course, "roster", "place", "--assignment", "n-queens").stdout
    assert f"placed: {key} on nobody on the roster" in listed and "a TA's test upload" in listed


def test_a_canvas_group_hand_in_is_its_representative_s_and_may_be_others(course_copy, tmp_path):
    course = course_copy
    out = canvas_course(course, tmp_path)
    # content_zipper.rb: a group assignment's file carries the group's name and its representative's user id.
    download = zip_of(tmp_path / "group.zip", {"teamrooks_1002_9201_n-queens.ipynb": "alice",
                                               "smithalice_1001_9202_n-queens.ipynb": "erin"})
    graded = grade(course, out, download)
    assert "names 'teamrooks'" in " ".join(graded.stderr.split())
    found = rows(out)
    assert found["canvas:1002"]["score"] == "5" and found["canvas:1001"]["score"] == "4.9"
    assert [found[k]["status"] for k in ("canvas:1003", "canvas:1004", "canvas:1005")] == ["unresolved"] * 3
    cli(course, "roster", "place", "--assignment", "n-queens", "canvas:1002", "--student", "cking")
    found = rows(out)
    assert found["canvas:1003"]["score"] == "5"
    assert [found[k]["status"] for k in ("canvas:1004", "canvas:1005")] == ["missing", "missing"]


def test_files_named_by_whoever_saved_them_are_never_matched_to_the_roster(course_copy, tmp_path):
    course = course_copy
    out = canvas_course(course, tmp_path)
    loose = tmp_path / "loose"
    (loose / "Bob Jones").mkdir(parents=True)
    for name, example in (("Alice Smith.ipynb", "judy"), ("cking.ipynb", "alice"), ("Carol King (1).ipynb", "heidi"),
                          ("Bob Jones/n-queens.ipynb", "frank")):
        shutil.copy(SUBMISSIONS / f"{example}.ipynb", loose / name)
    grade(course, out, loose)
    found = rows(out)
    # Someone's 0 named "Alice Smith" is not Alice's; nobody is missing while those four are unplaced.
    assert [found[k]["status"] for k in CANVAS_KEYS] == ["unresolved"] * 5
    assert found["Alice Smith"]["score"] == "0" and found["Alice Smith"]["on_roster"] == "no"


D2L_EXPORT = ("OrgDefinedId,Username,Last Name,First Name,Email,N-Queens Points Grade <Numeric MaxPoints:5>,"
              "End-of-Line Indicator\n#0012345,jdoe,Doe,Jane,jdoe@uni.example,,#\n"
              "#0012347,cpark1,Park,Chris,cpark1@uni.example,,#\n#0012348,cpark2,Park,Chris,cpark2@uni.example,,#\n")


def test_two_d2l_students_of_one_name_keep_two_rows_until_placed(course_copy, tmp_path):
    course = course_copy
    configure(course)
    (tmp_path / "d2l.csv").write_text(D2L_EXPORT)
    cli(course, "roster", "import", str(tmp_path / "d2l.csv"))
    # D2L's download: `<submission id>-<file id> - <name> - <date> - <file>`, and no user id.
    download = zip_of(tmp_path / "N-Queens Download Nov 26, 2026 900 AM.zip", {
        "154320-98760 - Jane Doe - Oct 30, 2026 900 PM - n-queens.ipynb": "alice",
        "154323-98763 - Chris Park - Oct 30, 2026 800 PM - n-queens.ipynb": "carol",
        "154324-98764 - Chris Park - Oct 31, 2026 100 AM - n-queens.ipynb": "heidi"})
    out = course / "grades" / "n-queens"
    grade(course, out, download)
    found = rows(out)
    assert (found["d2l:submission:154323"]["score"], found["d2l:submission:154324"]["score"]) == ("4.3", "3")
    assert [found[k]["status"] for k in ("d2l:cpark1", "d2l:cpark2")] == ["unresolved", "unresolved"]
    assert found["d2l:jdoe"]["score"] == "5"
    for key, who in (("d2l:submission:154323", "cpark2"), ("d2l:submission:154324", "cpark1")):
        cli(course, "roster", "place", "--assignment", "n-queens", key, "--student", who)
    found = rows(out)
    assert (found["d2l:cpark1"]["score"], found["d2l:cpark2"]["score"]) == ("3", "4.3")
    summary = json.loads(cli(course, "gradebook", "--to", str(tmp_path / "book"), "--json").stdout)
    assert {r["student"]: r["scores"]["n-queens"] for r in summary["rows"]} == {
        "d2l:jdoe": 5, "d2l:cpark1": 3, "d2l:cpark2": 4.3}


def test_not_yet_is_blank_in_grades_csv_as_in_every_lms_file(course_copy, tmp_path):
    # The trial (finding 18): docs/semester.md says a `not-yet` student (no hand-in, deadline to come) is blank in
    # every file, but grades.csv wrote 0 for them.
    course = course_copy
    out = canvas_course(course, tmp_path)
    from semesters import PAST
    (course / "course.toml").write_text((course / "course.toml").read_text().replace(
        f'deadline = "{PAST}"', 'deadline = "2099-12-01T23:59:00-05:00"'))
    grade(course, out, zip_of(tmp_path / "nq.zip", {"smithalice_1001_9001_n-queens.ipynb": "alice"}))
    found = rows(out)
    assert found["canvas:1001"]["score"] == "5"
    waiting = [row for key, row in found.items() if key != "canvas:1001" and row["on_roster"] == "yes"]
    assert waiting and all((row["status"], row["score"]) == ("not-yet", "") for row in waiting)


def test_clones_a_classroom_50_roster_matched_raise_no_warning_to_import_it(course_copy, tmp_path):
    # The trial: with a Classroom 50 roster imported and both clones matched, grade still warned that they were
    # "keyed by its whole repository name ... import the Classroom roster".
    course = course_copy
    (tmp_path / "c50.csv").write_text("username,first_name,last_name,email,section,github_id\n"
                                      "alice,Alice,Smith,alice@uni.example,A,101\n"
                                      "bob,Bob,Jones,bob@uni.example,A,102\n")
    cli(course, "roster", "import", str(tmp_path / "c50.csv"))
    repos = tmp_path / "repos"
    for user, example in (("alice", "alice"), ("bob", "dave")):
        clone = repos / f"cs-principles-n-queens-{user}"
        clone.mkdir(parents=True)
        shutil.copy(SUBMISSIONS / f"{example}.ipynb", clone / "n-queens.ipynb")
        subprocess.run(["git", "init", "-q", str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "-c", "user.name=s", "-c", "user.email=s@x", "add", "."], check=True)
        subprocess.run(["git", "-C", str(clone), "-c", "user.name=s", "-c", "user.email=s@x", "commit", "-qm", "x"],
                       check=True)
    out = course / "grades" / "n-queens"
    done = grade(course, out, repos)
    assert "import the Classroom roster" not in done.stdout + done.stderr
    found = rows(out)
    assert (found["alice"]["score"], found["bob"]["score"]) == ("5", "2.9")


def test_release_refuses_an_lms_column_course_toml_gives_another_assignment(course_copy, tmp_path):
    # The trial (finding 9): `release --lms-column 'Uninformed Search (502)'` wrote n-queens' scores under
    # the column course.toml gives uninformed-search, exit 0, no warning.
    course = course_copy
    out = canvas_course(course, tmp_path)
    (course / "course.toml").write_text((course / "course.toml").read_text().replace(
        "[assignment.bitwise-queens]\n", '[assignment.bitwise-queens]\nlms_column = "Bitwise Queens (502)"\n', 1))
    grade(course, out, zip_of(tmp_path / "nq.zip", {f"student{n}_{1001 + n}_{9001 + n}_n-queens.ipynb": "alice"
                                                     for n in range(5)}))
    refused = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"), "--lms-column",
                  "Bitwise Queens (502)", check=False)
    assert refused.returncode != 0 and not (tmp_path / "release" / "canvas_grades.csv").exists()
    assert "bitwise-queens's grade column in course.toml" in " ".join(refused.stderr.split())
    done = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"), "--lms-column",
               "N-Queens (501)")
    assert "N-Queens (501)" in (tmp_path / "release" / "canvas_grades.csv").read_text().splitlines()[0], done.stdout


def test_release_and_gradebook_list_the_same_students(course_copy, tmp_path):
    # The trial (finding 15): release wrote the unmatched anon_ rows and left out the not-yet students, while
    # gradebook listed exactly the roster.  Both list the roster's students (the Test Student aside), no one else.
    course = course_copy
    out = canvas_course(course, tmp_path)
    from semesters import PAST
    (course / "course.toml").write_text((course / "course.toml").read_text().replace(
        f'deadline = "{PAST}"', 'deadline = "2099-12-01T23:59:00-05:00"'))
    grade(course, out, zip_of(tmp_path / "nq.zip", {"smithalice_1001_9001_n-queens.ipynb": "alice",
                                                    "anon_x7Yq2_9301_n-queens.ipynb": "dave"}))
    cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"))
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    released = {row["ID"] for row in table(tmp_path / "release" / "canvas_grades.csv")}
    imported = {row["ID"] for row in table(tmp_path / "book" / "lms" / "canvas_import.csv")
                if "Points Possible" not in row["Student"]}
    assert released == imported == {key.split(":")[1] for key in CANVAS_KEYS}


def test_a_student_renamed_in_the_class_list_is_asked_about_as_a_rename_too(course_copy, tmp_path):
    """The trial: Bob became "Jones-Smith, Bob" in the class list; his own hand-in, `jonesbob_1002_...`, was
    held back as "a Canvas group's hand-in?", which a tired TA would not connect with the rename."""
    out = canvas_course(course_copy, tmp_path)
    renamed = CANVAS_ROSTER.replace('"Jones, Bob"', '"Jones-Smith, Bob"')
    (tmp_path / "renamed.csv").write_text(renamed)
    cli(course_copy, "roster", "import", str(tmp_path / "renamed.csv"))
    graded = grade(course_copy, out, zip_of(tmp_path / "nq.zip", {"jonesbob_1002_7001_n-queens.ipynb": "bob"}))
    said = " ".join((graded.stdout + graded.stderr).split())
    assert "or a name changed since?" in said and "or was renamed in the class list" in said
