"""Write the example class for uninformed-search: synthetic hand-ins with typical mistakes.

Each student starts from the generated student notebook and fills in its
cells the way a real student might.  Run from the repository root:

    .venv/bin/python examples/uninformed-search/make_submissions.py

expected_scores.csv beside this file holds the score each one should get,
worked out by hand from the cases (see the comments below), not copied from
the grader's output.

The cases (autograder/assignments/uninformed-search/cases.toml), for reference:

  public (4.2)                                  hidden (0.8; H13, H14 0.025, the rest 0.05)
  P1  num_placements_all(8)              0.25   H1 num_placements_one_per_row(0)
  P2  num_placements_one_per_row(8)      0.25   H2 diag_okay(1, 1, 3, 3)
  P3  diag_okay(3, 0, 1, 2)   -> False   0.2    H3 n_queens_valid([])
  P4  diag_okay(0, 0, 2, 1)   -> True    0.2    H4 n_queens_valid([2, 0, 3, 0])
  P5  cross_okay(1, 3, 4, 3)  -> False   0.2    H5 n_queens_helper([], 5)
  P6  cross_okay(2, 1, 2, 5)  -> False   0.2    H6 n_queens_helper([1, 3, 0, 2], 4)
  P7  cross_okay(0, 0, 1, 2)  -> True    0.2    H7 n_queens_solutions(1)
  P8  move_allowed(1, 4, 2, 5) -> False  0.2    H8 n_queens_solutions(7)  (stack order)
  P9  move_allowed(1, 3, 2, 7) -> True   0.2    H9 num_placements_one_per_row(3)
                                                H10 num_placements_all(4)
  P10-P13 n_queens_valid on [0, 0], [0, 2], [0, 1], [0, 3, 1]   0.15 each
  P14 n_queens_helper([1, 3, 5, 0], 7)   0.3
  P15 n_queens_helper([3, 0, 4], 7)      0.3
  P16 n_queens_solutions(5)  (stack order)   0.35
  P17 n_queens_solutions(6)  (stack order)   0.35
  P18 n_queens_solutions(8)  (any order)     0.4

  Hidden twins (a public check on another input; cases.toml's requires):
  H11 diag_okay(1, 4, 3, 3) -> True, H12 diag_okay(4, 1, 2, 3) -> False: every diag_okay case and
      P8, P9 require both; H13 cross_okay(3, 1, 0, 4) -> True, H14 cross_okay(0, 2, 5, 2) -> False:
      every cross_okay case and P8, P9; H15 n_queens_valid([1, 3, 0]) -> True, H16
      n_queens_valid([2, 0, 1]) -> False: every n_queens_valid case; H5 for n_queens_helper's;
      H8 for P16 and P17; H17 n_queens_solutions(7) (any order) for P18; H9 for P2; H10 for P1.

Two facts used below: for n = 6 the stack order happens to be increasing
(lexicographic) order, so a search that finds solutions in increasing order
passes P17 but not P16 or H8; and the 1 x 1 board has one solution, [[0]],
whatever the order.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examplekit import Kit  # noqa: E402

KIT = Kit("uninformed-search")
REF = KIT.reference
edit = KIT.edit
# A cell of imports that fails: a module from her own computer.
BAD_IMPORTS = "import search_utils  # a file from her own computer\nfrom math import comb"
WRITTEN = ("num-placements-all", "num-placements-one-per-row", "diag-okay", "cross-okay",
           "move-allowed", "n-queens-valid", "n-queens-helper", "n-queens-solutions")
CORRECT = KIT.correct(*WRITTEN)

CROSS_OKAY_COLUMNS_ONLY = '''
def cross_okay(row1, col1, row2, col2):
    \'\'\'True if the squares (row1, col1) and (row2, col2) share neither a row nor a column.\'\'\'
    ### BEGIN YOUR CODE
    return col1 != col2
    ### END YOUR CODE
'''

DIAG_OKAY_NO_ABS = '''
def diag_okay(row1, col1, row2, col2):
    \'\'\'True if the squares (row1, col1) and (row2, col2) are not on a common diagonal.\'\'\'
    ### BEGIN YOUR CODE
    return row1 - row2 != col1 - col2
    ### END YOUR CODE
'''

VALID_NEIGHBOURS_ONLY = '''
def n_queens_valid(board):
    \'\'\'True if no two queens of the (possibly partial) board attack each other.\'\'\'
    ### BEGIN YOUR CODE
    for i in range(len(board) - 1):
        if not move_allowed(i, board[i], i + 1, board[i + 1]):
            return False
    return True
    ### END YOUR CODE
'''

# The original notebook's helper: it recurses until the board is full.
HELPER_RECURSIVE = '''
def n_queens_helper(board, n):
    \'\'\'Every valid board one queen longer than board, in increasing column order.\'\'\'
    ### BEGIN YOUR CODE
    if len(board) == n:
        return [board]
    placement_row = len(board)
    valid_placements = []
    for placement_col in range(n):
        if all(move_allowed(placement_row, placement_col, row, col) for row, col in enumerate(board)):
            valid_placements.extend(n_queens_helper(board + [placement_col], n))
    return valid_placements
    ### END YOUR CODE
'''

# ... and its search, which just asks that helper for everything.
SOLUTIONS_FROM_HELPER = '''
def n_queens_solutions(n):
    \'\'\'Every solution for an n x n board, in the order of the stack-based search above.\'\'\'
    ### BEGIN YOUR CODE
    return n_queens_helper([], n)
    ### END YOUR CODE
'''

SOLUTIONS_FROM_EMPTY_BOARD = '''
def n_queens_solutions(n):
    \'\'\'Every solution for an n x n board, in the order of the stack-based search above.\'\'\'
    ### BEGIN YOUR CODE
    stack = [[]]   # start from the empty board: then the first queens come out largest first
    solutions = []
    while stack:
        board = stack.pop()
        if len(board) == n:
            solutions.append(board)
        else:
            stack.extend(n_queens_helper(board, n))
    return solutions
    ### END YOUR CODE
'''

SOLUTIONS_BREADTH_FIRST = '''
def n_queens_solutions(n):
    \'\'\'Every solution for an n x n board, in the order of the stack-based search above.\'\'\'
    ### BEGIN YOUR CODE
    from collections import deque
    queue = deque([[]])          # a queue: breadth-first, so solutions come out in increasing order
    solutions = []
    while queue:
        board = queue.popleft()
        if len(board) == n:
            solutions.append(board)
        else:
            queue.extend(n_queens_helper(board, n))
    return solutions
    ### END YOUR CODE
'''

SOLUTIONS_EVERY_PLACEMENT = '''
def n_queens_solutions(n):
    \'\'\'Every solution for an n x n board, in the order of the stack-based search above.\'\'\'
    ### BEGIN YOUR CODE
    import itertools
    # all n ** n placements with one queen per row, keep the valid ones
    return [list(board) for board in itertools.product(range(n), repeat=n) if n_queens_valid(board)]
    ### END YOUR CODE
'''

COUNTS_ORDERED = '''
def num_placements_all(n):
    \'\'\'The number of ways to put n identical queens on the n*n squares, no rules at all.\'\'\'
    ### BEGIN YOUR CODE
    return math.perm(n * n, n)   # first queen n*n choices, second n*n - 1, ...
    ### END YOUR CODE
'''

COUNTS_PERMUTATIONS = '''
def num_placements_one_per_row(n):
    \'\'\'The number of ways to put n queens on an n x n board with exactly one queen per row.\'\'\'
    ### BEGIN YOUR CODE
    return math.factorial(n)     # one per row and one per column, in fact
    ### END YOUR CODE
'''

COMB_IMPORTED = REF["num-placements-all"].replace("return math.comb(n * n, n)", "return comb(n * n, n)")

CHATTY = {
    **CORRECT,
    "n-queens-helper": REF["n-queens-helper"].replace(
        "    row = len(board)\n",
        "    row = len(board)\n    print('extending', board, 'on a board of size', n)\n"),
    "n-queens-solutions": REF["n-queens-solutions"].replace(
        "        board = stack.pop()\n",
        "        board = stack.pop()\n        print('stack:', stack, 'popped:', board)\n"
        "        import sys; print('depth', len(board), file=sys.stderr)\n"),
}

# student -> (cell replacements, extra edit); the comment works out the score.
STUDENTS = {
    # everything right: 5
    "alice": (CORRECT, None),
    # cross_okay compares the columns only, as the original notebook did.  Only P6
    # (same row, different columns) notices: every other call of cross_okay, through
    # move_allowed, has two different rows.  5 - 0.2 = 4.8
    "bob": ({**CORRECT, "cross-okay": CROSS_OKAY_COLUMNS_ONLY}, None),
    # copies the original notebook wholesale: cross_okay on columns only (P6, -0.2);
    # the helper recurses to full solutions, so P14, P15 (-0.6), H5 (it returns the
    # ten 5 x 5 solutions, not [[0], [1], [2], [3], [4]]) and H6 (a full board comes back
    # as [[1, 3, 0, 2]], not []) fail (-0.1); n_queens_solutions returns the helper's
    # solutions in increasing order: P16 and H8 fail (-0.4); P18 and H7 pass.  P17 (n = 6)
    # is right by luck (its four solutions come out of the stack in increasing order), but
    # it requires H8, its twin for n = 7: withheld (-0.35).
    # 5 - 0.2 - 0.6 - 0.1 - 0.4 - 0.35 = 3.35
    "carol": ({**CORRECT, "cross-okay": CROSS_OKAY_COLUMNS_ONLY, "n-queens-helper": HELPER_RECURSIVE,
               "n-queens-solutions": SOLUTIONS_FROM_HELPER}, None),
    # a stack that starts from the empty board: the right solutions in decreasing order.
    # P16, P17 and H8 fail on the order (-0.75); the any-order P18 and H17, and H7 ([[0]]),
    # pass.  4.25
    "dave": ({**CORRECT, "n-queens-solutions": SOLUTIONS_FROM_EMPTY_BOARD}, None),
    # diag_okay without abs(): only down-right diagonals (row and column differences
    # equal, same sign) are caught.  P3 (an up-right pair, 2 vs -2) fails (-0.2); P4,
    # P8 (a down-right pair), H2 and the small n_queens_valid boards pass (their only
    # diagonal pair, [0, 1], is down-right).  Both public helper cases pass too: the
    # squares on an up-right diagonal of an old queen are columns already taken
    # ([1, 3, 5, 0], row 4: columns 0 and 3; [3, 0, 4], row 3: columns 0 and 3).  The search
    # keeps boards with up-right attacks, so it finds too many solutions: P16, P17,
    # P18, H8 and H17 fail (-1.2); H7 passes.  Her diag_okay rejects no
    # public pair, so its yes is what a constant True says: P4, H2 and H11 require P3 and
    # are withheld (-0.3); H12, up-right as P3 is, fails (-0.05).  move_allowed is made of
    # diag_okay: P8 and P9 require H12, withheld (-0.4).
    # 5 - 0.2 - 1.2 - 0.3 - 0.05 - 0.4 = 2.85
    "erin": ({**CORRECT, "diag-okay": DIAG_OKAY_NO_ABS}, None),
    # n_queens_valid compares neighbouring rows only: every public board has at most
    # three queens with no conflict between rows 0 and 2, so only H4 (rows 1 and 3
    # share column 0) fails (-0.05; H16's clash is between neighbours).  The helper uses
    # move_allowed directly.  4.95
    "frank": ({**CORRECT, "n-queens-valid": VALID_NEIGHBOURS_ONLY}, None),
    # right, but prints the stack at every step and writes to stderr: 5
    "grace": (CHATTY, None),
    # her imports cell fails on a module she does not have, before `from math import
    # comb` runs, and her num_placements_all calls comb(...): NameError, P1 fails
    # (-0.25), and so does H10 (-0.05).  (`math` itself would still be there: the check
    # helpers' cell imports it.)  num_placements_one_per_row uses ** and needs no import.  4.7
    "heidi": ({**CORRECT, "num-placements-all": COMB_IMPORTED}, {"imports": BAD_IMPORTS}),
    # tries all n ** n one-per-row placements and keeps the valid ones, so the solutions
    # come out in increasing order: P16 fails (-0.35), H7 passes, P17 (n = 6, 46656 boards)
    # is right but requires H8 (-0.35); n = 7 and 8 mean 0.8 and 16.7 million boards, past
    # the case limits: H8, H17 (-0.1) and P18 (-0.4) fail.  5 - 0.35 - 0.35 - 0.1 - 0.4 = 3.8
    "ivan": ({**CORRECT, "n-queens-solutions": SOLUTIONS_EVERY_PLACEMENT}, None),
    # the untouched student notebook: 0
    "judy": ({}, None),
    # counts ordered placements (math.perm: 64 * 63 * ... * 57) and n! instead of
    # n ** n: P1 and P2 fail (-0.5); H1 passes, since 0! == 1, but H9 (3! = 6, not 27)
    # and H10 (16 * 15 * 14 * 13, not C(16, 4)) fail (-0.1).  4.4
    "niaj": ({**CORRECT, "num-placements-all": COUNTS_ORDERED,
              "num-placements-one-per-row": COUNTS_PERMUTATIONS}, None),
    # breadth-first with a queue: the right solutions, in increasing order.  As for
    # carol's order: P16 and H8 fail (-0.4), P17 is withheld (-0.35), P18 and H7 pass.  4.25
    "olivia": ({**CORRECT, "n-queens-solutions": SOLUTIONS_BREADTH_FIRST}, None),
}


def main():
    KIT.write_all(STUDENTS)
    print(KIT.listing())


if __name__ == "__main__":
    main()
