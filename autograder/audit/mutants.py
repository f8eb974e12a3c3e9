"""Mutants of the reference's solution regions: one small student-like bug each.

Why our own transformer and not a mutation-testing library.  We read the
two well-kept ones:

* cosmic-ray (8.x) mutates whole modules on disk, through parso trees, and
  drives each mutant through a session database and an external test
  command.  Its operators (binary, comparison and unary operator
  replacement, and/or and True/False swaps, `not` added, numbers +-1,
  break/continue, exception replacement, zero-iteration for loops, removed
  decorators) have no statement deletion, no `return` of a constant, no
  slice or range bound and no dropped condition or operand: half of what
  the course needs.
* mutmut (3.x) rewrites a package's source files into "trampolines" (all
  mutants in one module, picked by an environment variable at run time) and
  runs pytest; its operators (libcst: operator and keyword swaps, number and
  string changes, argument removal, assignment to None) likewise lack
  statement deletion and bound moves.

Neither can take a cell of a notebook, restricted to the lines between
`### BEGIN SOLUTION` and `### END SOLUTION`, and hand back one mutated cell
at a time for our sandbox to grade like a hand-in; both would add a
dependency tree (parso/libcst, SQLAlchemy, stevedore, ...) to the grader.
So this module uses the standard library's `ast`: it borrows their operator
families (above) and adds the ones student bugs need (statement deleted,
return of a constant, condition negated or dropped, one operand of `|`,
`&`, `+`, `and`, `or` dropped -- a check of one direction --, range and
slice bounds moved, a length or enumerate start off by one, a copy or
`abs` left out, arguments swapped).

A mutant replaces exactly the source text of one node (ast positions), so
the rest of the cell keeps its comments and layout and the diff shows one
line.  Its id is a hash of the function, the operator, the place counted
from the function's `def` line, the original text and the replacement: it
stays the same when other cells or functions change, so cases.toml can mark
a mutant equivalent by id.
"""

import ast
import difflib
import hashlib
from dataclasses import dataclass

# Part of the audit cache key (cache.py): a change here makes every audit.json stale.
MUTATOR_VERSION = "3"   # 3: constant answers (and requirements) are audited and stored

