"""The package reads left to right: one folder per pipeline stage, imports only pointing back along it.

A newcomer who lists `autograder/` sees the stages; this test keeps the
promise the README's "How the code is laid out" makes: a stage imports only
earlier stages (and `core`, and `runtime`), no import forms a cycle, and no
module lies loose at the top.
"""

import ast
import functools
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "autograder"
# In import order.  grade/ records each result in gradebook/ as it comes, so the store comes first;
# generate/ (`autograder build`) runs the reference through engine/ and grade/ (expected values, timings)
# and audit/ (the mutation score it records), so it comes after them, though instructors run it first.
# publish/ is `autograder release` and `gradebook`: no package is named like an output folder (build/,
# release/), which a .gitignore line once hid from git.
# similarity/ reads the gradebook and comes last but the CLI, so no student-facing stage can import it.
STAGES = ("runtime", "core", "notebook", "intake", "roster", "engine", "gradebook", "grade", "audit", "generate",
          "feedback", "publish", "export", "similarity", "cli")
TOP_LEVEL = {"__init__.py", "__main__.py", "runtime.py"}


def _module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts), parts[-1] == "__init__"


@functools.cache
def _tree(path):
    """The parsed module (each test reads every module: parsed once per process)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _nodes(path):
    return tuple(ast.walk(_tree(path)))


@functools.cache
def _imports(path):
    """Absolute names of the autograder modules (or names in them) that `path` imports."""
    module, is_package = _module_name(path)
    here = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in _nodes(path):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("autograder"):
                found += [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("autograder")]
    return module, tuple(found)


def _stage(name):
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else None


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "assignments" not in p.parts)


def test_no_module_lies_loose_at_the_top():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in TOP_LEVEL)
    assert loose == []
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name not in ("__pycache__", "assignments"))
    assert folders == sorted(STAGES[1:])


def test_imports_point_only_back_along_the_pipeline():
    backwards = []
    for path in _modules():
        module, imports = _imports(path)
        stage = _stage(module)
        if stage not in STAGES:           # autograder/__init__, __main__
            continue
        for name in imports:
            target = _stage(name)
            if target in STAGES and STAGES.index(target) > STAGES.index(stage):
                backwards.append(f"{module} imports {name}")
    assert backwards == []


def test_no_import_cycle():
    graph = {}
    modules = {_module_name(p)[0] for p in _modules()}
    for path in _modules():
        module, imports = _imports(path)
        edges = set()
        for name in imports:
            # `from .x import y`: y is a module of its own, or a name in module x
            edges.add(name if name in modules else name.rsplit(".", 1)[0])
        graph[module] = {e for e in edges if e in modules and e != module}
    # A package's __init__ importing its own modules is how Python packages work, not a cycle.
    for module in graph:
        graph[module] = {e for e in graph[module] if not e.startswith(module + ".")}
    state, cycles = {}, []

    def visit(node, trail):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(trail[trail.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_every_cli_function_is_short():
    """A verb parses, calls one function and prints: anything longer belongs in its stage."""
    long = []
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for node in _nodes(path):
            if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno + 1 > 40:
                long.append(f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)")
    assert long == []


TESTS = ROOT / "tests"
# Tests of the whole project rather than of one stage (the docs, and autograder/runtime.py, a module at the top).
PROJECT_TESTS = {"test_layout.py", "test_repository.py", "test_packaging.py", "test_environment.py",
                 "test_benchmarks.py", "test_runtime.py", "test_docs_commands.py", "test_moving_a_course.py"}


def test_tests_are_laid_out_like_the_package():
    """tests/<stage>/test_*.py holds each stage's tests, as otter's and nbgrader's tests mirror their packages;
    tests/assignments/ the assignments', tests/nqueens/ the nqueens package's.  Folders with no test in them
    (browser/, hostile/, gradebook/schemas/) are helpers and data; helper modules (conftest.py, minicourse.py,
    semesters.py, ...) stay at the top, where every test imports them from."""
    misplaced = []
    for path in sorted(TESTS.rglob("test_*.py")):
        relative = path.relative_to(TESTS)
        if len(relative.parts) == 1 and relative.name not in PROJECT_TESTS:
            misplaced.append(f"{relative}: a stage's test goes in tests/<stage>/ (the stage it tests)")
        elif len(relative.parts) > 1 and relative.parts[0] not in (*STAGES[1:], "assignments", "nqueens"):
            misplaced.append(f"{relative}: tests/{relative.parts[0]}/ is not a stage of autograder/")
    assert misplaced == []
    names = [path.name for path in TESTS.rglob("test_*.py")]
    # pytest imports a test module by its file name (no __init__.py, so `from conftest import ...` works)
    assert sorted(n for n in names if names.count(n) > 1) == []
    # ... from its own folder: a test module imports another only beside it (shared helpers live at the top).
    reaching = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in _nodes(path):
            imported = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            reaching += [f"{path.relative_to(TESTS)} imports {name}" for name in imported
                         if name.startswith("test_") and not (path.parent / f"{name}.py").is_file()]
    assert reaching == []


# The engine's modules that run inside the sandbox, not in the grader: nothing outside engine/ imports them.
ENGINE_SANDBOX_SIDE = {"zygote", "worker", "colab_standin"}


def test_no_module_outside_the_engine_reads_a_private_name():
    """Other stages use the engine's public names only: no `_name` imported from it or read off one of its
    modules, and none of the modules that run inside the sandbox (engine/__init__.py says which is which)."""
    found = []
    for path in _modules():
        module, is_package = _module_name(path)
        if _stage(module) == "engine":
            continue
        here = module.split(".") if is_package else module.split(".")[:-1]
        bound = set()         # local names of engine modules
        for node in _nodes(path):
            if isinstance(node, ast.ImportFrom):
                base = here[:len(here) - (node.level - 1)] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                if _stage(target) != "engine":
                    continue
                for alias in node.names:
                    whole = f"{target}.{alias.name}"
                    if alias.name.startswith("_") or set(whole.split(".")[2:]) & ENGINE_SANDBOX_SIDE:
                        found.append(f"{module} imports {whole}")
                    bound.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if _stage(alias.name) == "engine":
                        if set(alias.name.split(".")[2:]) & ENGINE_SANDBOX_SIDE:
                            found.append(f"{module} imports {alias.name}")
                        bound.add(alias.asname or alias.name.split(".")[0])
        for node in _nodes(path):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                found.append(f"{module} reads {node.value.id}.{node.attr}")
    assert found == []


ENGINE = PACKAGE / "engine"
# Calls that make a mutable container: a module holding one holds state.
_MUTABLE_CALLS = {"list", "dict", "set", "bytearray", "deque", "defaultdict", "OrderedDict", "Counter"}


def _mutable_state(tree):
    """(line, what) for each piece of state a module keeps: a mutable container bound at module or class level,
    a name bound twice there, a `global` statement, a cache decorator on a function."""
    found, bound = [], {}
    mutable = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)

    def binding(node, where):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = getattr(node, "value", None)
        call = value.func if isinstance(value, ast.Call) else None
        name = getattr(call, "id", None) or getattr(call, "attr", None)
        if isinstance(value, mutable) or name in _MUTABLE_CALLS or isinstance(node, ast.AugAssign):
            found.append((node.lineno, f"{where}: a mutable value"))
        for target in targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)):
                found.append((node.lineno, f"{where}: {ast.unparse(target)} changed"))
            for leaf in ast.walk(target) if isinstance(target, (ast.Name, ast.Tuple)) else ():
                if isinstance(leaf, ast.Name) and where == "module":
                    if leaf.id in bound:
                        found.append((node.lineno, f"{leaf.id} bound again (first at line {bound[leaf.id]})"))
                    bound.setdefault(leaf.id, node.lineno)

    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            binding(node, "module")
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.Assign, ast.AugAssign)) or (isinstance(item, ast.AnnAssign) and item.value):
                    binding(item, f"class {node.name}")
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                text = ast.unparse(decorator)
                if "lru_cache" in text or text.endswith("cache"):
                    found.append((node.lineno, f"{node.name}: a cache ({text})"))
    found += [(node.lineno, "a global statement") for node in ast.walk(tree) if isinstance(node, ast.Global)]
    return found


def test_no_module_of_the_engine_keeps_mutable_state():
    """The engine's state lives in objects (a Sandbox, a Worker, a RequestQueue, a run's Budget, a zygote of each
    role), never in a module: a process forked from another then holds only what its objects hold."""
    kept = [f"{path.name}:{line} {what}" for path in sorted(ENGINE.glob("*.py"))
            for line, what in _mutable_state(_tree(path))]
    assert kept == []


def test_no_module_of_the_engine_is_over_500_lines():
    long = {path.name: n for path in ENGINE.glob("*.py") if (n := len(path.read_text().splitlines())) > 500}
    assert long == {}


def test_no_module_outside_the_engine_reads_its_internals():
    """The rest of the package uses the engine through the names autograder/engine/__init__.py gives, nothing else:
    no module of the engine imported by name, no private name."""
    import autograder.engine

    public = set(autograder.engine.__all__)
    reads = []
    for path in _modules():
        module, imports = _imports(path)
        if _stage(module) == "engine":
            continue
        for name in imports:
            if name.startswith("autograder.engine.") and name.removeprefix("autograder.engine.") not in public:
                reads.append(f"{module} imports {name}")
    assert reads == []


def _module_path(name):
    """The file of an autograder module, or None when `name` is a name inside one (or not ours)."""
    path = ROOT.joinpath(*name.split("."))
    return next((p for p in (path.with_suffix(".py"), path / "__init__.py") if p.is_file()), None)


def _reached_from(path, function):
    """Every function a class run can reach from `function`, as far as a reading of the source can tell.

    Names, not types: a call `x.apply_lateness(...)` reaches every function called `apply_lateness` in the modules
    `path` imports, directly or not, and so does a function handed on by name. That over-counts, never under-counts:
    no call along the run is missed by it."""
    modules, todo = {path}, [path]
    while todo:
        for name in _imports(todo.pop())[1]:
            found = _module_path(name) or _module_path(name.rpartition(".")[0])
            if found is not None and found not in modules:
                modules.add(found)
                todo.append(found)
    functions = {}
    for module in modules:
        for node in _nodes(module):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.setdefault(node.name, []).append((module, node))
    reached, names = {}, [function]
    while names:
        for module, node in functions.get(names.pop(), ()):
            if (module, node.lineno) not in reached:
                reached[module, node.lineno] = node
                names += {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
                          if isinstance(n, (ast.Name, ast.Attribute))} & functions.keys()
    return reached


def test_every_function_a_class_run_reaches_is_under_60_lines():
    """Issue 39: `_grade_class` and everything it calls read a screen at a time (gradebook.apply_lateness was 73
    lines, and lateness.assess, which it calls for every hand-in, 61)."""
    reached = _reached_from(PACKAGE / "grade" / "class_run.py", "_grade_class")
    names = {node.name for node in reached.values()}
    assert {"_grade_class", "collect", "grade_all", "apply_lateness", "assess"} <= names, "the walk lost the run"
    long = sorted(f"{module.relative_to(ROOT)}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
                  for (module, _), node in reached.items() if node.end_lineno - node.lineno + 1 >= 60)
    assert long == []
