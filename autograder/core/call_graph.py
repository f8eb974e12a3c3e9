"""Which tested function calls which, and which failing function most of a student's failures come from.

A check of `count_solutions` fails when `is_solved`, which it calls, is
wrong; sending the student to `count_solutions` (or to its hint) wastes
their time.  Which tested function uses which comes from the reference
notebook's code (every call inside each function, followed through helpers
that are not tested) plus cases.toml's optional [uses] table.  A failing
function that uses no other failing function, and whose callers' checks
fail too, is named once at the top of the feedback page; the notebook's
check cells get the same list (`uses=`) and say the same (runtime.fix_first).
"""

import ast
import functools

import nbformat


@functools.cache
def _calls_in_reference(path, mtime):
    """function -> names called anywhere inside it, for every top-level def in the notebook."""
    del mtime  # part of the cache key only
    try:
        notebook = nbformat.read(str(path), as_version=4)
    except (OSError, ValueError):
        return {}
    calls = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines()
                           if not line.lstrip().startswith(("%", "!")))   # magics are not Python
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                calls[node.name] = frozenset(
                    n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    return calls


def function_uses(assignment):
    """tested function -> the tested functions it calls, directly or through helpers."""
    path = assignment.solution_path
    calls = dict(_calls_in_reference(path, path.stat().st_mtime_ns)) if path.is_file() else {}
    for function, called in assignment.uses.items():
        calls[function] = frozenset(calls.get(function, frozenset()) | set(called))
    tested = set(assignment.functions())
    uses = {}
    for function in tested:
        seen, todo = set(), list(calls.get(function, ()))
        while todo:
            name = todo.pop()
            if name in seen or name == function:
                continue
            seen.add(name)
            todo += calls.get(name, ())
        uses[function] = frozenset(seen & tested)
    return uses


def root_causes(rows, uses):
    """[(function, failures it explains, all failures, the failing functions that use it)], biggest first.

    `rows` are one hand-in's case results (anything with .function, .status and .message).  A
    function whose checks all stop at a `raise NotImplementedError` is not written yet: that is
    its own problem, not one its callee causes, so it is never counted as a caller.
    """
    failed = [r for r in rows if r.status not in ("passed", "not-run", "")]
    failing = {r.function for r in failed}
    written = {r.function for r in failed if not (r.message or "").startswith("NotImplementedError")}
    found = []
    for function in failing:
        if uses.get(function, frozenset()) & failing:
            continue          # it calls a failing function itself: that one is nearer the cause
        callers = {g for g in failing & written if function in uses.get(g, frozenset())}
        if not callers:
            continue
        explained = sum(1 for r in failed if r.function == function or r.function in callers)
        found.append((function, explained, len(failed), sorted(callers)))
    return sorted(found, key=lambda item: (-item[1], item[0]))


def uses_in_order(uses, function):
    """The functions `function` calls, the most basic first (those that call fewer come first)."""
    return sorted(uses.get(function, ()), key=lambda f: (len(uses.get(f, ())), f))


def sentence(function, explained, total):
    if 2 * explained > total:
        return f"Most of your failures come from `{function}`: fix it first."
    return f"{explained} of your {total} failed checks come from `{function}`: fix it first."
