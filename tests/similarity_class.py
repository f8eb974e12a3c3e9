"""A class of independent n-queens hand-ins, as real students converge, with three planted copies.

Every honest student fills each of the six stubs of the student notebook
(get_n; top_row, row2str and the column of row r in board2str; the row and
the diagonal checks of is_solved) with one of several plausible variants,
the common ones more often, under names of their own, with or without a
comment, and half of them add a cell of their own that tries a board.  Each
scores 5 / 5.  Then three more hand-ins are planted:

* RENAMED copies another student's notebook with every variable renamed and
  the comments rewritten;
* REORDERED copies another's with its code cells in another order;
* ONE_FUNCTION writes its own code but copies another's is_solved.

    python tests/similarity_class.py OUT_FOLDER [COUNT]      # writes COUNT + 3 notebooks
"""

import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
STUB = 'raise NotImplementedError("replace this line with your code")'

# Each stub's variants, most popular first (WEIGHTS): what students of this course write.
GET_N = [
    "return len(pos)",
    "n = len(pos)\nreturn n",
    "return len(list(pos))",
    "counter = 0\nfor _ in pos:\n    counter += 1\nreturn counter",
    "return int(np.size(pos))",
]
TOP_ROW = [
    "return '-|' + ''.join(f'{col}|' for col in range(n))",
    "line = '-|'\nfor col in range(n):\n    line += str(col) + '|'\nreturn line",
    "return '-|' + '|'.join(str(col) for col in range(n)) + '|'",
    "labels = [str(col) for col in range(n)]\nreturn '-|' + '|'.join(labels) + '|'",
    "return '-|' + ''.join(map(lambda col: str(col) + '|', range(n)))",
]
ROW2STR = [
    "return '|' + ''.join('*|' if col == c else '-|' for col in range(n))",
    "line = '|'\nfor col in range(n):\n    if col == c:\n        line += '*|'\n    else:\n        line += '-|'\nreturn line",
    "squares = ['-'] * n\nsquares[c] = '*'\nreturn '|' + '|'.join(squares) + '|'",
    "return '|' + '-|' * c + '*|' + '-|' * (n - c - 1)",
    "line = ''\nfor col in range(n):\n    line += ('*' if col == c else '-') + '|'\nreturn '|' + line",
]
COLUMN = [
    "c = list(pos).index(r)",
    "c = [int(row) for row in pos].index(r)",
    "for c in range(n):\n    if pos[c] == r:\n        break",
    "c = next(col for col in range(n) if pos[col] == r)",
    "c = [col for col, row in enumerate(pos) if row == r][0]",
]
ROWS = [
    "if sorted(rows) != list(range(n)):\n    return False",
    "if set(rows) != set(range(n)):\n    return False",
    "if len(set(rows)) != n or min(rows) < 0 or max(rows) >= n:\n    return False",
    "for row in range(n):\n    if rows.count(row) != 1:\n        return False",
    "seen = set()\nfor row in rows:\n    if row in seen or not 0 <= row < n:\n        return False\n    seen.add(row)",
]
DIAGONALS = [
    "if len({row - col for col, row in enumerate(rows)}) < n or len({row + col for col, row in enumerate(rows)}) < n:\n"
    "    return False",
    "for a in range(n):\n    for b in range(a + 1, n):\n        if abs(rows[a] - rows[b]) == b - a:\n"
    "            return False",
    "cols = np.arange(n)\nif len(np.unique(np.array(rows) - cols)) < n or len(np.unique(np.array(rows) + cols)) < n:\n"
    "    return False",
    "diffs = [row - col for col, row in enumerate(rows)]\nsums = [row + col for col, row in enumerate(rows)]\n"
    "if len(set(diffs)) != n or len(set(sums)) != n:\n    return False",
    "import itertools\nfor (c1, r1), (c2, r2) in itertools.combinations(enumerate(rows), 2):\n"
    "    if abs(r1 - r2) == abs(c1 - c2):\n        return False",
]
# The stubs in the order the notebook holds them, with the cell holding each.
STUBS = (("get-n", GET_N), ("board2str", TOP_ROW), ("board2str", ROW2STR), ("board2str", COLUMN),
         ("is-solved", ROWS), ("is-solved", DIAGONALS))
WEIGHTS = (0.4, 0.25, 0.15, 0.1, 0.1)
# Names students give the same things, and comments they write.
NAMES = {"col": ("col", "j", "column", "k", "cc"), "row": ("row", "i", "rr", "q", "x"),
         "line": ("line", "s", "text", "out", "result"), "counter": ("counter", "total", "m", "size", "length"),
         "squares": ("squares", "cells", "marks", "parts", "row_cells"), "labels": ("labels", "heads", "nums", "ls",
                                                                                   "header"),
         "seen": ("seen", "used", "visited", "found", "have"), "diffs": ("diffs", "d1", "down", "minus", "nwse"),
         "sums": ("sums", "d2", "up", "plus", "nesw"), "cols": ("cols", "xs", "idx", "columns", "c_arr"),
         "a": ("a", "p", "u", "first", "i1"), "b": ("b", "q2", "v", "second", "i2")}
COMMENTS = ("# check the rows", "# my solution", "# TODO: tidy up", "# works for the examples",
            "# loop over the columns", "# see lecture 3", "# simple version")


@dataclass
class Student:
    name: str
    choices: tuple          # the variant index chosen for each stub (STUBS order)
    names: dict             # placeholder -> this student's name for it
    comments: tuple         # a comment per stub, or ""
    extra: str              # a cell of their own, or ""


