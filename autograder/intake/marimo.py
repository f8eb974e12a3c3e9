"""The cells of a marimo notebook, found by Python's own parser in a child process with a CPU budget.

marimo's file format is a Python module: `import marimo`, `app =
marimo.App(...)`, cells as `@app.cell` functions, `@app.function` and
`@app.class_definition` definitions and `with app.setup:` bodies.  Only
Python's parser reads it faithfully, and that parser is not linear in every
input: one f-string of many `{x}` parts costs time quadratic in its length
(CPython 3.11), so a 5 MB file could cost an hour.  So the file is parsed in
a child of the grader's own, never run: the child has `PARSE_CPU_SECONDS` of
CPU and `PARSE_MEMORY_BYTES` of memory, and says only which lines each cell
spans.  A file it cannot parse within them is that hand-in's row.  A real
marimo notebook is tens of KB and parses in milliseconds; 1 MB of ordinary
code parses in about half a second, a tenth of the budget.
"""

import json
import re
import subprocess
import sys
import textwrap

MAX_MARIMO_BYTES = 1024 * 1024      # a marimo notebook is parsed (never run) to find its cells: bounded
PARSE_CPU_SECONDS = 5                # a real notebook's parse takes milliseconds
PARSE_MEMORY_BYTES = 2 * 1024 ** 3
_LINE_ENDS = re.compile(r"\r\n|\r|\n")      # where Python's own parser counts a line's end

# The child: standard library only (started with -I -S, it imports nothing of ours), its limits set first.
_CHILD = r"""
import ast, json, resource, sys
resource.setrlimit(resource.RLIMIT_CPU, (%(cpu)d, %(cpu)d + 1))
resource.setrlimit(resource.RLIMIT_AS, (%(memory)d, %(memory)d))

def dotted(node):
    # `app.cell` for `@app.cell` or `@app.cell(...)`: two parts at most, read without recursion.
    node = node.func if isinstance(node, ast.Call) else node
    parts = []
    while isinstance(node, ast.Attribute) and len(parts) < 2:
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) and len(parts) <= 1 else ""

try:
    tree = ast.parse(sys.stdin.buffer.read().decode("utf-8"))
except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
    print(json.dumps({"error": type(error).__name__}))
    sys.exit(0)
spans = []
for node in tree.body:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
        kinds = {dotted(d) for d in node.decorator_list}
        if "app.cell" in kinds and not isinstance(node, ast.ClassDef):
            body = node.body[:-1] if node.body and isinstance(node.body[-1], ast.Return) else node.body
            if body:
                spans.append([body[0].lineno, body[-1].end_lineno])
        elif kinds & {"app.function", "app.class_definition"}:
            spans.append([node.lineno, node.end_lineno])   # the definition itself, without marimo's decorator
    elif isinstance(node, ast.With) and any(dotted(item.context_expr) == "app.setup" for item in node.items):
        if node.body:
            spans.append([node.body[0].lineno, node.body[-1].end_lineno])
print(json.dumps({"spans": spans}))
"""


class MarimoError(Exception):
    """The file cannot be read as a marimo notebook: the message says why."""


def cell_sources(text, name):
    """Each cell's source, in the file's order (empty ones left out)."""
    if len(text) > MAX_MARIMO_BYTES:
        raise MarimoError(f"{name} is a marimo notebook larger than {MAX_MARIMO_BYTES // 2**20} MB")
    spans = _spans(text, name)
    lines = _LINE_ENDS.split(text)
    sources = [textwrap.dedent("\n".join(lines[start - 1:end])) + "\n" for start, end in spans]
    return [source for source in sources if source.strip()]


def _spans(text, name):
    script = _CHILD % {"cpu": PARSE_CPU_SECONDS, "memory": PARSE_MEMORY_BYTES}
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", script], input=text.encode("utf-8"),
                              capture_output=True, timeout=3 * PARSE_CPU_SECONDS + 5)
    except subprocess.TimeoutExpired:
        raise MarimoError(f"{name} is a marimo notebook Python could not parse in {PARSE_CPU_SECONDS} s") from None
    except OSError as error:
        raise MarimoError(f"{name}: the parser could not start ({error.strerror})") from None
    try:
        reply = json.loads(done.stdout)
        spans = [(int(a), int(b)) for a, b in reply.get("spans", [])]
    except (ValueError, TypeError, AttributeError):
        reply, spans = None, []
    if done.returncode != 0 or not isinstance(reply, dict):
        raise MarimoError(f"{name} is a marimo notebook Python could not parse within its limits "
                          f"({PARSE_CPU_SECONDS} s of CPU, {PARSE_MEMORY_BYTES // 2**30} GB)")
    if "error" in reply:
        raise MarimoError(f"{name} is a marimo notebook Python cannot read ({str(reply['error'])[:40]})")
    return spans
