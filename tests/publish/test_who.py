"""Who a student is to each LMS's files (publish/who.py): the roster's ids first, else what the LMS's download
said of the hand-in, as the gradebook kept it; never an id sliced out of a key or parsed out of a source."""

import csv
import io
from types import SimpleNamespace

import pytest

from autograder.gradebook.read import AbsentRow, FeedbackError, PendingRow, SubmissionRow
from autograder.publish import blackboard, d2l
from autograder.publish.lms import Line, canvas_csv, feedback_file_name, gradescope_csv, moodle_csv
from autograder.publish.who import of_absent, of_pending, of_submission, who
from autograder.roster.store import Student


def row(student, name, lms="", lms_id="", prefix="", repository="", email="", score=3.0):
    return SubmissionRow(student=student, assignment="n-queens", source="not read", submitted_at="", score=score,
                         max_score=5.0, status="graded", message="", seconds=1.0, student_seconds=1.0, handins=1,
                         name=name, email=email, lms=lms, lms_id=lms_id, lms_prefix=prefix, repository=repository)


def table(text):
    return list(csv.reader(io.StringIO(text)))


CANVAS = {"canvas:1001": Student("canvas:1001", "Alice Smith", "Smith, Alice", "canvas", "1001", "S1001", "asmith"),
          "canvas:1099": Student("canvas:1099", "Test Student", "Student, Test", "canvas", "1099",
                                 test_student=True)}
D2L = {"d2l:asmith": Student("d2l:asmith", "Alice Smith", "Smith, Alice", "d2l", "", "0012345", "asmith"),
       "d2l:org:777": Student("d2l:org:777", "Bo Org", "Org, Bo", "d2l", "", "777", "")}


def test_the_roster_names_a_student_on_it_and_the_hand_in_one_who_is_not():
    matched = of_submission(row("canvas:1001", "smithalice", "file"), CANVAS)   # a plain file matched by name
    assert (matched.name, matched.sortable_name, matched.canvas_id) == ("Alice Smith", "Smith, Alice", "1001")
    stray = of_submission(row("canvas:1002", "jonesbob", "canvas", "1002", "jonesbob_1002_5002_"), CANVAS)
    assert (stray.canvas_id, stray.feedback_prefix) == ("1002", "jonesbob_1002_5002_")
    assert of_submission(row("canvas:1099", "studenttest", "canvas", "1099"), CANVAS).test_account
    # a key that looks like an LMS's is only a key: no id is read out of it
    assert of_submission(row("canvas:1003", "x", "file"), {}).canvas_id == ""


def test_moodle_s_participant_id_comes_only_from_its_download():
    roster = {"email:ann@x": Student("email:ann@x", "Ann Lee", "Lee, Ann", "moodle", "", "S7", "alee", "ann@x")}
    from_download = of_submission(row("email:ann@x", "Ann Lee", "moodle", "502", "Ann Lee_502_assignsubmission_file_/"),
                                  roster)
    assert (from_download.moodle_participant, from_download.email) == ("502", "ann@x")
    by_hand = of_submission(row("email:ann@x", "Ann Lee", "file"), roster)
    assert by_hand.moodle_participant == ""
    text, left = moodle_csv([Line(from_download, "graded", 4.0), Line(by_hand, "graded", 2.0)], 5.0)
    assert table(text)[1][:4] == ["Participant 502", "Ann Lee", "ann@x", "4"] and left == ["Ann Lee (email:ann@x)"]


