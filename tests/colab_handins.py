"""Hand-ins as Colab saves them (File → Download → Download .ipynb), for the issue-41 tests.

Colab's serializer (tests/intake/real_notebooks/PROVENANCE.md, colab.ipynb): nbformat 4.0, top-level keys in the
order nbformat, nbformat_minor, metadata, cells; `metadata.colab.provenance`; a Colab `id` in each cell's metadata
and no nbformat cell id; sources as line lists; two-space indent; `<` and `>` escaped as \\u003c and \\u003e.
Each hand-in is the example class's correct notebook (examples/<id>/submissions/alice.ipynb) with some cells'
code replaced, as a student who wrote them differently would hand it in.
"""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What students of the four assignments write that Colab runs and a grader must run too (issue 41).
POOL = ("count-solutions", '''import itertools
import multiprocessing


def count_solutions(n):
    \'\'\'The number of solutions for an n x n board, counted by a pool of processes.\'\'\'
    boards = (list(p) for p in itertools.permutations(range(n)))
    with multiprocessing.Pool() as pool:
        return sum(pool.imap_unordered(is_solved, boards, chunksize=512))''')
SCIPY = ("num-placements-all", '''from scipy.special import comb


def num_placements_all(n):
    \'\'\'The number of ways to put n identical queens on the n*n squares, no rules at all.\'\'\'
    ### BEGIN YOUR CODE
    return comb(n * n, n, exact=True)
    ### END YOUR CODE''')
NUMBA = ("count-fast", '''from numba import njit


@njit
def _count(full, cols, d1, d2):
    if cols == full:
        return 1
    total = 0
    avail = ~(cols | d1 | d2) & full
    while avail:
        bit = avail & -avail
        avail ^= bit
        total += _count(full, cols | bit, ((d1 | bit) << 1) & full, (d2 | bit) >> 1)
    return total


def count_fast(n):
    \'\'\'The number of solutions for an n x n board, by backtracking on bitmasks (compiled by numba).\'\'\'
    return _count((1 << n) - 1, 0, 0, 0)''')
# assignment -> (the cell it replaces, its code)
COLAB_ONLY = {"n-queens": POOL, "uninformed-search": SCIPY, "bitwise-queens": NUMBA}


def colab_notebook(assignment_id, replaced=None, added=()):
    """The text of alice's notebook for `assignment_id` as Colab writes it, with `replaced` ({cell id: code})
    and the cells `added` (code) appended."""
    source = json.loads((ROOT / "examples" / assignment_id / "submissions" / "alice.ipynb").read_text())
    cells = []
    for number, cell in enumerate(source["cells"] + [{"cell_type": "code", "source": code} for code in added]):
        text = (replaced or {}).get(cell.get("id"), "".join(cell["source"]))
        colab = {"cell_type": cell["cell_type"], "source": text.splitlines(keepends=True),
                 "metadata": {"id": f"c{number:04d}xYz"}}
        if cell["cell_type"] == "code":
            colab.update(execution_count=None, outputs=[])
        cells.append(colab)
    notebook = {"nbformat": 4, "nbformat_minor": 0,
                "metadata": {"colab": {"provenance": []}, "kernelspec": {"name": "python3", "display_name": "Python 3"},
                             "language_info": {"name": "python"}},
                "cells": cells}
    return json.dumps(notebook, indent=2, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e") + "\n"


def write_colab_only(assignment_id, folder, name="colab-only.ipynb"):
    """The hand-in of `assignment_id` that needs what only Colab had (a Pool, scipy, numba), in `folder`."""
    cell, code = COLAB_ONLY[assignment_id]
    path = Path(folder) / name
    path.write_text(colab_notebook(assignment_id, {cell: code}), encoding="utf-8")
    return path
