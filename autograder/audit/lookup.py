"""The look-up mutant: every tested function replaced by a table of the public cases' answers.

The public check cells print every public input with its expected value, so a
student can hand in the untouched student notebook plus one cell that
redefines each function as a look-up in that table, with a constant answer for
any other input.  What that earns is what the case table gives away for
nothing: every public case, unless a case it requires fails, and every hidden
case whose answer happens to be the default.  cases.toml's `lookup_floor` (1
point unless it says otherwise) bounds it; public cases that require a hidden
*twin* (the same check on an input the table cannot hold) keep it low.

The mutant knows nothing of any assignment: the tables come from the cases'
calls and expected.json, the notebook is the generated student notebook.  A
table is keyed the way a careful student would key it, by the arguments'
plain values bound to the function's parameters (a tuple, a list and a numpy
array of the same numbers are one key, and so are f(4) and f(n=4)), so a twin
must be a different input, not the same one in another type or spelling.
Each default is tried in turn, the same for every function: each of the
audit's constants, then each function's most common public answer.
"""

import inspect as _lookup_inspect   # the name the cell imports it by: lookup_signature runs there too
from collections import Counter
from dataclasses import dataclass

from ..core.literal import python_literal
from ..intake.cells import CodeCell, read_cells
from .lint import CONSTANTS

MOST_COMMON = "the most common public answer"


@dataclass
class LookupResult:
    default: str            # "False", "[]", ... or MOST_COMMON
    points: float           # the whole notebook's score, requirements applied
    passed: list            # names of the cases that earned points


def lookup_plain(value):
    """An argument as a table key sees it: sequences and arrays as lists, numpy scalars as numbers."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [lookup_plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((lookup_plain(item) for item in value), key=repr)
    if isinstance(value, dict):
        return sorted(((repr(k), lookup_plain(v)) for k, v in value.items()))
    return value


def lookup_key(signature, args, kwargs):
    """A call's key: its arguments bound to the function's parameters (f(4) and f(n=4) are one call) when
    the notebook defines the function, their plain values otherwise."""
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            pass
        else:
            bound.apply_defaults()
            return repr(sorted((name, lookup_plain(value)) for name, value in bound.arguments.items()))
    return repr((lookup_plain(list(args)), sorted((name, lookup_plain(v)) for name, v in kwargs.items())))


def lookup_signature(function):
    try:
        return _lookup_inspect.signature(function)
    except (TypeError, ValueError):     # not a function (None: the notebook does not define it)
        return None


def tables(assignment, expected):
    """{function: [(args, kwargs, answer)]} of the public cases (plain values), every tested function."""
    out = {function: [] for function in assignment.functions()}
    for case in assignment.public_cases:
        out[case.function].append((lookup_plain(list(case.call.args)),
                                   {name: lookup_plain(v) for name, v in case.call.kwargs.items()},
                                   expected[case.name]))
    return out


def most_common(assignment, expected):
    """{function: its most common public answer (the first of a tie)}; None for a function with no public case."""
    out = {}
    for function in assignment.functions():
        answers = [expected[c.name] for c in assignment.public_cases if c.function == function]
        counts = Counter(repr(a) for a in answers)
        out[function] = max(answers, key=lambda a: counts[repr(a)]) if answers else None
    return out


def lookup_cell(assignment, expected, defaults):
    """The one cell a student would add: the key helpers (this module's own code), then one table and one
    function per tested function, keyed through the signature of the function it replaces.  `defaults`:
    {function: the answer for an input not in its table}."""
    lines = ["# The look-up mutant (`autograder audit`): each tested function answers from a table of the",
             "# public checks' expected values, and a constant otherwise.",
             "import inspect as _lookup_inspect", "",
             *(_lookup_inspect.getsource(f) for f in (lookup_plain, lookup_key, lookup_signature))]
    for number, (function, rows) in enumerate(tables(assignment, expected).items()):
        signature, table = f"_lookup_signature_{number}", f"_lookup_table_{number}"
        lines.append(f"{signature} = lookup_signature(globals().get({function!r}))")
        lines.append(f"{table} = {{")
        lines += [f"    lookup_key({signature}, {python_literal(args)}, {python_literal(kwargs)}): "
                  f"{python_literal(answer)}," for args, kwargs, answer in rows]
        lines.append("}")
        lines.append("")
        lines.append(f"def {function}(*args, **kwargs):")
        lines.append(f"    return {table}.get(lookup_key({signature}, args, kwargs), "
                     f"{python_literal(defaults[function])})")
        lines.append("")
    return "\n".join(lines)


def lookup_variants(assignment, expected):
    """[(label, {function: default})]: each constant for every function, then each one's most common answer."""
    functions = assignment.functions()
    variants = [(repr(constant), dict.fromkeys(functions, constant)) for constant in CONSTANTS]
    return variants + [(MOST_COMMON, most_common(assignment, expected))]


def measure_lookup(assignment, expected, trials, reference):
    """[LookupResult] of the untouched student notebook plus the look-up cell, one per default (the
    reference's cells stand in for a student notebook not built yet)."""
    base = list(read_cells(assignment.student_path)) if assignment.student_path.exists() else \
        [CodeCell(source) for source in reference.sources]
    variants = lookup_variants(assignment, expected)

    def graded(variant, slot):
        _, defaults = variant
        cells = base + [CodeCell(lookup_cell(assignment, expected, defaults))]
        return trials.grade_cells(cells, slot)

    out = []
    for (label, _), result in zip(variants, trials.map(graded, variants)):
        out.append(LookupResult(label, round(result.score, 4), [r.name for r in result.cases if r.points > 0]))
    return out
