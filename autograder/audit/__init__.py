"""`autograder audit`: how strong are an assignment's cases?

regions.py finds the reference's solution regions, mutants.py makes
student-like bugs in them, trials.py grades each variant through the real
sandbox, measure.py turns that into verdicts, stubs and lint, report.py
writes the Markdown/HTML reports and cache.py the committed audit.json that
`autograder build --check` compares.
"""

from .cache import write_audit
from .measure import measure
from .report import write_reports

__all__ = ["measure", "run_audit", "write_audit", "write_reports"]


def run_audit(assignment, sandbox, jobs, out=None, progress=lambda message: None):
    """Measure one assignment, write its reports into `out` (if given) and refresh audit.json."""
    result = measure(assignment, sandbox, jobs, progress)
    if out is not None:
        write_reports(result, out)
    write_audit(result)
    return result
