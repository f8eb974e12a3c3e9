"""Replace every `### BEGIN SOLUTION` ... `### END SOLUTION` region with a stub.

The stub raises NotImplementedError, so an untouched function earns nothing
(a stub returning False would pass any case whose answer is False).
"""

import re

from ...core.errors import BuildError

BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")


def stub_source(source, where=""):
    out, indent, inside = [], None, False
    for number, line in enumerate(source.splitlines(), 1):
        if (match := BEGIN.match(line)):
            if inside:
                raise BuildError(f"{where}: line {number}: BEGIN SOLUTION inside another solution region")
            inside, indent = True, match.group(1)
            out += [f"{indent}### BEGIN YOUR CODE",
                    f'{indent}raise NotImplementedError("replace this line with your code")',
                    f"{indent}### END YOUR CODE"]
        elif END.match(line):
            if not inside:
                raise BuildError(f"{where}: line {number}: END SOLUTION without BEGIN SOLUTION")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise BuildError(f"{where}: a solution region is never closed (### END SOLUTION missing)")
    return "\n".join(out)


def has_solution(source):
    return any(BEGIN.match(line) for line in source.splitlines())


def stub_solutions(notebook, context):
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and has_solution(cell.source):
            cell.source = stub_source(cell.source, f"{context.assignment.id} cell {index + 1}")
    return notebook
