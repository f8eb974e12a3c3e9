"""The roster: each LMS's class list read by its header, the course's records, and matching hand-ins to students."""

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest

from autograder.core.course import LateRules
from autograder.gradebook import Gradebook
from autograder.roster.lms_files import RosterFileError, read_roster
from autograder.roster.match import match
from autograder.roster.store import CourseRecords, RecordsError, apply_adjustments

CANVAS = """Student,ID,SIS User ID,SIS Login ID,Section,N-Queens (501),Current Score
    Points Possible,,,,,5.00,(read only)
,,,,,Manual Posting,
"Smith, Alice",1001,S1001,asmith,Section A,4,80
"=cmd, Eve",1002,S1002,eve,Section B,,
"Student, Test",1099,,a3a3a3,Section A and Section B,,
"""


def write(tmp_path, text, name="roster.csv", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_a_canvas_export_gives_ids_sections_columns_and_flags_the_test_student(tmp_path):
    roster = read_roster(write(tmp_path, CANVAS))
    assert roster.kind == "Canvas gradebook export" and roster.lms_columns == ["N-Queens (501)"]
    alice, eve, test = roster.entries
    assert (alice.key, alice.name, alice.sortable_name, alice.sis_id, alice.login, alice.section) == \
        ("canvas:1001", "Alice Smith", "Smith, Alice", "S1001", "asmith", "Section A")
    assert eve.name == "Eve =cmd" and not eve.test_student      # a name is data, whatever it starts with
    assert test.test_student and test.key == "canvas:1099"


def test_a_canvas_export_with_semicolons_a_bom_and_first_last_columns(tmp_path):
    text = "\ufeffLastName;FirstName;ID;SIS Login ID;Section;HW (7)\nSmith;Alice;1001;asmith;A;3,5\n"
    roster = read_roster(write(tmp_path, text))
    assert [(e.key, e.name, e.sortable_name) for e in roster.entries] == [("canvas:1001", "Alice Smith",
                                                                          "Smith, Alice")]


def test_a_row_without_an_id_is_said_not_guessed(tmp_path):
    roster = read_roster(write(tmp_path, "Student,ID,SIS Login ID,Section\n\"Doe, Jane\",,jdoe,A\n"))
    assert roster.entries == [] and "Jane Doe has no Canvas user id" in roster.skipped[0][1]


def test_moodle_participants_and_worksheet(tmp_path):
    roster = read_roster(write(tmp_path, "First name,Last name,Email address,ID number\nJane,Doe,Jane@Uni.example,"
                                         "S7\n"))
    assert [(e.key, e.name, e.sis_id) for e in roster.entries] == [("email:jane@uni.example", "Jane Doe", "S7")]
    sheet = read_roster(write(tmp_path, "Identifier,Full name,Email address,Status,Grade\n"
                                        "Participant 4711,Jane Doe,jane@uni.example,Submitted,\n", "w.csv"))
    assert sheet.kind == "Moodle grading worksheet" and sheet.entries[0].aliases == ("moodle:4711",)


def test_gradescope_and_classroom_rosters(tmp_path):
    scope = read_roster(write(tmp_path, "First Name,Last Name,SID,Email,Role,Sections\n"
                                        "Jane,Doe,0675,jane@uni.example,Student,L1\nTa,Ng,,ta@uni.example,TA,\n"))
    assert [(e.key, e.name, e.section) for e in scope.entries] == [("gradescope:0675", "Jane Doe", "L1")]
    room = read_roster(write(tmp_path, '"identifier","github_username","github_id","name"\n'
                                       '"jane@uni.example","janedoe","40261856","Jane Doe"\n"s2","",""\n', "c.csv"))
    assert [(e.key, e.login) for e in room.entries] == [("janedoe", "janedoe"), ("classroom:s2", "")]


def test_an_unknown_file_names_what_is_read(tmp_path):
    with pytest.raises(RosterFileError, match="Canvas's gradebook export"):
        read_roster(write(tmp_path, "who,what\nx,y\n"))
    with pytest.raises(RosterFileError, match="empty"):
        read_roster(write(tmp_path, "\n\n"))


def test_a_new_import_updates_adds_and_keeps_who_left(tmp_path):
    with CourseRecords(tmp_path / "course.db") as records:
        records.import_roster(read_roster(write(tmp_path, CANVAS)), "one.csv")
        smaller = CANVAS.replace('"Smith, Alice",1001,S1001,asmith,Section A,4,80\n', "")
        added, updated, left, _ = records.import_roster(read_roster(write(tmp_path, smaller)), "two.csv")
        assert (added, left) == ([], ["canvas:1001"])
        assert [s.key for s in records.students()] == ["canvas:1002", "canvas:1099"]   # the test account last
        assert records.find("asmith").on_roster is False


def test_finding_a_student_by_any_of_their_names_and_refusing_a_shared_one(tmp_path):
    with CourseRecords(tmp_path / "course.db") as records:
        records.import_roster(read_roster(write(tmp_path, CANVAS + '"Smith, Alice",1003,S1003,asmith2,B,,\n')),
                              "x")
        assert records.find("S1002").key == "canvas:1002" and records.find("eve").key == "canvas:1002"
        with pytest.raises(RecordsError, match="names 2 students"):
            records.find("alice smith")
        with pytest.raises(RecordsError, match="no student 'zed'"):
            records.find("zed")


@dataclass
class Handin:
    student: str
    name: str
    lms_id: str = ""
    email: str = ""
    lms: str = ""


def test_hand_ins_match_by_key_alias_email_then_a_name_the_lms_wrote(tmp_path):
    with CourseRecords(tmp_path / "course.db") as records:
        records.import_roster(read_roster(write(tmp_path, CANVAS)), "x")
        students = records.students(include_off_roster=True)
    found = match([Handin("moodle:9", "x"), Handin("bob", "bob", lms="file"),
                   Handin("d2l:name:Alice Smith", "Alice Smith", lms="d2l")], students, {"moodle:9": "canvas:1002"})
    assert {k: s.key for k, s in found.matched.items()} == {"moodle:9": "canvas:1002",
                                                             "d2l:name:Alice Smith": "canvas:1001"}
    assert found.unmatched == ["bob"] and [n for n, _ in found.by_name] == ["Alice Smith"]
    assert any("cannot place" in note and "bob" in note for note in found.notes())
    assert any("by the name the LMS wrote" in note and "Alice Smith" in note for note in found.notes())


def test_a_name_someone_chose_never_places_a_hand_in(tmp_path):
    # Issue 32's rule, for names as for logins: `Alice Smith.ipynb` (a file whoever saved it named) and a
    # folder so named are nobody's by their name; they stay unplaced, and say why.
    with CourseRecords(tmp_path / "course.db") as records:
        records.import_roster(read_roster(write(tmp_path, CANVAS)), "x")
        students = records.students(include_off_roster=True)
    found = match([Handin("Alice Smith", "Alice Smith", lms="file"), Handin("eve", "eve", lms="folder"),
                   Handin("Alice_Smith", "Alice Smith", lms="zip")], students, {})
    assert found.matched == {} and not found.by_name
    assert [why for _, _, why in found.unplaced] == ["a file is named by whoever saved it, and a name decides no grade",
                                                  "a folder is named by whoever made it, and a name decides no grade",
                                                  "a zip is named by whoever saved it, and a name decides no grade"]


def test_a_name_never_merges_a_hand_in_into_another_students_row(tmp_path):
    # Alice's own hand-in came in under her Canvas id; one the LMS named after her (a classmate's, or a
    # second Alice) must keep its own row, not replace or join hers.  Two name-only hand-ins for one
    # student are the same: neither is surely hers.
    with CourseRecords(tmp_path / "course.db") as records:
        records.import_roster(read_roster(write(tmp_path, CANVAS)), "x")
        students = records.students(include_off_roster=True)
    found = match([Handin("canvas:1001", "smithalice", lms="canvas"),
                   Handin("teams:Alice Smith", "Alice Smith", lms="teams")], students, {})
    assert {k: s.key for k, s in found.matched.items()} == {"canvas:1001": "canvas:1001"}
    assert [(n, s.key) for n, s in found.name_taken] == [("Alice Smith", "canvas:1001")] and not found.by_name
    assert any("never merges" in note and "Alice Smith" in note for note in found.notes())
    assert [key for _, key, _ in found.unplaced] == ["teams:Alice Smith"]

    found = match([Handin("teams:one", "Alice Smith", lms="teams"), Handin("teams:two", "smith alice", lms="teams")],
                  students, {})
    assert found.matched == {} and len(found.name_taken) == 2 and not found.unmatched


def test_an_extension_or_an_accommodation_moves_one_students_deadline(tmp_path):
    deadline = datetime(2026, 11, 1, 23, 59, tzinfo=timezone(timedelta(hours=-5)))
    with CourseRecords(tmp_path / "course.db") as records:
        records.accommodate("extra-time", 2 * 86400, "letter from disability services", ["canvas:1"])
        own, why = records.deadline_for("hw", "canvas:1", deadline)
        assert own == deadline + timedelta(days=2) and "2 days extra" in why
        records.extend("hw", "canvas:1", "2026-11-02T12:00:00-05:00", "flu")
        assert records.deadline_for("hw", "canvas:1", deadline)[0] == deadline + timedelta(days=2)  # the later
        records.extend("hw", "canvas:1", "2026-11-10T12:00:00-05:00", "flu, longer")
        own, why = records.deadline_for("hw", "canvas:1", deadline)
        assert own.day == 10 and "flu, longer" in why
        assert len(records.extensions("hw")) == 1 and len(records.extensions("hw", all_of_them=True)) == 2
        assert records.deadline_for("hw", "canvas:2", deadline) == (deadline, "")


def test_adjustments_apply_in_order_and_a_withdrawn_one_keeps_its_row(tmp_path):
    with CourseRecords(tmp_path / "course.db") as records:
        first = records.adjust("hw", "s", "bonus", points=1, score_before=3)
        records.adjust("hw", "s", "oral exam", score=4.5)
        assert apply_adjustments(3, records.adjustments("hw", "s")) == 4.5
        records.withdraw_adjustment(first.id + 1, "entered twice")
        assert apply_adjustments(3, records.adjustments("hw", "s")) == 4
        assert [a.active for a in records.adjustments("hw", all_of_them=True)] == [True, False]
        with pytest.raises(RecordsError, match="--reason"):
            records.adjust("hw", "s", " ", points=1)
        with pytest.raises(RecordsError, match="no standing adjustment"):
            records.withdraw_adjustment(first.id + 1, "again")


def test_a_roster_student_with_nothing_is_not_yet_before_their_deadline_and_missing_after(tmp_path):
    past = datetime.now(timezone.utc) - timedelta(days=1)
    with CourseRecords(tmp_path / "course.db") as records:
        records.import_roster(read_roster(write(tmp_path, CANVAS)), "x")
        records.extend("hw", "canvas:1002", (past + timedelta(days=7)).isoformat(), "")
        gradebook = Gradebook(tmp_path / "gradebook.db")
        gradebook.apply_lateness("hw", LateRules(past), records, 5.0)
        rows = {r.student: r for r in gradebook.grades("hw")}
        assert set(rows) == {"canvas:1001", "canvas:1002"}          # no row for the test account
        assert (rows["canvas:1001"].status, rows["canvas:1001"].score) == ("missing", 0.0)
        assert rows["canvas:1002"].status == "not-yet"
        records.adjust("hw", "canvas:1001", "handed in on paper", score=3)
        gradebook.apply_lateness("hw", LateRules(past), records, 5.0)
        assert {r.student: r.score for r in gradebook.grades("hw")}["canvas:1001"] == 3
        gradebook.close()
