"""N-queens solvers and the ``nqueens`` command.

A solution is a list ``pos`` where ``pos[c]`` is the row (0-based, row 0 at
the top of the printed board) of the queen in column ``c``.
"""

__version__ = "0.1.0"
