"""Slip days, excuses and who is `missing`, applied by every refresh of a gradebook (gradebook/semester.py).

Hand-ins are recorded straight into the course's gradebooks (no sandbox): what is tested is the one rule each
refresh applies.  Pawtograder's late-token bugs are the cases to hold: #280 (a token applied twice to an
assignment whose maximum is one, by pressing again) and #648 (a student with a token left, a gifted one, told
they have none).
"""

from datetime import datetime, timedelta, timezone

import pytest

from autograder.core.course import late_rules, load_course
from autograder.core.slip_days import Need, SlipPolicy, allocate, read_policy, SlipDaysError
from autograder.gradebook import Gradebook
from autograder.grade.handin import SubmissionResult
from autograder.intake.collect import Handin
from autograder.roster.lms_files import read_roster
from autograder.roster.store import CourseRecords, RecordsError

DEADLINE = "2026-11-01T23:59:00-05:00"
HOURS = {h: (datetime.fromisoformat(DEADLINE) + timedelta(hours=h)).isoformat() for h in (-2, 0.1, 0.2, 10, 30, 34)}
ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section\n\"Smith, Alice\",1001,,asmith,A\n\"King, Carol\",1003,,cking,A\n"
          "\"Lee, Dave\",1004,,dlee,A\n")


def course_with(course_copy, slip="pool = 2\nmax_per_assignment = 2\n", policy="per-day", joiners=None):
    text = (course_copy / "course.toml").read_text()
    for assignment in ("n-queens", "bitwise-queens"):
        text = text.replace(f'[assignment.{assignment}]\n# deadline = "2026-12-01T23:59:00-05:00"\nlate_policy = "none"',
                            f'[assignment.{assignment}]\ndeadline = "{DEADLINE}"\nlate_policy = "{policy}"\n'
                            + ("late_penalty = 1" if policy == "per-day" else "late_cap = 2"))
    if joiners:
        text = text.replace("[course]\n", f'[course]\nlate_joiners = "{joiners}"\n', 1)
    if slip is not None:
        text += f"\n[slip_days]\n{slip}"
    (course_copy / "course.toml").write_text(text)
    course = load_course(course_copy)
    (course_copy / "roster.csv").write_text(ROSTER)
    with CourseRecords.of(course) as records:
        records.import_roster(read_roster(course_copy / "roster.csv"), "roster.csv")
    return course


def hand_in(course, assignment, student, hours, sha=None, score=5.0, status="graded", late_mark=None):
    """Record one hand-in (`hours` after the deadline; None: no time) in the course's gradebook."""
    folder = course.grades_dir(assignment)
    folder.mkdir(parents=True, exist_ok=True)
    gradebook = Gradebook(folder / "gradebook.db")
    handin = Handin(student, f"{sha or student}.ipynb", None, None if hours is None else HOURS[hours],
                    sha256=sha or f"{student}-{assignment}", name=student, late_mark=late_mark)
    result = SubmissionResult(student, assignment, handin.source, score, 5.0, status)
    gradebook.record(gradebook.start_run(assignment, "test", 1, "namespaces"), handin, result, "key")
    gradebook.close()


def refresh(course, *assignments):
    """Each assignment refreshed as every command does (the roster, the course's policies); its rows by key."""
    found = {}
    with CourseRecords.of(course) as records:
        for assignment in assignments or ("n-queens", "bitwise-queens"):
            gradebook = Gradebook(course.grades_dir(assignment) / "gradebook.db")
            gradebook.apply_lateness(assignment, late_rules(course, assignment), records, 5.0, course)
            found[assignment] = {row.student: row for row in gradebook.grades(assignment)}
            gradebook.close()
    return found


def test_days_go_in_deadline_order_and_never_past_the_pool(course_copy):
    course = course_with(course_copy)
    hand_in(course, "n-queens", "canvas:1003", 10)          # 1 started day
    hand_in(course, "bitwise-queens", "canvas:1003", 30)    # 2 started days; 1 is left
    rows = refresh(course)
    nq, bq = rows["n-queens"]["canvas:1003"], rows["bitwise-queens"]["canvas:1003"]
    assert (nq.slip_days, nq.late, nq.score) == (1, 0, 5.0) and "1 of 2 slip day(s) left" in nq.slip_note
    # per-day: the one day left is spent, and it is late by the rest (6 h: one day off).
    assert (bq.slip_days, bq.late, bq.score) == (1, 1, 4.0) and "0 of 2 slip day(s) left" in bq.slip_note
    assert "1 slip day(s) spent" in bq.late_note


