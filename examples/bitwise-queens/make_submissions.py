"""Write the example class for bitwise-queens: synthetic hand-ins with typical mistakes.

Each student starts from the generated student notebook and fills in its
cells the way a real student might.  Run from the repository root:

    .venv/bin/python examples/bitwise-queens/make_submissions.py

expected_scores.csv beside this file holds the score each one should get,
worked out by hand from the cases (see the comments below), not copied from
the grader's output.

The cases (autograder/assignments/bitwise-queens/cases.toml), for reference:

  public (4.2)                          hidden (0.8; H1 and H9 0.05, the rest 0.1)
  P1  square_bits(4, 0, 0)      0.25    H1 square_bits(1, 0, 0)
  P2  square_bits(4, 3, 0)      0.25    H2 rowuses(4, 3)
  P3  square_bits(8, 2, 5)      0.25    H3 queens_solutions(1)
  P4  rowuses(4, 0)             0.25    H4 queens_solutions(3)   (no solution: [])
  P5  rowuses(5, 2)             0.2     H5 queens_solutions(7)
  P6  queens_solutions(4)       0.5     H6 count_fast(1)
  P7  queens_solutions(5)       0.4     H7 count_fast(7)
  P8  queens_solutions(6)       0.5     H8 count_fast(11)        (1 s case limit)
  P9  count_fast(4)             0.3
  P10 count_fast(6)             0.3
  P11 count_fast(9)             1.0  right AND >= 10 x faster than brute_force_count(9)

  Hidden twins (a public check on another input; cases.toml's requires): H9 square_bits(7, 3, 5)
  for P1-P5 (rowuses is only as right as square_bits), H5 for P6-P8, H3 and H4, H7 for P9-P11.

A generator is graded as the list of what it yields, read once it is done.
The speed case's baseline is timed in a clean worker that ran the reference
notebook, never in the student's own.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examplekit import Kit  # noqa: E402

KIT = Kit("bitwise-queens")
REF = KIT.reference
edit = KIT.edit
# A cell of imports that fails: a module from her own computer.
BAD_IMPORTS = "import bitstring  # installed on her laptop only\nimport itertools\nimport time"
CORRECT = KIT.correct("square-bits", "queens-solutions", "count-fast")

# yields the one list it keeps changing, as CPython's simple_conjoin does
SHARED_LIST = edit("queens-solutions", "yield list(row2col)  # a copy: row2col keeps changing after this",
                   "yield row2col")
# the typo of the text she learnt from: `i << ...` where `1 << ...` was meant
I_SHIFT = edit("square-bits", "nw_se = 1 << (n + (i - j) + (n - 1))", "nw_se = i << (n + (i - j) + (n - 1))")
# NE-SW bits one place too high: n + 2n + (i + j) instead of n + (2n - 1) + (i + j)
NE_SW_OFF_BY_ONE = edit("square-bits", "ne_sw = 1 << (n + (2 * n - 1) + (i + j))", "ne_sw = 1 << (n + 2 * n + (i + j))")

COUNT_BY_BRUTE_FORCE = '''
def count_fast(n):
    \'\'\'The number of solutions for an n x n board, by backtracking on bitmasks.\'\'\'
    ### BEGIN YOUR CODE
    return brute_force_count(n)   # it is right, isn't it?
    ### END YOUR CODE
'''

COUNT_BY_GENERATOR = '''
def count_fast(n):
    \'\'\'The number of solutions for an n x n board, by backtracking on bitmasks.\'\'\'
    ### BEGIN YOUR CODE
    return sum(1 for _ in queens_solutions(n))
    ### END YOUR CODE
'''

COUNT_FORGETS_DIAGONALS = edit("count-fast",
                               "total += count(cols | bit, ((d1 | bit) << 1) & full, (d2 | bit) >> 1)",
                               "total += count(cols | bit, (d1 << 1) & full, d2 >> 1)")

COUNT_DEAD_END_FIRST = edit("count-fast", '''        if cols == full:
            return 1
        total = 0
        avail = ~(cols | d1 | d2) & full
''', '''        total = 0
        avail = ~(cols | d1 | d2) & full
        if avail == 0:
            return 0          # no free square: a dead end
        if cols == full:
            return 1
''')

SOLUTIONS_AS_TUPLES = '''
def queens_solutions(n):
    \'\'\'Yield every solution for an n x n board as a new list row2col, in increasing order.\'\'\'
    ### BEGIN YOUR CODE
    uses = [rowuses(n, i) for i in range(n)]
    found = []

    def place(i, used, so_far):
        if i == n:
            found.append(so_far)
            return
        for j in range(n):
            if uses[i][j] & used == 0:
                place(i + 1, used | uses[i][j], so_far + (j,))

    place(0, 0, ())
    return found          # a list of tuples, not a generator of lists
    ### END YOUR CODE
'''

CHATTY = {
    "square-bits": edit("square-bits", "    return column | nw_se | ne_sw",
                        "    print(f'square ({i}, {j}) of {n}: {column | nw_se | ne_sw:b}')\n"
                        "    return column | nw_se | ne_sw"),
    "queens-solutions": edit("queens-solutions", "        if i == n:\n",
                             "        print('row', i, 'so far', row2col[:i])\n        if i == n:\n"),
    "count-fast": edit("count-fast", "    full = (1 << n) - 1  # n ones: every column\n",
                       "    full = (1 << n) - 1  # n ones: every column\n"
                       "    import sys; print('counting', n, file=sys.stderr)\n"),
}

# student -> (cell replacements, extra edit); the comment works out the score.
STUDENTS = {
    # everything right: 5
    "alice": (CORRECT, None),
    # yields row2col itself: every item of a finished queens_solutions(n) is the same
    # list, so any answer with two or more (different) solutions is wrong: P6, P7, P8
    # and H5 fail (-1.5).  H3 ([[0]], one item) and H4 ([], none) pass, but they are what
    # a function that solves no real board can give: they require queens_solutions(4),
    # which fails, and are withheld (-0.2).  3.3
    "bob": ({**CORRECT, "queens-solutions": SHARED_LIST}, None),
    # `i << ...` for the NW-SE bit: row 0 gets no NW-SE bit at all, row 2 sets the bit
    # one place too high, row 3 sets two bits.  Every square_bits and rowuses value
    # with i != 1 is wrong, which is all of them: P1-P5 and H1, H2, H9 fail (-1.4).
    # queens_solutions then misses down-right attacks from row 0 and sees false ones
    # elsewhere; on 3 x 3 it lets the main diagonal [0, 1, 2] through (row 1's bit for
    # (1, 1) is NW-SE number 2, row 2's for (2, 2) number 3), so H4 fails, and so do
    # P6, P7, P8 and H5 (-1.6).  Only H3 (one square, no diagonal) passes.  count_fast
    # does not use the encoding: P9-P11, H6-H8 pass.  H3 requires queens_solutions(4),
    # which fails, so it is withheld (-0.1).  5 - 1.4 - 1.6 - 0.1 = 1.9
    "carol": ({**CORRECT, "square-bits": I_SHIFT}, None),
    # count_fast just calls brute_force_count: the right answers, but P11 is not
    # faster than its own baseline (-1.0), and H8 (11! = 39,916,800 permutations) runs
    # past the 1 s limit (-0.1).  P9, P10, H6, H7 pass.  3.9
    "dave": ({**CORRECT, "count-fast": COUNT_BY_BRUTE_FORCE}, None),
    # counts what queens_solutions yields: real backtracking, about 50 times faster
    # than brute force for n = 9 (the bar is 10).  5
    "erin": ({**CORRECT, "count-fast": COUNT_BY_GENERATOR}, None),
    # never adds the new queen to d1 and d2, so no diagonal is ever blocked and she
    # counts permutations, n!: P9 (24), P10 (720), P11 (362880) and H7 (5040) fail,
    # H8 is wrong or too slow (-0.3 - 0.3 - 1.0 - 0.1 - 0.1).  H6 (1! = 1) passes.  3.2
    "frank": ({**CORRECT, "count-fast": COUNT_FORGETS_DIAGONALS}, None),
    # right, but prints every square and every step of the search (and to stderr): 5
    "grace": (CHATTY, None),
    # her imports cell stops at a module she does not have, so itertools is never
    # imported and brute force fails in her notebook.  Nothing she wrote uses it, and
    # the speed case's baseline runs in the grader's own worker: 5
    "heidi": (CORRECT, {"imports": BAD_IMPORTS}),
    # the untouched student notebook: 0
    "judy": ({}, None),
    # NE-SW bits one place higher than specified.  Every square_bits and rowuses value
    # is off: P1-P5, H1, H2, H9 fail (-1.4).  The encoding is still one bit per column and
    # per diagonal, with no overlaps, so queens_solutions is right.  3.6
    "mallory": ({**CORRECT, "square-bits": NE_SW_OFF_BY_ONE}, None),
    # queens_solutions returns a list of tuples instead of yielding lists: the values
    # are the same to the grader (a tuple counts as a list).  5
    "niaj": ({**CORRECT, "queens-solutions": SOLUTIONS_AS_TUPLES}, None),
    # checks for a dead end before checking for a full board; a full board has no free
    # square either, so every count is 0: P9, P10, P11, H6, H7, H8 fail (-1.9).  3.1
    "olivia": ({**CORRECT, "count-fast": COUNT_DEAD_END_FIRST}, None),
}


def main():
    KIT.write_all(STUDENTS)
    print(KIT.listing())


if __name__ == "__main__":
    main()