COMPARE_SWAPS = {
    ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt), ast.GtE: (ast.Gt, ast.LtE),
    ast.In: (ast.NotIn,), ast.NotIn: (ast.In,), ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,),
}
ARITH_SWAPS = {
    ast.Add: (ast.Sub,), ast.Sub: (ast.Add,), ast.Mult: (ast.Add, ast.Pow), ast.Pow: (ast.Mult,),
    ast.Div: (ast.FloorDiv,), ast.FloorDiv: (ast.Div,), ast.Mod: (ast.FloorDiv,),
    ast.LShift: (ast.RShift,), ast.RShift: (ast.LShift,),
    ast.BitOr: (ast.BitAnd, ast.BitXor), ast.BitAnd: (ast.BitOr,), ast.BitXor: (ast.BitOr, ast.BitAnd),
}
# Operators that combine several checks or parts: dropping one side is a forgotten direction.
COMBINING = (ast.BitOr, ast.BitAnd, ast.Add)
# Calls whose single argument is returned nearly as is: leaving them out is a classic slip
# (a list yielded without copying it, a difference without abs, ...).
WRAPPERS = {"list", "tuple", "abs", "sorted", "reversed", "int", "set", "str", "iter"}
BOOLEAN_CALLS = {"all", "any", "isinstance", "callable", "bool"}
ATOMS = (ast.Name, ast.Constant, ast.Call, ast.Attribute, ast.Subscript, ast.List, ast.Tuple, ast.Set,
         ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class Mutant:
    id: str
    function: str       # qualified name of the def holding it
    operator: str
    original: str       # source text replaced
    replacement: str
    cell: int
    line: int           # line in the cell
    sources: tuple      # every cell of the mutated reference
    diff: str


def make_mutants(reference):
    """Every distinct, compilable mutant of every solution region, in source order."""
    mutants, seen = [], set()
    for cell in sorted({r.cell for r in reference.regions}):
        regions = [r for r in reference.regions if r.cell == cell]
        source = reference.sources[cell]
        tree = ast.parse(source)
        seen.add((cell, ast.dump(tree)))
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                child.parent = node
        raw = source.encode("utf-8").split(b"\n")
        for node in ast.walk(tree):
            region = _region_of(node, regions)
            if region is None:
                continue
            for operator, target, replacement in _mutations(node):
                text = _splice(raw, target, replacement)
                try:
                    dump = ast.dump(ast.parse(text))
                except SyntaxError:
                    continue
                if (cell, dump) in seen:
                    continue
                seen.add((cell, dump))
                original = ast.get_source_segment(source, target, padded=False) or ""
                where = f"{target.lineno - region.def_line}:{target.col_offset}"
                key = "\0".join((region.function, operator, where, original, replacement))
                mutants.append(Mutant(
                    id=hashlib.sha1(key.encode()).hexdigest()[:10], function=region.function or "(top level)",
                    operator=operator, original=original, replacement=replacement, cell=cell,
                    line=target.lineno, sources=reference.with_cell(cell, text), diff=_diff(source, text)))
    return mutants


def _region_of(node, regions):
    if not hasattr(node, "lineno") or getattr(node, "end_lineno", None) is None:
        return None
    if _inside_fstring(node):
        return None  # positions inside f-strings are not reliable enough to splice
    for region in regions:
        if region.first <= node.lineno and node.end_lineno <= region.last:
            return region
    return None


def _inside_fstring(node):
    while (node := getattr(node, "parent", None)) is not None:
        if isinstance(node, ast.JoinedStr):
            return True
    return False


def _splice(raw, node, text):
    """The cell's source with `node`'s text (byte offsets, as ast gives them) replaced by `text`."""
    lines = list(raw)
    first, last = node.lineno - 1, node.end_lineno - 1
    lines[first:last + 1] = [lines[first][:node.col_offset] + text.encode("utf-8") + lines[last][node.end_col_offset:]]
    return b"\n".join(lines).decode("utf-8")


def _diff(before, after):
    lines = difflib.unified_diff(before.split("\n"), after.split("\n"), lineterm="", n=1)
    return "\n".join(line for line in lines if not line.startswith(("---", "+++")))


def _expr(new, node):
    """`new` as text to put where `node` was, parenthesised when its new neighbours could bind tighter."""
    text = ast.unparse(ast.fix_missing_locations(new))
    parent = getattr(node, "parent", None)
    if (isinstance(parent, ast.expr) and not isinstance(parent, (ast.Call, ast.List, ast.Tuple, ast.Set, ast.Dict))
            and not isinstance(new, ATOMS)):
        return f"({text})"
    return text


def _copy(node, **changes):
    fields = {name: getattr(node, name) for name in node._fields}
    fields.update(changes)
    return type(node)(**fields)


def _mutations(node):
    """(operator, node to replace, replacement text) for one node."""
    if isinstance(node, ast.stmt):
        yield from _statement_mutations(node)
        return
    for operator, text in _expression_mutations(node):
        yield operator, node, text


def _expression_mutations(node):
    if isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            for swap in COMPARE_SWAPS.get(type(op), ()):
                ops = list(node.ops)
                ops[index] = swap()
                yield "compare", _expr(_copy(node, ops=ops), node)
    elif isinstance(node, ast.BinOp):
        for swap in ARITH_SWAPS.get(type(node.op), ()):
            yield "arith", _expr(_copy(node, op=swap()), node)
        if isinstance(node.op, COMBINING):
            yield "operand-dropped", _expr(node.left, node)
            yield "operand-dropped", _expr(node.right, node)
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "and-or", _expr(_copy(node, op=other), node)
        for index in range(len(node.values)):
            rest = node.values[:index] + node.values[index + 1:]
            yield "operand-dropped", _expr(rest[0] if len(rest) == 1 else _copy(node, values=rest), node)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.Invert)):
        yield "unary-dropped", _expr(node.operand, node)
    elif isinstance(node, ast.IfExp):
        yield "condition-negated", _expr(_copy(node, test=ast.UnaryOp(ast.Not(), node.test)), node)
    elif isinstance(node, ast.Constant):
        yield from _constant_mutations(node)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        yield from _call_mutations(node)
    elif isinstance(node, ast.Subscript):
        yield from _subscript_mutations(node)
    elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        for g_index, generator in enumerate(node.generators):
            for i_index, condition in enumerate(generator.ifs):
                generators = list(node.generators)
                ifs = list(generator.ifs)
                ifs[i_index] = ast.UnaryOp(ast.Not(), condition)
                generators[g_index] = _copy(generator, ifs=ifs)
                yield "condition-negated", _expr(_copy(node, generators=generators), node)
                generators[g_index] = _copy(generator, ifs=generator.ifs[:i_index] + generator.ifs[i_index + 1:])
                yield "condition-dropped", _expr(_copy(node, generators=generators), node)