def test_a_regrade_or_a_new_upload_never_spends_a_day_twice(course_copy):
    """Pawtograder #280: the same token applied again.  Here nothing is added up as it comes: each refresh counts
    the days of the hand-in that counts, so a regrade spends what it spent, and a later upload replaces it."""
    course = course_with(course_copy, slip="pool = 3\nmax_per_assignment = 2\n")
    hand_in(course, "n-queens", "canvas:1003", 10)
    assert refresh(course, "n-queens")["n-queens"]["canvas:1003"].slip_days == 1
    hand_in(course, "n-queens", "canvas:1003", 10)               # the same file graded again
    hand_in(course, "bitwise-queens", "canvas:1003", 10)
    for _ in range(3):                                            # refreshed by every command, as often as it runs
        rows = refresh(course)
    assert [rows[a]["canvas:1003"].slip_days for a in ("n-queens", "bitwise-queens")] == [1, 1]
    assert "1 of 3 slip day(s) left" in rows["bitwise-queens"]["canvas:1003"].slip_note
    hand_in(course, "n-queens", "canvas:1003", 34, sha="carol-again")   # a later upload: 2 days, not 1 + 2
    rows = refresh(course)
    assert [rows[a]["canvas:1003"].slip_days for a in ("n-queens", "bitwise-queens")] == [2, 1]
    assert "0 of 3 slip day(s) left" in rows["bitwise-queens"]["canvas:1003"].slip_note


def test_an_extension_comes_first_and_gives_the_day_back(course_copy):
    course = course_with(course_copy)
    hand_in(course, "n-queens", "canvas:1003", 10)
    hand_in(course, "bitwise-queens", "canvas:1003", 30)
    assert refresh(course)["bitwise-queens"]["canvas:1003"].slip_days == 1
    with CourseRecords.of(course) as records:
        records.extend("n-queens", "canvas:1003", "2026-11-02T23:59:00-05:00", "flu")
    rows = refresh(course)
    nq, bq = rows["n-queens"]["canvas:1003"], rows["bitwise-queens"]["canvas:1003"]
    assert (nq.slip_days, nq.late) == (0, 0)                   # the extension covers it: no day spent
    assert (bq.slip_days, bq.late, bq.score) == (2, 0, 5.0)    # the day given back goes to the next one
    assert "0 of 2 slip day(s) left" in bq.slip_note


def test_a_choice_made_twice_is_one_choice_and_the_maximum_holds(course_copy):
    """Pawtograder #280: two tokens on an assignment whose maximum is one, by pressing again."""
    course = course_with(course_copy, slip="pool = 3\nmax_per_assignment = 1\n")
    hand_in(course, "n-queens", "canvas:1003", 30)          # needs 2; at most 1 by itself
    assert refresh(course, "n-queens")["n-queens"]["canvas:1003"].slip_days == 1
    with CourseRecords.of(course) as records:
        records.choose_slip_days("n-queens", "canvas:1003", 1, "asked by email")
        records.choose_slip_days("n-queens", "canvas:1003", 1, "asked by email")     # pressed again
        chosen, _ = records.slip_choices()
        assert chosen == {"canvas:1003": {"n-queens": 1}}
        assert [d.active for d in records.slip_decisions(all_of_them=True)] == [False, True]
    row = refresh(course, "n-queens")["n-queens"]["canvas:1003"]
    assert row.slip_days == 1 and "chosen by the teaching team" in row.slip_note and "2 of 3" in row.slip_note


