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


def sends(user, score, attempt=1, file=True, excuse=False):
    """The requests one student's grade (or Canvas's excuse) and comment take: the page's upload (two), then one
    edit."""
    upload = [("POST", f"{SUBMISSIONS}/{user}/comments/files",
               {"content_type": "text/html", "name": "n-queens-feedback.html", "size": Like(r"\d+")}),
              ("POST", "/files", {"token": "eyJhbGciOiJIUzUxMiJ9.upload", "multipart": "file"})] if file else []
    comment = {"comment[text_comment]": Like(r"The n-queens puzzle: " + ("excused .*" if excuse else ".*")
                                             + r"\[autograder n-queens #[0-9a-f]{12}\]")}
    if file:
        comment["comment[file_ids][]"] = Like(r"99\d{4}")
    if attempt:
        comment["comment[attempt]"] = str(attempt)
    grade = {"submission[excuse]": "true"} if excuse else {"submission[posted_grade]": score}
    return upload + [("PUT", f"{SUBMISSIONS}/{user}", {**grade, **(comment if file or score else {})})]


def expected_score(user):
    return ("%.4f" % (5.0 - (user % 5) * 0.5)).rstrip("0").rstrip(".")


def class_sends(course, users=None):
    """What the push of `course` sends, student by student in key order: each graded student's grade, comment and
    page; the missing student's 0 and a comment; to the student Canvas excuses, Canvas's excuse again with the
    comment and page of their hand-in (graded all the same); nothing to the Test Student."""
    found = []
    for user in sorted(course.students, key=lambda u: f"canvas:{u}"):
        handed = course.handed.get(user)
        if user == 1099 or (users is not None and user not in users):
            continue
        if handed and handed.excused:
            found += sends(user, None, attempt=handed.attempt, excuse=True) if handed.files else []
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
        assert "would send 30 grade(s) and comment(s) with the feedback page" in output
        assert "what would be sent to Canvas" in output and course.comments == {} and course.grades == {}

        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        assert course.requests() == reads(course) + class_sends(course)
        assert "sent 30 grade(s) and comment(s) with the feedback page to Canvas" in output
        assert "the Test Student is sent nothing" in output
        assert re.search(r"of which excused in Canvas \(Excused, no grade\): .*\(canvas:1029\)\n", output)

        mocker.reset_mock()
        code, output = release(pushed_course)                          # again: nothing changed
        assert code == 0, output
        assert course.requests() == reads(course)
        assert "sent nothing to Canvas" in output and "30 unchanged since they were last sent" in output
    assert set(comments_per_student(course).values()) == {1} and len(course.comments) == 30
    assert 1099 not in course.grades and 1029 not in course.grades and course.handed[1029].excused
    assert course.comments[1029][0][0].startswith("The n-queens puzzle: excused (excused in Canvas): no grade "
                                                  "counts for it. Your hand-in was graded all the same: ")
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
    assert "sent 20 grade(s)" in output            # the other 20, the excused student's excuse and page among them
    assert len(course.comments) == 30 and set(comments_per_student(course).values()) == {1}


def test_grades_alone_go_in_one_bulk_update(pushed_course, monkeypatch):
    monkeypatch.setattr("autograder.intake.canvas_api.time.sleep", lambda seconds: None)
    course = course_of(8)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        assert run(pushed_course, "excuse", "--assignment", "n-queens", "--student", "canvas:1003", "--reason",
                   "a dean's note")[0] == 0
        mocker.reset_mock()
        code, output = release(pushed_course, "--grades-only")
        assert code == 0, output
        grades = {f"grade_data[{u}][posted_grade]": expected_score(u) for u in range(1001, 1009) if u != 1003}
        grades["grade_data[1003][excuse]"] = "true"          # Canvas's excuse, in the same bulk update
        sent = course.requests()
        assert sent[:-2] == reads(course) and sent[-1] == ("GET", "/api/v1/progress/3301", {})
        assert sent[-2][:2] == ("POST", f"{SUBMISSIONS}/update_grades") and sent[-2][2] == grades
        assert "sent 8 grade(s) to Canvas" in output and re.search(r"of which excused in Canvas .*canvas:1003", output)
        mocker.reset_mock()
        code, output = release(pushed_course, "--grades-only")
        assert code == 0 and course.requests() == reads(course), output
    assert course.comments == {} and course.grades[1004] == 3.0
    assert course.handed[1003].excused and 1003 not in course.grades
    assert "8 unchanged since they were last sent" in output


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