def honest(rng, name):
    choices = tuple(rng.choices(range(len(variants)), WEIGHTS)[0] for _, variants in STUBS)
    names = {key: rng.choice(pool) for key, pool in NAMES.items()}
    comments = tuple(rng.choice(COMMENTS) if rng.random() < 0.3 else "" for _ in STUBS)
    extra = ""
    if rng.random() < 0.5:
        n = rng.randint(4, 9)
        board = list(range(n))
        rng.shuffle(board)
        extra = rng.choice((f"print(board2str({board}))", f"print(is_solved({board}))",
                            f"print(count_solutions({rng.randint(4, 7)}))\nprint(board2str({board}))"))
    return Student(name, choices, names, comments, extra)


def _renamed(text, names):
    return re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b", lambda m: names[m.group(1)], text)


def _indented(text, indent):
    return "\n".join(indent + line if line else line for line in text.split("\n"))


def cells_of(student):
    """{cell id: source} of the cells the student wrote in."""
    notebook = nbformat.read(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", as_version=4)
    sources = {c.id: c.source for c in notebook.cells if c.cell_type == "code"}
    written = {}
    for (cell_id, variants), choice, comment in zip(STUBS, student.choices, student.comments):
        source = written.get(cell_id, sources[cell_id])
        line = next(line for line in source.split("\n") if line.strip() == STUB)
        indent = line[:len(line) - len(line.lstrip())]
        body = _renamed(variants[choice], student.names)
        if comment:
            body = comment + "\n" + body
        written[cell_id] = source.replace(line, _indented(body, indent), 1)
    return written


def notebook_of(student, order=None):
    """The student notebook with the student's cells; `order` puts their code cells in another order."""
    notebook = nbformat.read(ROOT / "assignments" / "n-queens" / "n-queens.ipynb", as_version=4)
    written = cells_of(student)
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.id in written:
            cell.source = written[cell.id]
    if student.extra:
        extra = nbformat.v4.new_code_cell(student.extra)
        extra.id = "my-tries"
        notebook.cells.insert(len(notebook.cells) - 1, extra)      # after the sanity checks, before the total
    if order:
        slots = [i for i, c in enumerate(notebook.cells) if c.get("id") in order]
        by_id = {c.id: c for c in notebook.cells if c.get("id") in order}
        for slot, cell_id in zip(slots, order):
            notebook.cells[slot] = by_id[cell_id]
    return notebook


@dataclass
class Plant:
    name: str
    source: str             # the student it copies
    how: str


def make_class(folder, count=200, seed=33):
    """Write count honest hand-ins and three planted copies into `folder`; returns (students, plants)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    students = [honest(rng, f"s{number:03d}") for number in range(1, count + 1)]
    for student in students:
        nbformat.write(notebook_of(student), folder / f"{student.name}.ipynb")
    renamed_from, reordered_from, function_from = (students[count * k // 10] for k in (1, 4, 7))
    plants = []
    # A copy of the whole notebook with every variable renamed and the comments rewritten.
    other_names = {key: next(n for n in pool if n != renamed_from.names[key]) for key, pool in NAMES.items()}
    copy = Student(f"s{count + 1:03d}", renamed_from.choices, other_names,
                   tuple("# my own work" if c else "" for c in renamed_from.comments),
                   renamed_from.extra.replace("print(", "print( "))
    nbformat.write(notebook_of(copy), folder / f"{copy.name}.ipynb")
    plants.append(Plant(copy.name, renamed_from.name, "renamed"))
    # A copy with its code cells in another order: is_solved first, then get_n, then board2str.
    copy = Student(f"s{count + 2:03d}", reordered_from.choices, reordered_from.names, reordered_from.comments,
                   reordered_from.extra)
    order = ["is-solved", "get-n", "board2str"]
    nbformat.write(notebook_of(copy, order=order), folder / f"{copy.name}.ipynb")
    plants.append(Plant(copy.name, reordered_from.name, "reordered"))
    # Its own get_n and board2str, another's is_solved (renamed).
    own = honest(rng, f"s{count + 3:03d}")
    own.choices = own.choices[:4] + function_from.choices[4:]
    own.names = {**own.names, **{k: v for k, v in other_names.items() if k in ("row", "col", "seen", "diffs",
                                                                               "sums", "cols", "a", "b")}}
    own.comments = own.comments[:4] + function_from.comments[4:]
    nbformat.write(notebook_of(own), folder / f"{own.name}.ipynb")
    plants.append(Plant(own.name, function_from.name, "one function"))
    return students, plants


def gradebook_of(folder, out, assignment):
    """A gradebook holding every notebook of `folder` with its code, as `grade` would have kept it (made-up
    scores: grading a class of 1,000 takes minutes, and is not what the similarity benchmark and tests judge)."""
    from autograder.gradebook import Gradebook
    from autograder.gradebook.code import code_pieces
    from autograder.grade.handin import SubmissionResult
    from autograder.intake import Handin
    from autograder.intake.cells import read_cells

    out.mkdir(parents=True, exist_ok=True)
    book = Gradebook(out / "gradebook.db")
    run = book.start_run(assignment.id, "benchmark", 1, "none")
    for path in sorted(folder.glob("*.ipynb")):
        handin = Handin(path.stem, path.name, path, None)
        result = SubmissionResult(handin.student, assignment.id, str(path), 5.0, 5.0, "graded",
                                  code=code_pieces(read_cells(path)))
        book.record(run, handin, result, "benchmark")
    book.close()


if __name__ == "__main__":
    made, planted = make_class(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 200)
    print(f"{len(made)} hand-ins and {len(planted)} planted copies: "
          + ", ".join(f"{p.name} ({p.how} of {p.source})" for p in planted))
