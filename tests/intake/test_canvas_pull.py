"""`autograder canvas pull`: Canvas's own record of a class, read through its API, replayed offline.

The course answers as Canvas does (tests/canvas_course.py, tests/canvas/*.json); every request the grader
sends is asserted whole: method, path and parameters.
"""

import csv
import getpass
import io
import json

import pytest
import requests_mock
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.core.course import load_course
from autograder.intake import IntakeOptions, collect
from autograder.intake.canvas_api import find_token
from autograder.intake.canvas_pull import MANIFEST
from autograder.roster.store import CourseRecords
from canvas_course import ASSIGNMENT, COURSE, TOKEN, URL, configure, course_of, notebook

API = f"/api/v1/courses/{COURSE}"


@pytest.fixture
def canvas_course(course_copy, monkeypatch):
    configure(course_copy)
    monkeypatch.setenv("CANVAS_API_TOKEN", TOKEN)
    return course_copy


def run(course, *args):
    result = CliRunner().invoke(main, ["--course", str(course), *args])
    return result.exit_code, result.output


def first_pull_requests(course, page_size=100):
    """What the first pull of `course` sends, in order."""
    pages = lambda n: max(1, -(-n // page_size))       # noqa: E731
    students = len(course.students)
    expected = [("GET", API, {}), ("GET", f"{API}/assignments/{ASSIGNMENT}", {})]
    expected += [("GET", f"{API}/sections", {"per_page": "100", **({"page": str(p)} if p > 1 else {})})
                 for p in range(1, pages(len(course.sections)) + 1)]
    expected += [("GET", f"{API}/enrollments", {"type[]": ["StudentEnrollment", "StudentViewEnrollment"],
                                                "per_page": "100", **({"page": str(p)} if p > 1 else {})})
                 for p in range(1, pages(students) + 1)]
    expected += [("GET", f"{API}/assignments/{ASSIGNMENT}/submissions",
                  {"per_page": "100", **({"page": str(p)} if p > 1 else {})}) for p in range(1, pages(students) + 1)]
    return expected


def downloads(course, users=None):
    found = []
    for user_id, handed in sorted(course.handed.items()):
        for attachment_id, name, _ in handed.files:
            if users is None or user_id in users:          # every file, whatever its name says
                found.append(("GET", f"/files/{attachment_id}/download",
                              {"download_frd": "1", "verifier": f"v{attachment_id}"}))
    return found


OVERRIDES = ("GET", f"{API}/assignments/{ASSIGNMENT}/overrides", {"per_page": "100"})


@pytest.mark.slow
def test_a_pull_of_thirty_students_brings_the_roster_each_hand_in_with_canvas_s_time_and_the_overrides(
        canvas_course):
    course = course_of(30)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        sent = course.requests()
    assert code == 0, output
    assert sent == first_pull_requests(course) + downloads(course) + [OVERRIDES]
    assert all(request.headers["Authorization"] == f"Bearer {TOKEN}" for request in mocker.request_history)
    assert "roster: Canvas enrollments (API): 31 student(s) added, 0 updated" in output
    assert "test account(s) flagged, left out of grades and statistics: Test Student" in output
    assert "N-Queens: 30 of 31 student(s) handed in (1 late by Canvas's clock); 29 file(s) fetched" in output
    who = {s.user_id: f"{s.name} (canvas:{s.user_id})" for s in course.students.values()}
    assert f"missing in Canvas: {who[1028]}\n" in output
    assert f"excused in Canvas, so excused here (`autograder excuse --list` shows them): {who[1029]}\n" in output
    with CourseRecords.of(load_course(canvas_course), create=False) as records:
        students = records.students()
        assert len([s for s in students if not s.test_student]) == 30
        assert [s.key for s in students if s.test_student] == ["canvas:1099"]
        [extension] = records.extensions("n-queens")
        assert (extension.student, extension.until, extension.granted_by) == \
            ("canvas:1006", "2026-11-05T04:59:00+00:00", "canvas")
    assert f"extension from Canvas: {who[1006]} until 2026-11-05T04:59:00+00:00" in output

    folder = canvas_course / "grades" / "canvas" / "n-queens"
    record = json.loads((folder / MANIFEST).read_text())
    assert record["submissions"]["1007"]["attempt"] == 2
    assert sorted(p.name for p in folder.glob("*_1007_*")) == ["smith06grace_1007_7200_n-queens.ipynb"]
    assert (folder / "jones04erin_LATE_1005_7005_n-queens.ipynb").is_file()
    assert (folder / "king11bob_1012_text.html").is_file()
    assert (folder / "jones19judy_1020_7020_report.pdf").read_bytes() == b"%PDF-1.4 a report\n"  # read as the zip's
    assert TOKEN not in "".join(p.read_text(errors="replace") for p in folder.iterdir() if p.is_file())

    intake = collect([folder], canvas_course / "out" / "handins", IntakeOptions("n-queens", "n-queens.ipynb"))
    rows = {h.student: h for h in intake.handins}
    assert len(rows) == 30                        # 30 students, one missing, and the Test Student
    assert rows["canvas:1006"].submitted_at == "2026-11-03T12:00:00+00:00"
    assert rows["canvas:1006"].time_source == "Canvas's submitted_at (canvas pull)"
    assert any("Canvas attempt 2, submitted 2026-11-01T22:30:00+00:00" in note for note in rows["canvas:1007"].notes)
    assert rows["canvas:1005"].late_mark is True and rows["canvas:1006"].late_mark is False
    assert all(h.submitted_at for h in intake.handins)


@pytest.mark.slow
def test_a_second_pull_fetches_only_what_changed(canvas_course):
    course = course_of(6)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        assert run(canvas_course, "canvas", "pull", "--assignment", "n-queens")[0] == 0
        mocker.reset_mock()
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert code == 0, output
        assert course.requests() == first_pull_requests(course) + [OVERRIDES]
        assert "0 file(s) fetched, 7 already here" in output
        # Carol hands in again: attempt 2, a new attachment; only hers is fetched, her first one removed.
        carol = course.handed[1003]
        carol.attempt, carol.submitted_at, carol.files = 2, "2026-11-01T23:00:00Z", [(7300, "n-queens.ipynb", b"{}")]
        mocker.reset_mock()
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert course.requests() == first_pull_requests(course) + downloads(course, {1003}) + [OVERRIDES]
    assert "1 file(s) fetched, 6 already here, 1 of replaced attempts removed" in output
    folder = canvas_course / "grades" / "canvas" / "n-queens"
    assert sorted(p.name for p in folder.glob("*_1003_*")) == ["king02carol_1003_7300_n-queens.ipynb"]


@pytest.mark.slow
def test_a_pull_stopped_by_canvas_goes_on_where_it_stopped(canvas_course):
    course = course_of(10, page_size=4)
    course.fail("GET", r"/files/7005/download", 500)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert code == 1
        assert output.strip().splitlines()[-1] == ("autograder: error: Canvas answered HTTP 500 while downloading "
                                                  "'n-queens.ipynb' of Canvas user 1005")
        assert course.requests() == first_pull_requests(course, 4) + downloads(course, {1001, 1002, 1003, 1004, 1005})
        mocker.reset_mock()
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert code == 0, output
        rest = downloads(course, {1005, 1006, 1007, 1008, 1009, 1010, 1099})
        assert course.requests() == first_pull_requests(course, 4) + rest + [OVERRIDES]
    assert "7 file(s) fetched, 4 already here" in output
    assert not list((canvas_course / "grades" / "canvas" / "n-queens").glob(".download-*"))


def test_canvas_s_rate_limit_is_waited_out_and_the_pull_goes_on(canvas_course, monkeypatch):
    waits = []
    monkeypatch.setattr("autograder.intake.canvas_api.time.sleep", waits.append)
    course = course_of(4)
    course.fail("GET", rf"{API}/enrollments", "403-rate", times=2, template="403-rate")
    course.remaining = 140.0          # the bucket runs low: each request waits a little more
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        sent = course.requests()
    assert code == 0, output
    enrollments = ("GET", f"{API}/enrollments", {"type[]": ["StudentEnrollment", "StudentViewEnrollment"],
                                                 "per_page": "100"})
    assert sent.count(enrollments) == 3        # refused twice, then answered
    low = waits[:waits.index(1.0)]               # before the refusal: the bucket ran low, each wait a little longer
    assert low == sorted(low) and 0 < low[0] < low[-1] < 1
    # Refused: back off 1 s, the bucket empty (2 s), refused again: 2 s, empty (2 s); answered: low waits again.
    after = waits[waits.index(1.0):]
    assert after[:4] == [1.0, 2.0, 2.0, 2.0] and after[4:] and all(w < 1 for w in after[4:])


def test_without_a_token_nothing_is_sent_and_one_line_says_how_to_give_one(canvas_course, monkeypatch):
    monkeypatch.delenv("CANVAS_API_TOKEN")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    with requests_mock.Mocker() as mocker:
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert mocker.request_history == []
    assert code == 1
    assert output == (f"autograder: error: no Canvas token: set CANVAS_API_TOKEN to an access token (Canvas: "
                      f"Account → Settings → New access token), or keep it in the system keyring with `keyring set "
                      f"autograder-canvas {URL}` (this machine has no keyring backend, so use the environment "
                      "variable)\n")


def test_the_keyring_gives_the_token_when_the_environment_does_not():
    class Keyring:
        @staticmethod
        def get_password(service, user):
            return TOKEN if (service, user) == ("autograder-canvas", URL) else None
    assert find_token(URL, environ={}, keyring_module=Keyring) == TOKEN
    assert find_token(URL, environ={"CANVAS_API_TOKEN": " abc "}, keyring_module=Keyring) == "abc"


@pytest.mark.parametrize("answer, words", [
    ("401", "Canvas refused the token (401 Unauthorized) while reading course 4200: it is wrong, expired or "
            "revoked. Make a new one (Canvas: Account → Settings → New access token) and put it in CANVAS_API_TOKEN "
            "or the keyring"),
    ("404", "Canvas found nothing (404 Not Found) while reading course 4200: check canvas_course (and the "
            "assignment's Canvas id) in course.toml against the address of its page in https://canvas.test, and "
            "that the token's user is a teacher or TA of the course"),
])
def test_a_refusal_is_one_line_naming_the_fix_and_never_the_token(canvas_course, answer, words):
    course = course_of(3)
    course.fail("GET", rf"^{API}$", answer)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
    assert code == 1
    assert output == f"autograder: error: {words}\n"
    assert TOKEN not in output


def test_an_assignment_without_a_canvas_id_is_refused_before_anything_is_sent(canvas_course):
    text = (canvas_course / "course.toml").read_text().replace(f'lms_column = "N-Queens ({ASSIGNMENT})"\n', "")
    (canvas_course / "course.toml").write_text(text)
    with requests_mock.Mocker() as mocker:
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert mocker.request_history == []
    assert code == 1 and "n-queens has no Canvas id: set canvas_assignment = <id>" in output


def test_the_token_reaches_canvas_alone(canvas_course):
    """A file's link leads to its storage on another host: the token is not sent there."""
    course = course_of(2)
    course.handed[1001].files = [(7001, "n-queens.ipynb", b"{}")]
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        mocker.register_uri("GET", f"{URL}/files/7001/download", status_code=302,
                            headers={"Location": "https://files.storage.test/7001?sig=abc"})
        mocker.register_uri("GET", "https://files.storage.test/7001", content=b"{}")
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        stored = [r for r in mocker.request_history if r.hostname == "files.storage.test"]
    assert code == 0, output
    assert len(stored) == 1 and "Authorization" not in stored[0].headers



@pytest.mark.slow
def test_the_pulled_class_scores_as_its_zip_does_with_canvas_s_times_and_overrides(canvas_course, tmp_path,
                                                                                  one_sandbox_per_process):
    """The replayed course of 30, graded twice for real: from the pull, and from the Download Submissions zip of
    the same course (tests/lms_downloads.py).  Every score is the same; only the pull knows when each hand-in
    came, so only it finds the student with a due-date override on time by the minute."""
    from autograder.core.assignment import load_assignment
    from autograder.grade.class_run import GradeOptions, grade_class
    from lms_downloads import canvas_of_course
    course = course_of(30)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
    assert code == 0, output
    grading_course = load_course(canvas_course)
    assignment = load_assignment(grading_course, "n-queens")
    pulled = grade_class(grading_course, assignment, [canvas_course / "grades" / "canvas" / "n-queens"],
                         tmp_path / "pulled", GradeOptions())
    zipped = grade_class(grading_course, assignment, [canvas_of_course(course, tmp_path / "submissions.zip")],
                         tmp_path / "zipped", GradeOptions())
    by_pull, by_zip = ({row.student: row for row in run_.rows} for run_ in (pulled, zipped))
    assert len(by_pull) == len(by_zip) == 31          # 30 on the roster (one missing), and the Test Student
    assert {s: (r.score, r.status) for s, r in by_pull.items()} == {s: (r.score, r.status) for s, r in by_zip.items()}
    assert len({r.score for r in by_pull.values()}) > 3           # not a class of one score
    assert [(s, n) for s, n, status, _ in pulled.absent] == [("canvas:1028", course.students[1028].name)] == \
        [(s, n) for s, n, status, _ in zipped.absent]
    assert by_pull["canvas:1028"].status == by_zip["canvas:1028"].status == "missing"
    handed = [s for s in by_pull if s != "canvas:1028"]
    assert all(by_pull[s].handed_in_at and by_pull[s].time_source == "Canvas's submitted_at (canvas pull)"
               for s in handed)
    assert not any(by_zip[s].handed_in_at for s in handed)
    # Handed in two days after the course's deadline, within their own (Canvas's override, kept as an extension).
    assert by_pull["canvas:1006"].late == 0 and by_pull["canvas:1006"].handed_in_at == "2026-11-03T12:00:00+00:00"
    assert by_pull["canvas:1006"].deadline == "2026-11-04T23:59:00-05:00"
    assert by_pull["canvas:1005"].late == 1 and "late by 25.0 h" in by_pull["canvas:1005"].late_note, \
        by_pull["canvas:1005"].late_note


QUARTO = b"---\ntitle: n-queens\njupyter: python3\n---\n\n```{python}\ndef is_solved(board):\n    return True\n```\n"


def files_students_hand_in():
    """The replayed class with the files students really hand in beside their notebooks: Safari's save of
    GitHub's Raw page (`n-queens.ipynb.txt`), a Quarto document, a PDF, and a notebook PowerShell 5.1's `>`
    wrote as UTF-16."""
    course = course_of(6)
    course.handed[1002].files = [(7002, "n-queens.ipynb.txt", notebook(0))]
    course.handed[1003].files = [(7003, "n-queens.qmd", QUARTO)]
    course.handed[1004].files = [(7004, "report.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj <<>> endobj\n")]
    course.handed[1005].files = [(7005, "n-queens.ipynb", b"\xff\xfe" + notebook(2).decode().encode("utf-16-le"))]
    return course


@pytest.mark.slow
def test_every_file_gets_the_same_row_and_score_from_the_pull_as_from_the_zip(canvas_course, tmp_path,
                                                                               one_sandbox_per_process):
    """A file is read by what it holds, whichever path it came by: the pull downloads every attachment, so
    `n-queens.ipynb.txt` is graded from the pull as from Canvas's zip (it was a wrong-file-type row), and the
    Quarto document, the PDF and the UTF-16 notebook get the zip's rows, notes and scores."""
    from autograder.core.assignment import load_assignment
    from autograder.grade.class_run import GradeOptions, grade_class
    from lms_downloads import canvas_of_course
    course = files_students_hand_in()
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        sent = course.requests()
    assert code == 0, output
    assert sent == first_pull_requests(course) + downloads(course) + [OVERRIDES]
    assert "7 file(s) fetched" in output
    folder = canvas_course / "grades" / "canvas" / "n-queens"
    for handed in course.handed.values():
        [(attachment, name, data)] = handed.files
        [path] = folder.glob(f"*_{handed.user_id}_{attachment}_*")
        assert path.read_bytes() == data and path.name.endswith(name)

    grading_course = load_course(canvas_course)
    assignment = load_assignment(grading_course, "n-queens")
    pulled = grade_class(grading_course, assignment, [folder], tmp_path / "pulled", GradeOptions())
    zipped = grade_class(grading_course, assignment, [canvas_of_course(course, tmp_path / "submissions.zip")],
                         tmp_path / "zipped", GradeOptions())
    by_pull, by_zip = ({row.student: row for row in run_.rows} for run_ in (pulled, zipped))
    assert sorted(by_pull) == sorted(by_zip) == sorted(f"canvas:{u}" for u in course.students)
    # The same words too, but for the note only the pull can give: Canvas's attempt and time.
    said = lambda row: [line for line in (row.message or "").splitlines() if "Canvas attempt" not in line]  # noqa: E731
    assert {s: (r.score, r.status, said(r)) for s, r in by_pull.items()} == \
        {s: (r.score, r.status, said(r)) for s, r in by_zip.items()}
    assert all(any("Canvas attempt 1" in line for line in r.message.splitlines()) for r in by_pull.values())
    assert by_pull["canvas:1002"].status == "graded" and by_pull["canvas:1002"].score > 0
    assert "n-queens.ipynb.txt is a notebook saved under another name" in by_pull["canvas:1002"].message
    assert by_pull["canvas:1005"].status == "graded" and by_pull["canvas:1005"].score > 0
    assert "was saved as UTF-16" in by_pull["canvas:1005"].message
    assert by_pull["canvas:1003"].status == by_pull["canvas:1004"].status == "wrong-file-type"
    assert "quarto convert n-queens.qmd" in by_pull["canvas:1003"].message
    assert "only report.pdf" in by_pull["canvas:1004"].message


@pytest.mark.slow
def test_a_folder_an_earlier_version_pulled_gets_the_files_it_kept_only_the_names_of(canvas_course):
    """Before every file was fetched, a PDF or an `.ipynb.txt` was an empty file with its name: the next pull
    fetches it (the record says it was never fetched), and leaves the notebooks it has whole."""
    course = files_students_hand_in()
    folder = canvas_course / "grades" / "canvas" / "n-queens"
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        assert run(canvas_course, "canvas", "pull", "--assignment", "n-queens")[0] == 0
        record = json.loads((folder / MANIFEST).read_text())
        [attachment] = record["submissions"]["1002"]["attachments"]
        del attachment["fetched"]                                  # as the earlier version wrote it
        (folder / attachment["file"]).write_bytes(b"")
        (folder / MANIFEST).write_text(json.dumps(record))
        mocker.reset_mock()
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert code == 0, output
        assert course.requests() == first_pull_requests(course) + downloads(course, {1002}) + [OVERRIDES]
        assert "1 file(s) fetched, 6 already here" in output
        mocker.reset_mock()
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert course.requests() == first_pull_requests(course) + [OVERRIDES]     # the record says whole
    assert "0 file(s) fetched, 7 already here" in output
    assert (folder / attachment["file"]).read_bytes() == notebook(0)


def excuses(course_root):
    """The course's excuses, withdrawn ones too: (student, reason, made_by, withdrawn_by, withdraw_reason)."""
    with CourseRecords.of(load_course(course_root), create=False) as records:
        return [(e.student, e.reason, e.made_by, e.withdrawn_by, e.withdraw_reason)
                for e in records.excuses("n-queens", all_of_them=True)]


@pytest.mark.slow
def test_a_student_canvas_excuses_is_excused_here_in_every_file_until_canvas_no_longer_does(canvas_course,
                                                                                          monkeypatch, tmp_path):
    """Canvas's `excused` is an excuse here, as `autograder excuse` makes one: granted by canvas, with the reason
    "excused in Canvas", in the history, in grades.csv and EX in Canvas's import file.  A later pull that finds
    it gone withdraws it; an excuse a person made here is never replaced or withdrawn, and one a person
    withdrew is not made again."""
    from canvas_course import grade_by_scores, made_up_score
    grade_by_scores(monkeypatch, made_up_score)
    out = canvas_course / "grades" / "n-queens"
    course = course_of(5)
    course.handed[1002].excused = course.handed[1003].excused = True
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert code == 0, output
        who = {s.user_id: f"{s.name} (canvas:{s.user_id})" for s in course.students.values()}
        assert f"excused in Canvas, so excused here (`autograder excuse --list` shows them): {who[1002]}, " \
            f"{who[1003]}\n" in output
        assert excuses(canvas_course) == [("canvas:1002", "excused in Canvas", "canvas", None, None),
                                          ("canvas:1003", "excused in Canvas", "canvas", None, None)]
        code, output = run(canvas_course, "grade", "--assignment", "n-queens", "--out", str(out),
                           str(canvas_course / "grades" / "canvas" / "n-queens"))
        assert code == 0, output
        rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
        assert rows["canvas:1002"]["excused"].startswith("excused: excused in Canvas (by canvas)")
        assert not rows["canvas:1001"]["excused"]

        # A person withdraws 1003's excuse here and excuses 1004; Canvas ends 1002's and excuses 1004 too.
        [listed] = [e for e in json.loads(run(canvas_course, "excuse", "--list", "--json")[1])
                    if e["student"] == "canvas:1003"]
        assert run(canvas_course, "excuse", "--withdraw", str(listed["id"]), "--reason", "handed in after all")[0] == 0
        assert run(canvas_course, "excuse", "--assignment", "n-queens", "--student", "canvas:1004", "--reason",
                   "a dean's note")[0] == 0
        course.handed[1002].excused, course.handed[1004].excused = False, True
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert code == 0, output
    assert f"no longer excused in Canvas, so their excuse here is withdrawn: {who[1002]}\n" in output
    assert f"note: {who[1003]}: excused in Canvas, but " in output and "withdrew their excuse here" in output
    assert f"note: {who[1004]}: excused in Canvas, and here (a dean's note, by " in output
    assert f"applied to {out / 'grades.csv'}" in output
    me_ = getpass.getuser()
    assert excuses(canvas_course) == [
        ("canvas:1002", "excused in Canvas", "canvas", "canvas", "no longer excused in Canvas"),
        ("canvas:1003", "excused in Canvas", "canvas", me_, "handed in after all"),
        ("canvas:1004", "a dean's note", me_, None, None)]
    # Applied at once, as `autograder excuse` applies its own: 1002 counts again, 1004 is excused.
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text()))}
    assert not rows["canvas:1002"]["excused"] and not rows["canvas:1003"]["excused"]
    assert rows["canvas:1004"]["excused"].startswith("excused: a dean's note")

    # In every file: the history says who granted and withdrew each, Canvas's import file has EX.
    code, output = run(canvas_course, "gradebook", "--to", str(tmp_path / "book"))
    assert code == 0, output
    history = list(csv.DictReader(io.StringIO((tmp_path / "book" / "history.csv").read_text())))
    said = [(h["student"], h["event"], h["detail"]) for h in history if h["event"] in ("excused", "withdrawn")]
    assert ("canvas:1002", "excused", "#1 excused in Canvas (by canvas)") in said
    assert ("canvas:1002", "withdrawn", "excuse #1: no longer excused in Canvas (by canvas)") in said
    assert ("canvas:1003", "withdrawn", f"excuse #2: handed in after all (by {me_})") in said
    imported = {r["ID"]: r for r in csv.DictReader(io.StringIO(
        (tmp_path / "book" / "lms" / "canvas_import.csv").read_text())) if r["ID"]}
    column = next(c for c in imported["1004"] if c.startswith("N-Queens"))
    assert imported["1004"][column] == "EX" and imported["1002"][column] not in ("EX", "")


