"""Write the example class for no-three-in-line: synthetic hand-ins with typical mistakes.

Each student starts from the generated student notebook and fills in its
cells the way a real student might.  Run from the repository root:

    .venv/bin/python examples/no-three-in-line/make_submissions.py

expected_scores.csv beside this file holds the score each one should get,
worked out by hand from the cases (see the comments below), not copied from
the grader's output.

The cases (autograder/assignments/no-three-in-line/cases.toml), for reference
(positions pos[c] = row of the queen in column c, points (row, col)):

  public (4.2)                                    hidden (0.8; H1, H7, H8 0.1, the rest 0.05)
  P1  collinear((0, 0), (1, 2), (2, 4))  True  0.25   H1 collinear((1, 0), (2, 2), (0, 2))  False
  P2  collinear((0, 0), (1, 2), (2, 5))  False 0.25   H2 collinear((4, 0), (4, 3), (4, 7))  True
  P3  collinear((3, 1), (1, 2), (5, 0))  True  0.25   H3 is_valid([])                       True
  P4  collinear((1, 4), (3, 4), (6, 4))  True  0.25   H4 is_valid((1, 3, 0, 2))             True
  P5  is_valid([2, 5, 7, 1, 3, 0, 6, 4]) True  0.3    H5 is_valid([0, 2, 0])                False
  P6  is_valid([0, 2, 4, 1, 3])          False 0.3    H6 first_solution(1)                  [0]
  P7  is_valid([1, 3, 0, 2])             True  0.2    H7 first_solution(9)
  P8  is_valid([0, 1])                   False 0.2    H8 count_solutions(10)                40
  P9  can_add([1, 3], 0)                 True  0.25
  P10 can_add([0, 2], 4)                 False 0.25
  P11 solutions(4)   [[1, 3, 0, 2], [2, 0, 3, 1]]  0.3
  P12 solutions(8)   the 8 solutions               0.2
  P13 first_solution(8)  [2, 4, 7, 3, 0, 6, 1, 5]  0.35
  P14 first_solution(6)  None                      0.25
  P15 count_solutions(8)  8                        0.35
  P16 count_solutions(9)  32                       0.25

  Hidden twins (a public check on another input; cases.toml's requires): H9 collinear((1, 1),
  (2, 3), (3, 6)) False (every collinear case requires P1, P2, H2, H9); H10 is_valid([2, 0, 3, 1])
  True, H11 is_valid([0, 3, 1, 4, 2]) False (every is_valid case: P6, P7, H10, H11); H12
  can_add([3, 0], 2) True, H13 can_add([1, 3], 5) False (every can_add case: P9, P10, H12, H13,
  and every solutions and count_solutions case: they are only as right as can_add); H7 for P13, P14.

Useful facts: the two 4 x 4 n-queens solutions have no three queens on any
line, so a solver that forgets the line rule still gets P11 right; and for
n = 8 the plain n-queens puzzle has 92 solutions, the first [0, 4, 7, 5, 2, 6, 1, 3].
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examplekit import Kit  # noqa: E402

KIT = Kit("no-three-in-line")
REF = KIT.reference
edit = KIT.edit
# A cell of imports that fails: a module from her own computer.
BAD_IMPORTS = "import geometry  # her own module, not handed in\nimport itertools"
WRITTEN = ("collinear", "is-valid", "can-add", "solutions", "first-solution", "count-solutions")
CORRECT = KIT.correct(*WRITTEN)

COLLINEAR_BY_SLOPES = '''
def collinear(p, q, r):
    \'\'\'True if the points p, q, r, each a (row, col) pair, lie on one straight line.\'\'\'
    ### BEGIN YOUR CODE
    slope_pq = (q[0] - p[0]) / (q[1] - p[1])
    slope_pr = (r[0] - p[0]) / (r[1] - p[1])
    return slope_pq == slope_pr
    ### END YOUR CODE
'''

COLLINEAR_WITH_ABS = '''
def collinear(p, q, r):
    \'\'\'True if the points p, q, r, each a (row, col) pair, lie on one straight line.\'\'\'
    ### BEGIN YOUR CODE
    return abs(q[0] - p[0]) * abs(r[1] - p[1]) == abs(q[1] - p[1]) * abs(r[0] - p[0])
    ### END YOUR CODE
'''

FIRST_OR_EMPTY = '''
def first_solution(n):
    \'\'\'The first solution for an n x n board in increasing order, or None if there is none.\'\'\'
    ### BEGIN YOUR CODE
    found = list(solutions(n))
    return found[0] if found else []
    ### END YOUR CODE
'''

CAN_ADD_NO_LINES = '''
def can_add(pos, row):
    \'\'\'True if a queen at (row, len(pos)) keeps the valid position pos valid.\'\'\'
    new = (row, len(pos))
    points = [(int(r), col) for col, r in enumerate(pos)]
    ### BEGIN YOUR CODE
    return not any(attacks(p, new) for p in points)
    ### END YOUR CODE
'''

SHARED_LIST = edit("solutions", "yield list(pos)", "yield pos")

VALID_ROWS_ONLY = edit("is-valid", "        if attacks(p, q):", "        if p[0] == q[0]:  # same row (the columns differ anyway)")

CHATTY = {
    **CORRECT,
    "can-add": edit("can-add", "    new = (row, len(pos))\n",
                    "    new = (row, len(pos))\n    print('trying', new, 'next to', list(pos))\n"),
    "solutions": edit("solutions", "        if len(pos) == n:\n",
                      "        if len(pos) == n:\n            print('found', pos)\n"
                      "            import sys; print(len(pos), file=sys.stderr)\n"),
}

# student -> (cell replacements, extra edit); the comment works out the score.
STUDENTS = {
    # everything right: 5
    "alice": (CORRECT, None),
    # compares slopes: P4 (three points in one column) divides by zero (-0.25).  Every
    # other call has two points in different columns from the first (points of a
    # position never share a column), and equal fractions of small integers give
    # equal floats, so nothing else changes.  4.75
    "bob": ({**CORRECT, "collinear": COLLINEAR_BY_SLOPES}, None),
    # compares absolute values, so a line and its mirror image look the same: H1
    # fails.  Her is_valid and can_add also reject triples that only bend the mirror
    # way, e.g. (5, 1), (7, 2), (1, 3) in P5 (steps (+2, +1) and (-4, +2)): P5 fails.
    # P6-P10 and P11 pass (the 4 x 4 solutions have no such triple).  Checked one by
    # one with her test: every 8 x 8 solution has such a triple, so P12 ([]), P13
    # (None), P15 (0) fail; P14 (None) passes; for n = 9 she keeps 16 of 32 (P16
    # fails), the first of them the real first one (H7 passes); n = 10 she keeps 10
    # of 40 (H8 fails).  P11 requires P12, and P14 and H6 require P13 (cases.toml: a
    # 4 x 4 board has no three queens on a line, and n = 6 and n = 1 say nothing of
    # lines either): withheld (-0.3 - 0.25 - 0.05).  Her twins H9-H13 pass.
    # 5 - 0.1 - 0.3 - 0.2 - 0.35 - 0.35 - 0.25 - 0.1 - 0.6 = 2.75
    "carol": ({**CORRECT, "collinear": COLLINEAR_WITH_ABS}, None),
    # returns [] when there is no solution: P14 fails (-0.25).  4.75
    "dave": ({**CORRECT, "first-solution": FIRST_OR_EMPTY}, None),
    # can_add checks attacks only: the search solves the plain n-queens puzzle.
    # P10 and H13 fail (no attack there) (-0.25 - 0.05), P11 passes (see above), P12 (92
    # solutions), P13 ([0, 4, 7, 5, 2, 6, 1, 3]), P14 ([1, 3, 5, 0, 2, 4]), P15 (92), P16
    # (352), H7 and H8 (724) fail (-0.2 - 0.35 - 0.25 - 0.35 - 0.25 - 0.1 - 0.1); H6
    # passes.  collinear and is_valid are right.  P9 and H12 require P10 (and H13), P11
    # requires P12 and H6 requires P13, which all fail: withheld (-0.25 - 0.05 - 0.3 - 0.05).
    # 5 - 1.9 - 0.65 = 2.45
    "erin": ({**CORRECT, "can-add": CAN_ADD_NO_LINES}, None),
    # yields pos itself: once the search is over every item is that one list, popped
    # back to []: P11 and P12 fail (-0.5).  first_solution stops at the first yield
    # and returns the list before anything is popped, so it is right; count_solutions
    # only counts.  4.5
    "frank": ({**CORRECT, "solutions": SHARED_LIST}, None),
    # right, but prints every square she tries and every solution (and to stderr): 5
    "grace": (CHATTY, None),
    # her imports cell stops at a module she does not have, before `import itertools`:
    # is_valid and can_add raise NameError on every call, even is_valid([]), and so
    # do solutions, first_solution and count_solutions (can_add([], 0) is their
    # first step).  Only collinear works: P1-P4, H1, H2, H9.  1 + 0.2 = 1.2
    "heidi": (CORRECT, {"imports": BAD_IMPORTS}),
    # the untouched student notebook: 0
    "judy": ({}, None),
    # her is_valid checks rows and lines but forgets the diagonals: P8 fails (-0.2);
    # her can_add (with attacks) is right.  4.8
    "mallory": ({**CORRECT, "is-valid": VALID_ROWS_ONLY}, None),
}


def main():
    KIT.write_all(STUDENTS)
    print(KIT.listing())


if __name__ == "__main__":
    main()
