"""After the cell that defines each tested function, add its public-check cell; a grand total last."""

import re

import nbformat

from ...core import call_graph
from ...core.errors import BuildError
from ...core.literal import python_literal

TAG = "public-check"


def check_cell_source(function, cases, expected, uses=(), limits=None, required=None):
    """`required`: every case by name, for the checks a case requires (Case.requires): the cell
    judges the public ones as the grader does, so a withheld point is withheld here too, and names
    the hidden ones (a public case's twins) by their descriptions: the grader judges those."""
    lines = [f"# Public checks for {function}(): run this cell after the one above.",
             "run_checks(["]
    for case in cases:
        lines.append("    {")
        lines.append(f"        \"call\": {case.call.text!r},")
        lines.append(f"        \"expected\": {python_literal(expected[case.name], indent=12)},")
        lines.append(f"        \"points\": {case.points!r},")
        if case.compare != "equal":
            lines.append(f"        \"compare\": {case.compare!r},")
        if case.options:
            lines.append(f"        \"options\": {case.options!r},")
        lines.append(f"        \"hint\": {case.hint!r},")
        if (limits or {}).get(case.name):
            lines.append(f"        \"limit\": {limits[case.name]!r},")
        public = [name for name in case.requires if not required[name].hidden]
        if public:
            # A case of this cell is named by its call; another is written out, with its expected value.
            here = {c.name for c in cases}
            entries = [repr(required[name].call.text) if name in here
                       else _required_entry(required[name], expected[name]) for name in public]
            if sum(len(e) for e in entries) < 80 and "\n" not in "".join(entries):
                lines.append(f"        \"requires\": [{', '.join(entries)}],")
            else:
                lines += ["        \"requires\": [", *(f"            {e}," for e in entries), "        ],"]
        hidden = [required[name].description for name in case.requires if required[name].hidden]
        if hidden:
            # A hidden twin is named by its description alone: its input and value never reach the notebook.
            entries = [repr(description) for description in hidden]
            if sum(len(e) for e in entries) < 80:
                lines.append(f"        \"hidden_requires\": [{', '.join(entries)}],")
            else:
                lines += ["        \"hidden_requires\": [", *(f"            {e}," for e in entries), "        ],"]
        lines.append("    },")
    lines.append(f"], uses={list(uses)!r})" if uses else "])")
    return "\n".join(lines)


def _required_entry(case, value):
    """A required check as the cell writes it: its call and expected value (public, like the case)."""
    entry = f"{{\"call\": {case.call.text!r}, \"expected\": {python_literal(value, indent=16)}"
    if case.compare != "equal":
        entry += f", \"compare\": {case.compare!r}"
    if case.options:
        entry += f", \"options\": {case.options!r}"
    return entry + "}"


def defining_cell(notebook, function):
    pattern = re.compile(rf"^\s*def\s+{re.escape(function)}\s*\(", re.MULTILINE)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and pattern.search(cell.source):
            return index
    return None


def public_checks(notebook, context):
    by_function = {}
    for case in context.assignment.public_cases:
        by_function.setdefault(case.function, []).append(case)
    # Insert from the bottom up so earlier indices stay valid.
    placements = []
    for order, (function, cases) in enumerate(by_function.items()):
        index = defining_cell(notebook, function)
        if index is None:
            raise BuildError(f"{context.assignment.id}: no cell defines {function}() in the reference notebook")
        placements.append((index, order, function, cases))
    uses = call_graph.function_uses(context.assignment)
    for index, _, function, cases in sorted(placements, key=lambda p: (-p[0], -p[1])):
        cell = nbformat.v4.new_code_cell(check_cell_source(function, cases, context.expected,
                                                           call_graph.uses_in_order(uses, function),
                                                           context.limits,
                                                           {c.name: c for c in context.assignment.cases}))
        cell.id = f"check-{function}".replace("_", "-")
        cell.metadata["tags"] = [TAG]
        notebook.cells.insert(index + 1, cell)
    notebook.cells.append(total_cell(by_function, context.assignment))
    return notebook


def total_cell(by_function, assignment):
    """The last cell: every public check cell's points added up (runtime.check_total)."""
    public = {function: round(sum(c.points for c in cases), 6) for function, cases in by_function.items()}
    hidden = round(sum(c.points for c in assignment.hidden_cases), 6)
    cell = nbformat.v4.new_code_cell(
        "# Grand total of the public checks above. Runtime → Restart session and run all runs every check\n"
        "# cell, then this one.\n"
        f"check_total({public!r}, hidden_points={hidden!r})")
    cell.id = "check-total"
    cell.metadata["tags"] = [TAG]
    return cell
