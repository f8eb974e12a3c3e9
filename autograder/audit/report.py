"""The audit's report per assignment: Markdown and a self-contained HTML page (Jinja2)."""

from ..core.render import render

KINDS = {
    "no-mutants": "Nothing to mutate",
    "untouched-scores": "The untouched student notebook scores points",
    "flips": "Cases that flip between runs",
    "tight-limit": "Time limits close to the reference's own time",
    "one-input": "Functions tested at one input only",
    "one-size": "Functions tested at one size only",
    "hidden-repeats-public": "Hidden cases that repeat a public input",
    "stub-passes": "Cases a constant stub passes",
    "constant-expected": "Cases whose expected value is a constant stub's",
}


def context(result):
    mutants = result.mutants
    return {
        "title": result.assignment.title,
        "id": result.assignment.id,
        "line": result.summary_line(),
        "summary": result.summary(),
        "score": f"{result.score:.1%}",
        "floor": None if result.floor is None else f"{result.floor:.0%}",
        "below_floor": result.below_floor(),
        "seconds": f"{result.seconds:.1f}",
        "functions": result.by_function(),
        "survivors": [m for m in mutants if m.verdict == "survived"],
        "equivalent": [m for m in mutants if m.verdict == "equivalent"],
        "marked_but_killed": [m for m in mutants if m.marked_but_killed],
        "stale_equivalents": result.stale_equivalents,
        "hidden_only": [m for m in mutants if m.verdict == "hidden"],
        "mutants": mutants,
        "untouched": result.untouched_score,
        "stubs": result.stubs,
        "everywhere": result.everywhere,
        "constants_line": result.constants_line(),
        "constant_floor": f"{result.constant_floor:g}",
        "lookup": result.lookup,
        "lookup_line": result.lookup_lines()[0],
        "lookup_floor": f"{result.lookup_floor:g}",
        "findings": [(KINDS[kind], [f for f in result.findings if f.kind == kind])
                     for kind in KINDS if any(f.kind == kind for f in result.findings)],
    }


def write_reports(result, folder):
    folder.mkdir(parents=True, exist_ok=True)
    data = context(result)
    paths = []
    for template, suffix in (("audit.md.j2", "md"), ("audit.html.j2", "html")):
        path = folder / f"{result.assignment.id}.{suffix}"
        path.write_text(render(template, **data), encoding="utf-8")
        paths.append(path)
    return paths