def _statement_mutations(node):
    if not isinstance(node, ast.Pass) and not _is_docstring(node):
        yield "statement-deleted", node, "pass"
    if isinstance(node, (ast.If, ast.While)):
        # Only the test is replaced, so the body keeps its text and indentation.
        yield "condition-negated", node.test, ast.unparse(ast.UnaryOp(ast.Not(), node.test))
    if isinstance(node, ast.If):
        yield "condition-dropped", node.test, "True"
    if isinstance(node, ast.Return) and node.value is not None:
        constants = (True, False) if _looks_boolean(node.value) else (0, "", [])
        for constant in constants:
            value = ast.List([], ast.Load()) if constant == [] else ast.Constant(constant)
            yield "return-constant", node, ast.unparse(ast.Return(value))
    if isinstance(node, ast.AugAssign):
        for swap in ARITH_SWAPS.get(type(node.op), ()):
            yield "arith", node, ast.unparse(_copy(node, op=swap()))


def _is_docstring(node):
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _looks_boolean(value):
    if isinstance(value, (ast.Compare, ast.BoolOp)) or (isinstance(value, ast.UnaryOp)
                                                      and isinstance(value.op, ast.Not)):
        return True
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in BOOLEAN_CALLS


def _constant_mutations(node):
    value = node.value
    if isinstance(value, bool):
        yield "constant", repr(not value)
    elif isinstance(value, int):
        yield "constant", repr(value + 1)
        yield "constant", repr(value - 1)
    elif isinstance(value, str) and not _is_docstring(getattr(node, "parent", None)):
        yield "constant", repr("")
        if len(value) > 1:
            yield "constant", repr(value[:-1])


def _plus(node, amount):
    return ast.BinOp(node, ast.Add() if amount > 0 else ast.Sub(), ast.Constant(abs(amount)))


def _call_mutations(node):
    name, args = node.func.id, node.args
    simple = not node.keywords and not any(isinstance(a, ast.Starred) for a in args)
    if name == "range" and simple:
        for index, arg in enumerate(args):
            for amount in (1, -1):
                changed = list(args)
                changed[index] = _plus(arg, amount)
                yield "range-bound", ast.unparse(_copy(node, args=changed))
        if len(args) == 1:
            yield "range-bound", ast.unparse(_copy(node, args=[ast.Constant(1), args[0]]))
    if name == "len" and len(args) == 1 and simple:
        yield "length-off-by-one", _expr(_plus(node, 1), node)
        yield "length-off-by-one", _expr(_plus(node, -1), node)
    if name == "enumerate" and len(args) == 1 and simple:
        yield "enumerate-start", ast.unparse(_copy(node, args=[args[0], ast.Constant(1)]))
    if name in WRAPPERS and len(args) == 1 and simple:
        yield "call-dropped", _expr(args[0], node)
    if name in ("any", "all"):
        yield "any-all", ast.unparse(_copy(node, func=ast.Name("all" if name == "any" else "any", ast.Load())))
    if name == "next" and len(args) == 2:
        yield "default-dropped", ast.unparse(_copy(node, args=args[:1]))
    if simple and name not in ("range",) and len(args) >= 2:
        for index in range(len(args) - 1):
            changed = list(args)
            changed[index], changed[index + 1] = changed[index + 1], changed[index]
            yield "arguments-swapped", ast.unparse(_copy(node, args=changed))


def _subscript_mutations(node):
    if isinstance(node.slice, ast.Slice):
        for bound in ("lower", "upper"):
            value = getattr(node.slice, bound)
            if value is None:
                continue
            for amount in (1, -1):
                changed = _copy(node.slice, **{bound: _plus(value, amount)})
                yield "slice-bound", ast.unparse(_copy(node, slice=changed))
            yield "slice-bound", ast.unparse(_copy(node, slice=_copy(node.slice, **{bound: None})))
    elif isinstance(node.value, ast.Subscript) and not isinstance(node.value.slice, ast.Slice):
        inner = _copy(node.value, slice=node.slice)
        yield "indices-swapped", ast.unparse(_copy(node, value=inner, slice=node.value.slice))