def test_one_student_s_attachments_are_one_upload_under_its_limits(canvas_course, monkeypatch):
    """Canvas lets a student attach many files to one attempt: together they are one upload, held to an upload's
    limits as one zip's files are (budget.UPLOAD; here made small), so a student cannot make the pull fetch
    the whole class's allowance.  What is past them is not fetched, and the pull says whose and why."""
    from autograder.intake import budget, canvas_pull
    monkeypatch.setattr(canvas_pull, "UPLOAD", budget.Limits(bytes=10 * budget.MB, entries=10, files=3))
    course = course_of(3)
    course.handed[1002].files = [(7100 + i, f"part{i}.ipynb", notebook(0)) for i in range(5)]
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        code, output = run(canvas_course, "canvas", "pull", "--assignment", "n-queens")
        assert code == 0, output
        fetched = [path for _, path, _ in course.requests() if path.startswith("/files/71")]
    assert fetched == [f"/files/{7100 + i}/download" for i in range(3)]
    assert output.count("more than 3 files in one submission, the most one upload may unpack") == 2, output
    record = json.loads((canvas_course / "grades" / "canvas" / "n-queens" / MANIFEST).read_text())
    assert [a.get("status") for a in record["submissions"]["1002"]["attachments"]] == [None] * 3 + ["too-large"] * 2
