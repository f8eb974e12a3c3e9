"""`autograder similarity`: which hand-ins have code in common, for the teaching team to look at."""

import json
from pathlib import Path

import click

from ..similarity import DEFAULT_THRESHOLD, DEFAULT_TOP, compare_class, write_page
from .options import ASSIGNMENT, OUT, graded_assignment


@click.command("similarity")
@ASSIGNMENT
@OUT
@click.option("--against", "against", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Also compare with an earlier semester's grades folder (its gradebook.db), or a notebook or "
                   ".py file such as a published solution (repeatable).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=DEFAULT_THRESHOLD, show_default=True,
              help="Where the page draws its line: pairs sharing at least this share of their code.")
@click.option("--top", type=click.IntRange(0), default=DEFAULT_TOP, show_default=True,
              help="Pairs shown side by side, the most similar (the page's look-up finds any other pair).")
@click.option("--json", "as_json", is_flag=True, help="Print the page's data as JSON instead of writing the page.")
@click.pass_obj
def similarity_command(course_root, assignment_id, out_dir, against, threshold, top, as_json):
    """Rank every pair of students' code by how much they have in common (DIR/similarity.html)."""
    course, assignment = graded_assignment(course_root, assignment_id, out_dir)
    result = compare_class(assignment, out_dir, against, threshold, top)
    if as_json:
        click.echo(json.dumps(result.data(), indent=1))
        return
    path = write_page(result, out_dir / "similarity.html", course.name)
    above = result.at_or_above()
    compared = sum(1 for d in result.documents if d.pieces)
    click.echo(f"compared {compared} of {len(result.documents)} hand-ins: {len(result.pairs)} pair(s) with code "
               f"in common, {above} at or above {threshold:.0%}, {len(result.groups)} group(s) of three or more "
               f"[{result.seconds:.1f} s]")
    click.echo(f"wrote {path} (for the teaching team: it shows similarity; a person decides)")