def test_a_day_granted_after_the_pool_ran_out_is_there_to_spend(course_copy):
    """Pawtograder #648: four tokens spent, a fifth gifted, and the page said "no remaining late tokens"."""
    course = course_with(course_copy, slip="pool = 1\nmax_per_assignment = 1\n")
    hand_in(course, "n-queens", "canvas:1003", 10)
    hand_in(course, "bitwise-queens", "canvas:1003", 10)
    rows = refresh(course)
    assert rows["bitwise-queens"]["canvas:1003"].slip_days == 0 and rows["bitwise-queens"]["canvas:1003"].late == 1
    assert "0 of 1 slip day(s) left" in rows["bitwise-queens"]["canvas:1003"].slip_note
    with CourseRecords.of(course) as records:
        records.grant_slip_days("canvas:1003", 1, "gifted after a hard week")
    bq = refresh(course)["bitwise-queens"]["canvas:1003"]
    assert (bq.slip_days, bq.late, bq.score) == (1, 0, 5.0) and "0 of 2 slip day(s) left" in bq.slip_note


def test_each_member_of_a_group_pays_for_the_group_s_late_hand_in(course_copy):
    course = course_with(course_copy, slip="pool = 1\nmax_per_assignment = 1\n")
    hand_in(course, "n-queens", "canvas:1001", 10, sha="team-1")     # one team hand-in: a row for each member
    hand_in(course, "n-queens", "canvas:1003", 10, sha="team-1")
    hand_in(course, "bitwise-queens", "canvas:1001", 10)
    rows = refresh(course)
    assert [rows["n-queens"][s].slip_days for s in ("canvas:1001", "canvas:1003")] == [1, 1]
    assert rows["bitwise-queens"]["canvas:1001"].slip_days == 0       # alice's one day went to the team's


def test_nothing_is_spent_on_what_says_nothing_of_how_late_or_has_no_notebook(course_copy):
    course = course_with(course_copy, slip="pool = 2\nmax_per_assignment = 2\ngrace_minutes = 10\n")
    hand_in(course, "n-queens", "canvas:1001", None, late_mark=True)     # Canvas's _LATE_ mark, no time
    hand_in(course, "n-queens", "canvas:1003", 10, score=0.0, status="invalid-notebook")
    hand_in(course, "n-queens", "canvas:1004", 0.1)                      # 6 min late: within the grace
    rows = refresh(course, "n-queens")["n-queens"]
    assert (rows["canvas:1001"].slip_days, rows["canvas:1001"].late) == (0, 1)
    assert "nothing says how late" in rows["canvas:1001"].slip_note
    assert (rows["canvas:1003"].slip_days, rows["canvas:1004"].slip_days, rows["canvas:1004"].late) == (0, 0, 0)
    assert "within the grace of 10 min" in rows["canvas:1004"].late_note
    with CourseRecords.of(course) as records:        # the teaching team knows it was within a day
        records.choose_slip_days("n-queens", "canvas:1001", 1, "the LMS shows 3 h late")
    alice = refresh(course, "n-queens")["n-queens"]["canvas:1001"]
    assert (alice.slip_days, alice.late, alice.score) == (1, 0, 5.0)


def test_days_that_would_leave_it_late_buy_nothing_under_a_cap_policy(course_copy):
    course = course_with(course_copy, slip="pool = 1\nmax_per_assignment = 1\n", policy="cap")
    hand_in(course, "n-queens", "canvas:1003", 30)
    hand_in(course, "bitwise-queens", "canvas:1003", 10)
    rows = refresh(course)
    assert (rows["n-queens"]["canvas:1003"].slip_days, rows["n-queens"]["canvas:1003"].score) == (0, 2.0)
    assert (rows["bitwise-queens"]["canvas:1003"].slip_days, rows["bitwise-queens"]["canvas:1003"].late) == (1, 0)


def test_the_allocation_rule_by_itself():
    policy = SlipPolicy(3, 2, 24, 0)
    needs = {"a": Need("a", 1), "b": Need("b", 3), "c": Need("c", None), "d": Need("d", 2, excused=True)}
    spent = allocate(policy, ["a", "b", "c", "d"], needs, {}, per_day=lambda a: True)
    assert [(spent[a].days, spent[a].left) for a in "abcd"] == [(1, 2), (2, 0), (0, 0), (0, 0)]
    chosen = allocate(policy, ["a", "b", "c", "d"], needs, {"c": 1}, per_day=lambda a: True)
    assert [chosen[a].days for a in "abcd"] == [1, 1, 1, 0]             # a choice is spent first
    assert policy.needed(0) == 0 and policy.needed(1) == 1 and policy.needed(86400) == 1 and policy.needed(86401) == 2
    assert SlipPolicy(3, 2, 24, 15).needed(15 * 60) == 0


