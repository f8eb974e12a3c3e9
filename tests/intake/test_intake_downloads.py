"""Every LMS download as it really ships: one row per student, never a class merged into one row.

The downloads are rebuilt from each vendor's documented layout (tests/lms_downloads.py says from what).
"""

import pytest

from autograder.intake import IntakeOptions, collect
from lms_downloads import CLASS, LAYOUTS

OPTIONS = IntakeOptions("n-queens", "n-queens.ipynb")


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout.__name__ for layout in LAYOUTS])
def test_no_layout_known_or_unknown_gives_fewer_rows_than_the_students_who_handed_in(layout, tmp_path):
    """Every layout the suite knows, and the ones a student's names or a stray folder make of them: a row for
    each hand-in, and no notebook only listed as "ignored" (another assignment's, in a Teams library, is not
    this one's)."""
    path, students = layout(tmp_path)
    intake = collect([path], tmp_path / "out", OPTIONS)
    rows = {h.student for h in intake.handins}
    assert len(rows) >= students, (sorted(rows), intake.notes)
    dropped = [i for i in intake.ignored if i.split(" (")[0].lower().endswith((".ipynb", ".py", ".ipynb.txt"))
               and not i.endswith("(another assignment's)")]
    assert not dropped, dropped


@pytest.mark.parametrize("layout", [layout for layout in LAYOUTS if layout.__name__ in (
    "canvas", "moodle", "moodle_flat", "gradescope_zip", "gradescope_unzipped", "blackboard", "d2l", "teams")])
def test_an_lms_download_gives_each_student_their_own_row_with_the_lms_s_name(layout, tmp_path):
    path, _ = layout(tmp_path)
    intake = collect([path], tmp_path / "out", OPTIONS)
    names = {h.student: h.name for h in intake.handins}
    assert sorted(set(names.values())) == sorted(name if layout.__name__ not in ("canvas",) else
                                                 "".join(reversed(name.lower().split())) for name, _, _ in CLASS)
    assert len(names) == len(CLASS)
    assert not [n for n in intake.notes if n.startswith("warning:")], intake.notes


def test_the_blackboard_attempt_that_counts_names_the_later_ones_that_held_no_notebook(tmp_path):
    """Bob's last attempt was a PDF: his notebook attempt counts, and its note no longer reads as if it were the
    last one ("attempt 1 of 2 ... (the last one counts)")."""
    import zipfile
    from lms_downloads import ALICE, add, blackboard_receipt
    path = tmp_path / "gradebook_CS101-2026_N-Queens_2026-03-05-10-00-00.zip"
    with zipfile.ZipFile(path, "w") as bundle:
        for stamp, stored, data in (("2026-03-02-15-15-00", "n-queens.ipynb", ALICE),
                                    ("2026-03-03-09-30-00", "answers.pdf", b"%PDF-1.4 ...")):
            add(bundle, f"N-Queens_bjones_attempt_{stamp}.txt",
                blackboard_receipt("Bob Jones", "bjones", "Monday, March 2, 2026 3:15:00 PM EST", [(stored, stored)]))
            add(bundle, f"N-Queens_bjones_attempt_{stamp}_{stored}", data)
    intake = collect([path], tmp_path / "out", OPTIONS)
    notebook = next(h for h in intake.handins if h.status is None)
    said = " ".join(notebook.notes)
    assert "attempt 1 of 2 in the Blackboard download counts: the later attempt 2 (2026-03-03T09:30:00) held no " \
           "notebook" in said and "the last one counts" not in said
    pdf = next(h for h in intake.handins if h.status is not None)
    assert "attempt 2 of 2" in pdf.message