def excuse_id(root, student):
    import json
    code, output = run(root, "excuse", "--list", "--json")
    assert code == 0, output
    return [e["id"] for e in json.loads(output) if e["student"] == student and e["active"]][-1]


def test_an_excuse_made_here_goes_as_canvas_s_excuse_once_and_its_withdrawal_sends_the_grade(pushed_course):
    """`autograder excuse` reaches Canvas as its Excused (submission[excuse]=true, never with a grade), recorded
    like a grade: a re-run sends nothing, and the excuse withdrawn sends the grade, which ends Canvas's."""
    course = course_of(6)
    nothing = course.handed[1004]             # handed in nothing: excused, the excuse alone is sent
    nothing.attempt, nothing.submitted_at, nothing.files, nothing.kind, nothing.missing = None, None, [], None, True
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        for student, reason in (("canvas:1003", "a dean's note"), ("canvas:1004", "joined the course late")):
            code, output = run(pushed_course, "excuse", "--assignment", "n-queens", "--student", student,
                               "--reason", reason)
            assert code == 0, output
        mocker.reset_mock()
        code, output = release(pushed_course, "--dry-run")
        assert code == 0 and course.requests() == reads(course)
        assert re.search(r"would be excused in Canvas \(Excused, no grade\): .*\(canvas:1003\), .*\(canvas:1004\)",
                         output)
        assert "EX (excused)" in output

        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        excused = [("PUT", f"{SUBMISSIONS}/1004", {"submission[excuse]": "true"})]
        assert course.requests() == reads(course) + sends(1001, expected_score(1001)) + \
            sends(1002, expected_score(1002)) + sends(1003, None, excuse=True) + excused + \
            sends(1005, expected_score(1005)) + sends(1006, expected_score(1006))
        assert course.handed[1003].excused and course.handed[1004].excused
        assert 1003 not in course.grades and 1004 not in course.grades and 1004 not in course.comments
        [(text, file_id)] = course.comments[1003]
        assert text.startswith(f"The n-queens puzzle: excused (a dean's note): no grade counts for it. Your hand-in "
                               f"was graded all the same: {expected_score(1003)} / 5 points (graded from attempt 1). "
                               "Your feedback page is attached") and file_id

        mocker.reset_mock()
        code, output = release(pushed_course)                   # again: nothing changed
        assert code == 0, output
        assert course.requests() == reads(course) and "6 unchanged since they were last sent" in output

        # The excuse withdrawn here: the grade goes, with its own comment, and ends Canvas's excuse.
        assert run(pushed_course, "excuse", "--withdraw", str(excuse_id(pushed_course, "canvas:1003")), "--reason",
                   "the note was for another course")[0] == 0
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        assert course.requests() == reads(course) + sends(1003, expected_score(1003))
        assert re.search(r"their excuse here was withdrawn, so their grade ends Canvas's excuse: .*\(canvas:1003\)",
                         output)
        mocker.reset_mock()
        assert release(pushed_course)[0] == 0 and course.requests() == reads(course)
    assert not course.handed[1003].excused and course.grades[1003] == float(expected_score(1003))
    assert len(course.comments[1003]) == 2 and course.handed[1004].excused
    with sqlite3.connect(pushed_course / "grades" / "n-queens" / "gradebook.db") as db:
        rows = db.execute("SELECT student, score, excused, outcome FROM lms_sent WHERE student IN "
                          "('canvas:1003', 'canvas:1004') ORDER BY id").fetchall()
    assert rows == [("canvas:1003", None, 1, "sent"), ("canvas:1004", None, 1, "sent"),
                    ("canvas:1003", float(expected_score(1003)), None, "sent")]


