"""`release --to canvas`: grades and one comment with the feedback page per student, through Canvas's API.

A replayed Canvas course (tests/canvas_course.py) is pulled and graded (each hand-in given a score of its own,
not run: these tests are about what leaves the grader), then pushed.  Every request is asserted whole.
"""

import re
import sqlite3

import pytest
import requests_mock
from click.testing import CliRunner

from autograder.cli.main import main
from canvas_course import (ASSIGNMENT, COURSE, TOKEN, configure, course_of, grade_by_scores, made_up_score)

# Each test pulls, grades and pushes a class in-process: a second or more of CPU.
pytestmark = pytest.mark.slow

API = f"/api/v1/courses/{COURSE}"
SUBMISSIONS = f"{API}/assignments/{ASSIGNMENT}/submissions"


class Like(str):
    """A parameter asserted by its form: equal to any text the pattern matches whole."""

    def __eq__(self, other):
        return isinstance(other, str) and re.fullmatch(str(self), other, re.DOTALL) is not None

    __hash__ = str.__hash__


def run(course, *args):
    result = CliRunner().invoke(main, ["--course", str(course), *args])
    return result.exit_code, result.output


@pytest.fixture
def pushed_course(course_copy, monkeypatch):
    """A Canvas course configured, its token in the environment, `grade` scoring by made_up_score."""
    configure(course_copy)
    monkeypatch.setenv("CANVAS_API_TOKEN", TOKEN)
    grade_by_scores(monkeypatch, made_up_score)
    return course_copy


def pull_and_grade(root, course, mocker):
    code, output = run(root, "canvas", "pull", "--assignment", "n-queens")
    assert code == 0, output
    code, output = run(root, "grade", "--assignment", "n-queens", "--out", str(root / "grades" / "n-queens"),
                       str(root / "grades" / "canvas" / "n-queens"))
    assert code == 0, output
    mocker.reset_mock()


def release(root, *flags):
    return run(root, "release", "--assignment", "n-queens", "--out", str(root / "grades" / "n-queens"),
               "--to", "canvas", *flags)


