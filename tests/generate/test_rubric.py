"""public_rubric.xlsx read back with openpyxl."""

from openpyxl import load_workbook



def test_rubric_has_exactly_the_public_cases(course, nqueens, nqueens_expected):
    book = load_workbook(course.root / "public_rubric.xlsx")
    assert book.sheetnames == course.assignment_ids()
    rows = list(book["n-queens"].iter_rows(values_only=True))
    end = [r[0] for r in rows].index("Total")        # a deadline adds rows after the total
    header, body, hidden, total = rows[0], rows[1:end - 1], rows[end - 1], rows[end]
    assert header == ("Function", "Arguments", "Expected value", "Points", "Time limit (s)",
                      "Counts only when these pass")
    # Each public case's limit, from the reference's timing on the building machine.
    assert all(type(r[4]) in (int, float) and r[4] >= 0.25 for r in body)

    public = nqueens.public_cases
    assert [(r[0], r[0] + r[1]) for r in body] == [(c.function, c.call.text) for c in public]
    assert [r[3] for r in body] == [c.points for c in public]
    assert round(sum(r[3] for r in body), 6) == 4.2

    assert body[0][2] == 7                       # get_n: a number stays a number
    assert body[1][2] is True and body[2][2] is False
    assert body[4][2] == nqueens_expected["board2str([0, 4, 7, 5, 2, 6, 1, 3])"]

    assert hidden[0] == "hidden cases"
    assert hidden[1] == f"{len(nqueens.hidden_cases)} cases, not shown"
    assert hidden[2] in (None, "") and hidden[3] == 0.8
    assert total[0] == "Total" and total[3] == 5

    # What a case requires (cases.toml), as the check cells and the grader judge it: public calls, and hidden
    # twins counted, never shown.
    requires = {r[0] + r[1]: r[5] for r in body}
    assert requires["is_solved(list(range(15)))"] == "is_solved([0, 2, 4, 6, 1, 3, 5])\n2 other hidden cases"
    assert requires["count_solutions(1)"] == "count_solutions(2)\ncount_solutions(4)\n2 other hidden cases"
    assert requires["get_n([0, 2, 4, 6, 1, 3, 5])"] == "1 other hidden case"
    assert hidden[5] == "some of them: is_solved([0, 2, 4, 6, 1, 3, 5])\nis_solved(list(range(15)))\n" \
                        "board2str([0, 1, 2, 3, 4, 5])\n2 other hidden cases"


def test_rubric_never_shows_hidden_inputs(course, nqueens):
    book = load_workbook(course.root / "public_rubric.xlsx")
    text = "\n".join(str(v) for sheet in book.worksheets for row in sheet.iter_rows(values_only=True)
                     for v in row if v is not None)
    for case in nqueens.hidden_cases:
        assert case.call.text not in text
        assert case.call.text[len(case.function):] not in text