def test_d2l_rows_carry_every_id_the_roster_has_and_blackboard_s_its_username():
    lines = [Line(of_absent(AbsentRow("d2l:asmith", "Alice Smith", "missing", 0.0, 5.0, "", "", ""), D2L), "missing",
                  0.0),
             Line(of_absent(AbsentRow("d2l:org:777", "Bo Org", "missing", 0.0, 5.0, "", "", ""), D2L), "missing",
                  0.0),
             Line(of_submission(row("d2l:name:Cy", "Cy", "d2l"), {}), "graded", 5.0)]     # D2L's download: no id
    assignment = SimpleNamespace(id="n-queens", title="The n-queens puzzle", max_score=5.0)
    text, notes = d2l.release_file(lines, None, assignment)
    rows = table(text)
    assert [r[:3] for r in rows[1:]] == [["#0012345", "#asmith", "0"], ["#777", "", "0"]]
    assert "no D2L grade item is 'The n-queens puzzle'" in notes[0]       # no export seen: a new item, said
    item = "N-Queens Points Grade <Numeric MaxPoints:5 Weight:10>"
    text, notes = d2l.release_file(lines, None, assignment, seen=["OrgDefinedId", item])
    assert table(text)[0][2] == item and notes == []
    assert d2l.release_file(lines[2:], None, assignment)[1] == [
        "d2l_grades.csv has no rows: no student has a D2L Username or OrgDefinedId, which only D2L's grades export "
        "gives (import it with `autograder roster import`)"]
    board = {"blackboard:bjones": Student("blackboard:bjones", "Bob Jones", "Jones, Bob", "blackboard", "bjones",
                                          "S2", "bjones")}
    lines = [Line(of_submission(row("blackboard:bjones", "Bob Jones", "blackboard", "bjones"), board), "graded", 2.9),
             Line(of_submission(row("blackboard:ann", "Ann", "blackboard", "ann"), {}), "graded", 1.0)]
    text, notes = blackboard.release_file(lines, None, assignment)
    assert table(text)[1:] == [["Jones", "Bob", "bjones", "2.9"], ["Ann", "", "ann", "1"]]
    assert table(text)[0][3] == "The n-queens puzzle" and "would make a new text column worth 0 points" in notes[0]
    # The Grade Centre download's column, imported with the roster, is the one its grades go to.
    column = "N-Queens [Total Pts: 5 Score] |664617"
    text, notes = blackboard.release_file(lines, None, assignment, seen=["Username", column])
    assert table(text)[0][3] == column and notes == []


def test_gradescope_s_sid_and_email_and_canvas_s_blank_rows():
    roster = {"gradescope:ada@x": Student("gradescope:ada@x", "Ada", "", "gradescope", "", "", "", "ada@x")}
    lines = [Line(of_submission(row("gradescope:ada@x", "Ada", "gradescope", "", email="ada@x"), roster), "graded",
                  5.0, 5.0, "graded"),
             Line(of_submission(row("gradescope:42", "Bo", "gradescope", "42"), {}), "graded", 1.0, 5.0, "graded")]
    assert [r[:3] for r in table(gradescope_csv(lines))[1:]] == [["Ada", "", "ada@x"], ["Bo", "42", ""]]
    waiting = Line(of_pending(PendingRow("canvas:1001", "smithalice", "canvas", "1001"), {}), "blank")
    assert table(canvas_csv([waiting], "N-Queens (501)"))[1] == ["smithalice", "1001", "", "", "", ""]   # never 0


def test_feedback_files_are_named_as_the_lms_pairs_them():
    page = SimpleNamespace(folder="dave-1a2b3c")
    assert feedback_file_name(page, who("canvas:1", "x", {}, "canvas", "1", prefix="x_1_9_")) == "x_1_9_feedback.html"
    assert feedback_file_name(page, who("moodle:5", "Jo", {}, "moodle", "5", prefix="Jo_5_assignsubmission_file_/")) \
        == "Jo_5_assignsubmission_file_/feedback.html"
    assert feedback_file_name(page, who("dave", "dave", {}, "file")) == "dave-1a2b3c_feedback.html"


def test_a_gradebook_that_kept_no_identity_is_never_released_with_blank_ids():
    old = row("canvas:1001", "Alice Smith")
    old = SubmissionRow(**{**old.__dict__, "lms": None, "lms_id": None, "lms_prefix": None, "repository": None})
    with pytest.raises(FeedbackError, match="could not be upgraded"):
        of_submission(old, CANVAS)