def reads(course, page_size=100):
    pages = max(1, -(-len(course.students) // page_size))
    return [("GET", API, {}), ("GET", f"{API}/assignments/{ASSIGNMENT}", {}), ("GET", f"{API}/late_policy", {}),
            ("GET", f"{API}/enrollments", {"type[]": "StudentViewEnrollment", "per_page": "100"})] + \
        [("GET", SUBMISSIONS, {"per_page": "100", **({"page": str(p)} if p > 1 else {})}) for p in range(1, pages + 1)]


def sends(user, score, attempt=1, file=True):
    """The requests one student's grade and comment take: the page's upload (two), then one edit."""
    upload = [("POST", f"{SUBMISSIONS}/{user}/comments/files",
               {"content_type": "text/html", "name": "n-queens-feedback.html", "size": Like(r"\d+")}),
              ("POST", "/files", {"token": "eyJhbGciOiJIUzUxMiJ9.upload", "multipart": "file"})] if file else []
    comment = {"comment[text_comment]": Like(r"The n-queens puzzle: .*\[autograder n-queens #[0-9a-f]{12}\]")}
    if file:
        comment["comment[file_ids][]"] = Like(r"99\d{4}")
    if attempt:
        comment["comment[attempt]"] = str(attempt)
    return upload + [("PUT", f"{SUBMISSIONS}/{user}", {"submission[posted_grade]": score, **comment})]


def expected_score(user):
    return ("%.4f" % (5.0 - (user % 5) * 0.5)).rstrip("0").rstrip(".")


def class_sends(course, users=None):
    """What the push of `course` sends, student by student in key order: each graded student's grade, comment and
    page; the missing student's 0 and a comment; nothing to the excused one, nor to the Test Student."""
    found = []
    for user in sorted(course.students, key=lambda u: f"canvas:{u}"):
        handed = course.handed.get(user)
        if user == 1099 or (handed and handed.excused) or (users is not None and user not in users):
            continue
        if handed is None or handed.missing:
            found += sends(user, "0", attempt=None, file=False)
        else:
            found += sends(user, expected_score(user) if handed.kind == "online_upload" and
                           handed.files[0][1].endswith(".ipynb") else "0", attempt=handed.attempt)
    return found


def comments_per_student(course):
    return {user: len(found) for user, found in course.comments.items()}


def test_a_push_sends_one_grade_and_one_comment_with_the_page_per_student_then_nothing(pushed_course):
    course = course_of(30)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)

        code, output = release(pushed_course, "--dry-run")
        assert code == 0, output
        assert course.requests() == reads(course)                      # reads alone
        assert "would send 29 grade(s) and comment(s) with the feedback page" in output
        assert "what would be sent to Canvas" in output and course.comments == {} and course.grades == {}

        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        assert course.requests() == reads(course) + class_sends(course)
        assert "sent 29 grade(s) and comment(s) with the feedback page to Canvas" in output
        assert "the Test Student is sent nothing" in output
        assert re.search(r"not sent to .*\(canvas:1029\): excused in Canvas", output)

        mocker.reset_mock()
        code, output = release(pushed_course)                          # again: nothing changed
        assert code == 0, output
        assert course.requests() == reads(course)
        assert "sent nothing to Canvas" in output and "29 unchanged since they were last sent" in output
    assert set(comments_per_student(course).values()) == {1} and len(course.comments) == 29
    assert 1099 not in course.grades and 1029 not in course.grades
    assert course.grades[1028] == 0.0                                 # missing: 0, as the grade files say
    assert course.grades[1002] == 4.0 and course.grades[1020] == 0.0  # a PDF: 0 points, its feedback says why
    [(text, file_id)] = course.comments[1002]
    assert text.startswith("The n-queens puzzle: 4 / 5 points (graded from attempt 1).") and file_id
    assert b"<html" in course.uploads[file_id].lower() if isinstance(course.uploads[file_id], bytes) else True
    with sqlite3.connect(pushed_course / "grades" / "n-queens" / "gradebook.db") as db:
        rows = db.execute("SELECT student, lms_user, lms_submission, attempt, score, outcome FROM lms_sent "
                          "WHERE student = 'canvas:1007'").fetchall()
    assert rows == [("canvas:1007", "1007", "81007", 2, 5.0 - (1007 % 5) * 0.5, "sent")]


def test_after_one_regrade_only_that_student_s_grade_and_comment_go(pushed_course, monkeypatch):
    course = course_of(6)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        assert release(pushed_course)[0] == 0
        grade_by_scores(monkeypatch, lambda handin: 1.25)
        code, output = run(pushed_course, "grade", "--assignment", "n-queens", "--out",
                           str(pushed_course / "grades" / "n-queens"), "--regrade", "--student", "canvas:1003",
                           str(pushed_course / "grades" / "canvas" / "n-queens"))
        assert code == 0, output
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        assert course.requests() == reads(course) + sends(1003, "1.25")
    assert "5 unchanged since they were last sent" in output
    assert course.grades[1003] == 1.25 and len(course.comments[1003]) == 2 and comments_per_student(course)[1002] == 1


def test_a_server_error_on_student_7_of_10_stops_the_push_and_a_re_run_sends_the_rest(pushed_course):
    course = course_of(10)
    course.fail("PUT", rf"{SUBMISSIONS}/1007$", "500")
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        code, output = release(pushed_course)
        assert code == 1
        first = list(range(1001, 1008))
        assert course.requests() == reads(course) + class_sends(course, first)
        assert "sent 6 grade(s) and comment(s)" in output
        assert output.strip().endswith("autograder: error: Canvas failed while sending to "
                                       f"{course.students[1007].name} (canvas:1007) (500): stopped; run the same "
                                       "command again to send the rest (it first checks whether that comment "
                                       "arrived)")
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        check = ("GET", f"{SUBMISSIONS}/1007", {"include[]": "submission_comments"})
        assert course.requests() == reads(course) + [check] + class_sends(course, range(1007, 1011))
    assert "sent 4 grade(s)" in output and "6 unchanged" in output
    assert set(comments_per_student(course).values()) == {1} and len(course.comments) == 10


def test_a_comment_that_arrived_though_its_answer_was_lost_is_not_sent_twice(pushed_course):
    course = course_of(10)
    course.fail("PUT", rf"{SUBMISSIONS}/1007$", "500", applied=True)       # carried out; the answer lost
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        assert release(pushed_course)[0] == 1
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        check = ("GET", f"{SUBMISSIONS}/1007", {"include[]": "submission_comments"})
        assert course.requests() == reads(course) + [check] + class_sends(course, range(1008, 1011))
    assert "the comment sent before without an answer is on Canvas: not sent again" in output
    assert set(comments_per_student(course).values()) == {1}


def test_stopped_after_10_of_30_a_re_run_sends_the_other_20_and_no_duplicate(pushed_course):
    course = course_of(30)
    course.fail("POST", rf"{SUBMISSIONS}/1011/comments/files$", "500")      # the 11th: its page's upload fails
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        code, output = release(pushed_course)
        assert code == 1 and "sent 10 grade(s)" in output
        assert len(course.comments) == 10
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        assert course.requests() == reads(course) + class_sends(course, range(1011, 1031))
    assert "sent 19 grade(s)" in output            # the other 20 but the excused student
    assert len(course.comments) == 29 and set(comments_per_student(course).values()) == {1}


def test_grades_alone_go_in_one_bulk_update(pushed_course, monkeypatch):
    monkeypatch.setattr("autograder.intake.canvas_api.time.sleep", lambda seconds: None)
    course = course_of(8)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        code, output = release(pushed_course, "--grades-only")
        assert code == 0, output
        grades = {f"grade_data[{u}][posted_grade]": expected_score(u) for u in range(1001, 1009)}
        assert course.requests() == reads(course) + [("POST", f"{SUBMISSIONS}/update_grades", grades),
                                                     ("GET", "/api/v1/progress/3301", {})]
    assert course.comments == {} and course.grades[1004] == 3.0
    assert "sent 8 grade(s) to Canvas" in output


def test_manual_posting_keeps_grades_hidden_until_post(pushed_course):
    course = course_of(3, post_manually=True)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        code, output = release(pushed_course)
        assert code == 0 and "manual posting: the grades stay hidden from students until they are posted" in output
        assert "release again with --post" in output and not course.posted
        mocker.reset_mock()
        code, output = release(pushed_course, "--post")
        assert code == 0, output
        assert course.requests() == reads(course) + [("POST", "/api/graphql", {"json": {"assignmentId": "501"}})]
    assert course.posted and "the grades are posted (--post)" in output


def test_canvas_s_late_policy_on_top_of_the_course_s_own_is_refused_in_one_line(course_copy, monkeypatch):
    configure(course_copy, late="per-day", extra="late_penalty = 1\n")
    monkeypatch.setenv("CANVAS_API_TOKEN", TOKEN)
    grade_by_scores(monkeypatch, made_up_score)
    course = course_of(3, late_policy={"late_submission_deduction_enabled": True})
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(course_copy, course, mocker)
        code, output = release(course_copy)
        assert course.requests() == reads(course)
    assert code == 1
    assert output == ("autograder: error: the Canvas course's late policy deducts 10% per day from late submissions, "
                      "and n-queens's own late policy (per-day) already took its points off: Canvas would deduct "
                      "again. Turn Canvas's off (Grades → ⚙ Settings → Late Policies), or set late_policy = \"none\" "
                      "for n-queens in course.toml and grade again\n")


def test_a_grade_of_an_older_attempt_than_canvas_s_latest_is_refused_unless_forced(pushed_course):
    course = course_of(4)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        course.handed[1003].attempt, course.handed[1003].files = 2, [(7300, "n-queens.ipynb", b"{}")]
        code, output = release(pushed_course)
        assert code == 1 and course.comments == {}
        who = f"{course.students[1003].name} (canvas:1003)"
        assert output.splitlines()[0] == (
            f"autograder: error: 1 grade(s) of n-queens are not of Canvas's latest attempt, so nothing is sent: "
            f"{who}: graded from an older attempt than Canvas's latest (attempt 2)")
        assert "or give --force to send the grades as they were graded" in output
        code, output = release(pushed_course, "--force")
        assert code == 0, output
    assert len(course.comments) == 4 and "(graded from attempt" not in course.comments[1003][0][0]


def test_a_missing_token_is_one_line_and_the_token_is_in_no_file_or_output(pushed_course, monkeypatch, tmp_path):
    course = course_of(5)
    outputs = []
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        outputs.append(release(pushed_course, "--dry-run")[1])
        outputs.append(release(pushed_course)[1])
        outputs.append(run(pushed_course, "release", "--assignment", "n-queens", "--out",
                           str(pushed_course / "grades" / "n-queens"), "--to", str(tmp_path / "files"))[1])
        monkeypatch.delenv("CANVAS_API_TOKEN")
        monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 1 and mocker.request_history == []
    assert output.startswith("autograder: error: no Canvas token: set CANVAS_API_TOKEN to an access token")
    assert len(output.strip().splitlines()) == 1
    found = [path for folder in (pushed_course, tmp_path) for path in folder.rglob("*")
             if path.is_file() and TOKEN.encode() in path.read_bytes()]
    assert found == [] and not any(TOKEN in text for text in outputs + [output])