@pytest.mark.parametrize("table, said", [({"pool": -1}, "whole number"), ({"pool": 2.5}, "whole number"),
                                         ({"pool": 2, "unit_hours": float("nan")}, "unit_hours"),
                                         ({"pool": 2, "days": 3}, "no setting 'days'"), ({}, "needs pool")])
def test_a_slip_days_table_that_cannot_be_used_is_refused(table, said):
    with pytest.raises(SlipDaysError, match=said):
        read_policy(table, "course.toml")


def test_a_late_joiner_is_excused_from_what_was_due_before_unless_the_course_says_missing(course_copy):
    past = datetime.now(timezone.utc) - timedelta(days=3)
    for joiners, status in ((None, "excused"), ("missing", "missing")):
        folder = course_copy / joiners if joiners else course_copy / "default"
        folder.mkdir()
        import shutil
        shutil.copytree(course_copy, folder / "c", ignore=shutil.ignore_patterns("default", "missing"))
        course = course_with(folder / "c", slip=None, joiners=joiners)
        text = (folder / "c" / "course.toml").read_text().replace(DEADLINE, past.isoformat(timespec="seconds"))
        (folder / "c" / "course.toml").write_text(text)
        course = load_course(folder / "c")
        hand_in(course, "n-queens", "canvas:1001", None)
        (folder / "week8.csv").write_text(ROSTER + "\"Hopper, Grace\",1007,,ghopper,A\n")
        with CourseRecords.of(course) as records:
            records.import_roster(read_roster(folder / "week8.csv"), "week8.csv")
            grace = next(s for s in records.students() if s.key == "canvas:1007")
            assert grace.joined_at and not next(s for s in records.students() if s.key == "canvas:1003").joined_at
        rows = refresh(course, "n-queens")["n-queens"]
        assert rows["canvas:1007"].status == status, joiners
        assert rows["canvas:1003"].status == "missing"          # on the roster from the start
        if status == "excused":
            assert "joined the course on" in rows["canvas:1007"].excused
        assert refresh(course, "n-queens")["n-queens"]["canvas:1007"].status == status      # the same, every time


def test_an_excuse_takes_a_student_out_with_or_without_a_hand_in_and_its_withdrawal_puts_them_back(course_copy):
    course = course_with(course_copy, slip=None)
    hand_in(course, "n-queens", "canvas:1001", -2, score=4.0)
    past = datetime.now(timezone.utc) - timedelta(days=1)
    assert past > datetime.fromisoformat(DEADLINE)
    with CourseRecords.of(course) as records:
        dave = records.excuse("n-queens", "canvas:1004", "dean's note: ill for two weeks")
        records.excuse("n-queens", "canvas:1001", "joined a section late")
        with pytest.raises(RecordsError, match="--reason"):
            records.excuse("n-queens", "canvas:1003", "  ")
    rows = refresh(course, "n-queens")["n-queens"]
    assert (rows["canvas:1004"].status, rows["canvas:1004"].excused) == ("excused", "excused: dean's note: ill for "
                                                                          "two weeks (by " + dave.made_by + ")")
    assert rows["canvas:1001"].status == "graded" and rows["canvas:1001"].excused.startswith("excused: joined")
    assert rows["canvas:1003"].status == "missing"
    gradebook = Gradebook(course.grades_dir("n-queens") / "gradebook.db")
    gradebook.export_csv("n-queens", course.grades_dir("n-queens") / "grades.csv")
    gradebook.close()
    text = (course.grades_dir("n-queens") / "grades.csv").read_text()
    assert "dean's note" in text
    with CourseRecords.of(course) as records:
        records.withdraw_excuse(dave.id, "entered for the wrong student")
        assert [e.active for e in records.excuses(all_of_them=True) if e.student == "canvas:1004"] == [False]
    rows = refresh(course, "n-queens")["n-queens"]
    assert (rows["canvas:1004"].status, rows["canvas:1004"].score) == ("missing", 0.0)