def test_canvas_s_own_excuse_is_never_overwritten_by_a_grade_unless_it_was_withdrawn_here(pushed_course):
    """Canvas excuses a student after the pull: the push sends them nothing and says to pull.  Pulled, they are
    excused here too; once a person withdraws that excuse here, the grade goes and ends Canvas's."""
    course = course_of(4)
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        course.handed[1002].excused = True                      # in Canvas, since the pull
        code, output = release(pushed_course)
        assert code == 0, output
        assert course.requests() == reads(course) + sends(1001, expected_score(1001)) + \
            sends(1003, expected_score(1003)) + sends(1004, expected_score(1004))
        assert re.search(r"not sent to .*\(canvas:1002\): excused in Canvas, not here: `autograder canvas pull "
                         r"--assignment n-queens` brings Canvas's excuse in", output)
        assert 1002 not in course.grades and course.handed[1002].excused

        assert run(pushed_course, "canvas", "pull", "--assignment", "n-queens")[0] == 0
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        assert course.requests() == reads(course) + sends(1002, None, excuse=True)    # its page, Canvas's excuse
        assert run(pushed_course, "excuse", "--withdraw", str(excuse_id(pushed_course, "canvas:1002")),
                   "--reason", "not excused after all")[0] == 0
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 0, output
        assert course.requests() == reads(course) + sends(1002, expected_score(1002))
    assert not course.handed[1002].excused and course.grades[1002] == float(expected_score(1002))


def test_canvas_s_late_policy_is_refused_when_it_would_deduct_from_slip_days_spent(course_copy, monkeypatch):
    """Canvas counts late by its own due date and knows nothing of slip days: with its late policy on, a hand-in
    the course made on time with slip days would lose points in Canvas.  The push is refused, nothing sent,
    naming them; with Canvas's policy off it goes, and the comment says the slip days spent."""
    configure(course_copy)
    with open(course_copy / "course.toml", "a") as toml:
        toml.write("\n[slip_days]\npool = 4\nmax_per_assignment = 2\nunit_hours = 24\n")
    monkeypatch.setenv("CANVAS_API_TOKEN", TOKEN)
    grade_by_scores(monkeypatch, made_up_score)
    course = course_of(6, late_policy={"late_submission_deduction_enabled": True})
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(course_copy, course, mocker)
        code, output = release(course_copy)
        assert code == 1 and course.requests() == reads(course) and course.comments == {}
        who = f"{course.students[1005].name} (canvas:1005)"
        assert output == (
            "autograder: error: the Canvas course's late policy deducts 10% per day from late submissions, and "
            "Canvas counts late 1 hand-in(s) of n-queens that the course does not (slip days, or an extension granted "
            f"here): Canvas would deduct again from {who} (2 slip day(s) spent). Turn Canvas's off (Grades → ⚙ "
            "Settings → Late Policies), then release again\n")
        course.late_policy = {"late_submission_deduction_enabled": False}
        mocker.reset_mock()
        code, output = release(course_copy)
        assert code == 0, output
    [(text, _)] = course.comments[1005]
    assert "Slip days: 2 slip day(s) spent; 2 of 4 slip day(s) left after this assignment." in text
    assert "Slip days" not in course.comments[1004][0][0] and course.grades[1005] == float(expected_score(1005))


def test_canvas_s_late_policy_is_refused_when_it_would_deduct_from_a_hand_in_on_time_by_an_extension_here(
        pushed_course):
    course = course_of(6, late_policy={"late_submission_deduction_enabled": True})
    with requests_mock.Mocker() as mocker:
        course.serve(mocker)
        pull_and_grade(pushed_course, course, mocker)
        code, output = release(pushed_course, "--dry-run")             # late here too: Canvas's is the only deduction
        assert code == 0 and "note: Canvas's late policy deducts 10% per day from late submissions' grades" in output
        code, output = run(pushed_course, "extend", "--assignment", "n-queens", "--student", "canvas:1005",
                           "--until", "2026-11-03T23:59:00-05:00", "--reason", "illness")
        assert code == 0, output
        mocker.reset_mock()
        code, output = release(pushed_course)
        assert code == 1 and course.requests() == reads(course) and course.comments == {}
    assert output.startswith("autograder: error: the Canvas course's late policy deducts 10% per day from late "
                             "submissions, and Canvas counts late 1 hand-in(s) of n-queens that the course does not")
    assert f"Canvas would deduct again from {course.students[1005].name} (canvas:1005) (on time here: " in output
