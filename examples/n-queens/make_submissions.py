"""Write the example class for n-queens: synthetic hand-ins with typical mistakes.

Each student starts from the generated student notebook and fills in its
cells the way a real student might.  Run from the repository root:

    .venv/bin/python examples/n-queens/make_submissions.py

expected_scores.csv beside this file holds the score each one should get,
worked out by hand from the cases (see the comments below), not copied from
the grader's output.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examplekit import Kit  # noqa: E402

KIT = Kit("n-queens")
REF = KIT.reference
edit = KIT.edit
# A cell of imports that fails: a module from her own computer.
BAD_IMPORTS = ("import numpy as np\nimport nqueens_helpers  # a file she forgot to upload\n"
               "from sympy.utilities.iterables import multiset_permutations")
CORRECT = KIT.correct("get-n", "board2str", "is-solved")

IS_SOLVED_R_MINUS_C_ONLY = '''
def is_solved(pos):
    n = get_n(pos)
    rows = [int(r) for r in pos]
    ### BEGIN YOUR CODE
    if sorted(rows) != list(range(n)):
        return False
    ### END YOUR CODE
    ### BEGIN YOUR CODE
    if len({r - c for c, r in enumerate(rows)}) < n:
        return False
    ### END YOUR CODE
    return True
'''

IS_SOLVED_NO_ROW_CHECK = '''
def is_solved(pos):
    n = get_n(pos)
    rows = [int(r) for r in pos]
    ### BEGIN YOUR CODE
    pass  # every column has one queen already, so nothing to check here
    ### END YOUR CODE
    ### BEGIN YOUR CODE
    if len({r - c for c, r in enumerate(rows)}) < n:
        return False
    if len({r + c for c, r in enumerate(rows)}) < n:
        return False
    ### END YOUR CODE
    return True
'''

IS_SOLVED_INTS = '''
def is_solved(pos):
    n = get_n(pos)
    rows = [int(r) for r in pos]
    ### BEGIN YOUR CODE
    if sorted(rows) != list(range(n)):
        return 0
    ### END YOUR CODE
    ### BEGIN YOUR CODE
    if len({r - c for c, r in enumerate(rows)}) < n or len({r + c for c, r in enumerate(rows)}) < n:
        return 0
    ### END YOUR CODE
    return 1
'''

IS_SOLVED_NUMPY = '''
def is_solved(pos):
    n = get_n(pos)
    pos = np.asarray(pos)
    ### BEGIN YOUR CODE
    rows_ok = np.array_equal(np.sort(pos), np.arange(n))
    ### END YOUR CODE
    ### BEGIN YOUR CODE
    diagonals_ok = len(np.unique(np.arange(n) - pos)) == n and len(np.unique(np.arange(n) + pos)) == n
    ### END YOUR CODE
    return rows_ok & diagonals_ok   # a numpy bool, which counts as True / False
'''

IS_SOLVED_LIST_ONLY = '''
def is_solved(pos):
    n = get_n(pos)
    rows = pos + []   # a copy; fine for a list, an error for a tuple or a numpy array
    ### BEGIN YOUR CODE
    if sorted(rows) != list(range(n)):
        return False
    ### END YOUR CODE
    ### BEGIN YOUR CODE
    for c in range(n):
        for d in range(c + 1, n):
            if abs(rows[c] - rows[d]) == d - c:
                return False
    ### END YOUR CODE
    return True
'''

IS_SOLVED_LOOPS_FOREVER = '''
def is_solved(pos):
    n = get_n(pos)
    rows = [int(r) for r in pos]
    ### BEGIN YOUR CODE
    if sorted(rows) != list(range(n)):
        return False
    ### END YOUR CODE
    ### BEGIN YOUR CODE
    c = 0
    while c < n:
        for d in range(c + 1, n):
            if abs(rows[c] - rows[d]) == d - c:
                return False
        # forgot: c += 1, so a real solution never gets out of this loop
    ### END YOUR CODE
    return True
'''

BOARD2STR_TRAILING_NEWLINE = REF["board2str"].replace(
    "return '\\n'.join(board)", "return '\\n'.join(board) + '\\n'")
BOARD2STR_SEED_TYPO = REF["board2str"].replace("board.append(str(r) + row2str(c))",
                                               "board.append(str(r) + row2st(c))")
GET_N_OFF_BY_ONE = REF["get-n"].replace("return len(pos)", "return len(pos) - 1")
CHATTY = {key: source.replace("    n = get_n(pos)\n", "    n = get_n(pos)\n    print('checking', pos)\n"
                              "    import sys; print('debug: n =', n, file=sys.stderr)\n")
          for key, source in CORRECT.items()}

# student -> (cell replacements, extra edits); comments give the expected score.
STUDENTS = {
    # everything right: 5
    "alice": (CORRECT, None),
    # get_n one short: every case breaks except the two False ones and
    # count_solutions(2), (3) whose answer is 0 anyway, and those are what a constant answer
    # gives: they require is_solved([0, 2, 4, 6, 1, 3, 5]) and count_solutions(4), which
    # fail, so their points are withheld (cases.toml's requires): 0
    "bob": ({**CORRECT, "get-n": GET_N_OFF_BY_ONE}, None),
    # board2str adds a newline at the end: loses 2 x 0.25 public + 2 x 0.1 hidden: 4.3
    "carol": ({**CORRECT, "board2str": BOARD2STR_TRAILING_NEWLINE}, None),
    # checks r - c only: every count but n = 1 is wrong ([1, 0] passes for n = 2),
    # and the anti-diagonal hidden case fails; count_solutions(1) requires
    # count_solutions(2), which fails, so it is withheld too: 5 - 8 x 0.25 - 0.1 = 2.9
    "dave": ({**CORRECT, "is-solved": IS_SOLVED_R_MINUS_C_ONLY}, None),
    # no row check: permutations are still judged right, only the repeated-row hidden case fails: 4.9
    "erin": ({**CORRECT, "is-solved": IS_SOLVED_NO_ROW_CHECK}, None),
    # returns 1 / 0: the is_solved cases fail (2 x 0.75 public; hidden 4 x 0.1, the 1 x 1
    # board's, the 10 x 10 solution's and the diagonal neighbours' 0.05).  The counts are right
    # (count_solutions only asks whether is_solved's answer is true), but they require
    # is_solved's hidden twins, which expect a bool: withheld (-2).  5 - 1.5 - 0.55 - 2 = 0.95
    "frank": ({**CORRECT, "is-solved": IS_SOLVED_INTS}, None),
    # right, but prints to stdout and stderr all the time: 5
    "grace": (CHATTY, None),
    # imports a helper that does not exist, so sympy's multiset_permutations is never
    # imported: get_solutions fails, so count_solutions(1..8) earn nothing: 5 - 2 = 3
    "heidi": (CORRECT, {"imports": BAD_IMPORTS}),
    # is_solved never returns once no adjacent pair is on a diagonal: the True cases
    # and every count but n = 2 time out.  What it gets right, range(15), count_solutions(2)
    # and the two False hidden cases, a constant False gets too: they require
    # is_solved([0, 2, 4, 6, 1, 3, 5]) and count_solutions(4), which time out, so they
    # are withheld.  Left: get_n 0.2, board2str 0.5 + 0.2 hidden, the hidden
    # get_n([2, 4, 1, 3, 0]) 0.05: 0.95
    "ivan": ({**CORRECT, "is-solved": IS_SOLVED_LOOPS_FOREVER}, None),
    # the untouched student notebook: 0
    "judy": ({}, None),
    # the original notebook's row2st typo: both board2str public and both hidden cases fail: 4.3
    "mallory": ({**CORRECT, "board2str": BOARD2STR_SEED_TYPO}, None),
    # numpy all the way, returns numpy bools: 5
    "niaj": ({**CORRECT, "is-solved": IS_SOLVED_NUMPY}, None),
    # works for lists only: the tuple and numpy array hidden cases fail: 4.8
    "olivia": ({**CORRECT, "is-solved": IS_SOLVED_LIST_ONLY}, None),
    # a demo cell of her own that loops forever at top level, functions right: 5
    "peggy": (CORRECT, {"append": "# watch the solver forever\nwhile True:\n    pass"}),
}


def main():
    KIT.write_all(STUDENTS)
    # Broken hand-ins: not JSON, and empty.
    (KIT.out / "trent.ipynb").write_text('{"cells": [ this is not json', encoding="utf-8")
    (KIT.out / "victor.ipynb").write_text("", encoding="utf-8")
    # A plain script hand-in with "# %%" cells.
    script = "# %%\nimport numpy as np\nfrom sympy.utilities.iterables import multiset_permutations\n"
    for key in ("get-n", "board2str", "is-solved"):
        script += "\n# %%\n" + CORRECT[key].strip("\n") + "\n"
    script += "\n# %%\n" + REF["get-solutions"] + "\n\n# %%\n" + REF["count-solutions"] + "\n"
    (KIT.out / "walter.py").write_text(script, encoding="utf-8")
    print(KIT.listing())


if __name__ == "__main__":
    main()
