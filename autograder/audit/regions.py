"""The reference notebook as the audit sees it: the cells a hand-in runs, and its solution regions.

A solution region is the code between `### BEGIN SOLUTION` and `### END
SOLUTION` (the markers of preprocessors/stub_solutions.py).  Each region
belongs to the function that holds it; the audit mutates regions and stubs
them out function by function, always inside an otherwise untouched
reference, so every change it measures is one a student could have made.
"""

import ast
from dataclasses import dataclass

from ..notebook.preprocessors.stub_solutions import BEGIN, END
from ..notebook.student_notebook import executable_reference, read_reference


@dataclass(frozen=True)
class Region:
    cell: int          # index into Reference.sources
    first: int         # first line of code (1-based, in the cell), after the BEGIN marker
    last: int          # last line of code, before the END marker
    indent: str        # the marker's indentation: a stub line goes there
    function: str      # qualified name of the innermost enclosing def ("board2str.top_row"), "" at top level
    def_line: int      # line of that def (0 at top level): mutant ids count lines from here

    @property
    def top_function(self):
        """The function a case calls that this region is part of ("board2str" for "board2str.top_row")."""
        return self.function.split(".")[0]


@dataclass(frozen=True)
class Reference:
    sources: tuple     # code cells exactly as a hand-in's would run (skip tags applied)
    regions: tuple

    def with_cell(self, index, source):
        return self.sources[:index] + (source,) + self.sources[index + 1:]


def load_reference(assignment):
    notebook = executable_reference(read_reference(assignment), assignment)
    sources = tuple(c.source for c in notebook.cells
                    if c.cell_type == "code" and not set(c.metadata.get("tags", [])) & set(assignment.skip_tags))
    regions = tuple(region for index, source in enumerate(sources) for region in find_regions(index, source))
    return Reference(sources, regions)


def find_regions(index, source):
    lines = source.splitlines()
    tree = ast.parse(source)
    regions, start, indent = [], None, ""
    for number, line in enumerate(lines, 1):
        if (match := BEGIN.match(line)):
            start, indent = number + 1, match.group(1)
        elif END.match(line) and start is not None:
            function, def_line = enclosing_function(tree, start)
            regions.append(Region(index, start, number - 1, indent, function, def_line))
            start = None
    return regions


def enclosing_function(tree, line):
    """(qualified name, def line) of the innermost def whose body holds `line`; ("", 0) at top level."""
    best = ("", 0)

    def visit(node, prefix):
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}.{child.name}" if prefix else child.name
                if child.lineno <= line <= child.end_lineno:
                    best = (name, child.lineno)
                    visit(child, name)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}.{child.name}" if prefix else child.name)
            else:
                visit(child, prefix)

    visit(tree, "")
    return best


def replace_regions(reference, function, statement):
    """The reference's sources with every region of top-level `function` replaced by one `statement`
    (`function` may be a collection of names: every region of each)."""
    functions = {function} if isinstance(function, str) else set(function)
    sources = list(reference.sources)
    # From the bottom of each cell up, so the line numbers of the regions still to replace hold.
    for region in sorted((r for r in reference.regions if r.top_function in functions),
                         key=lambda r: (r.cell, -r.first)):
        lines = sources[region.cell].split("\n")
        lines[region.first - 1:region.last] = [region.indent + statement]
        sources[region.cell] = "\n".join(lines)
    return tuple(sources)
