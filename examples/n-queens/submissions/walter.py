# %%
import numpy as np
from sympy.utilities.iterables import multiset_permutations

# %%
def get_n(pos):
    '''The size n of the n x n board described by pos.'''
    ### BEGIN YOUR CODE
    return len(pos)
    ### END YOUR CODE

# %%
def board2str(pos):
    '''The board for pos as a string of n + 1 lines (see the example above).'''
    n = get_n(pos)

    def top_row(n):
        # the column labels, e.g. top_row(3) == '-|0|1|2|'
        ### BEGIN YOUR CODE
        return '-|' + ''.join(f'{c}|' for c in range(n))
        ### END YOUR CODE

    def row2str(c):
        # the squares of a row whose queen is in column c, e.g. for n = 8,
        # row2str(0) == '|*|-|-|-|-|-|-|-|'
        ### BEGIN YOUR CODE
        return '|' + ''.join('*|' if column == c else '-|' for column in range(n))
        ### END YOUR CODE

    board = [top_row(n)]
    for r in range(n):
        # c = the column whose queen is in row r
        ### BEGIN YOUR CODE
        c = [int(row) for row in pos].index(r)
        ### END YOUR CODE
        board.append(str(r) + row2str(c))
    return '\n'.join(board)

# %%
def is_solved(pos):
    '''True if pos places n queens on the n x n board with none attacking another.'''
    n = get_n(pos)
    rows = [int(r) for r in pos]

    # rows: every row 0 .. n-1 holds exactly one queen
    ### BEGIN YOUR CODE
    if sorted(rows) != list(range(n)):
        return False
    ### END YOUR CODE

    # diagonals: r - c and r + c never repeat
    ### BEGIN YOUR CODE
    if len({r - c for c, r in enumerate(rows)}) < n:
        return False
    if len({r + c for c, r in enumerate(rows)}) < n:
        return False
    ### END YOUR CODE

    return True

# %%
def get_solutions(n):
    '''Every solution for an n x n board, found by trying all n! permutations.'''
    return [list(p) for p in multiset_permutations(list(range(n))) if is_solved(p)]

# %%
def count_solutions(n):
    '''The number of solutions for an n x n board.'''
    return len(get_solutions(n))
