"""What cases.toml says about the audit: floors, and equivalent mutants.

    mutation_floor = 0.9          # `autograder build --check` fails below it
    constant_floor = 0            # the most points a constant answer may earn (0 when not set)
    lookup_floor = 1              # the most a table of the public answers may earn (1 when not set)

    [[equivalent]]
    id = "3f2a9c01be"             # the id the audit report prints
    reason = "sorted(rows) and rows differ only in order, and set() ignores order"

An equivalent mutant cannot be told apart from the reference on any valid
input; it is counted on its own line, never among the killed or dropped.
"""

import tomllib
from dataclasses import dataclass

from ..core.assignment import AssignmentError


@dataclass(frozen=True)
class AuditConfig:
    floor: float | None
    equivalent: dict        # mutant id -> reason
    constant_floor: float = 0.0
    lookup_floor: float = 1.0


def load_config(assignment):
    path = assignment.cases_path
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    floor = data.get("mutation_floor")
    if floor is not None and (isinstance(floor, bool) or not isinstance(floor, (int, float))
                              or not 0 <= floor <= 1):
        raise AssignmentError(f"{path}: mutation_floor must be a number from 0 to 1, like 0.9")
    equivalent = {}
    for number, entry in enumerate(data.get("equivalent", []), 1):
        mutant_id, reason = entry.get("id"), str(entry.get("reason", "")).strip()
        if not isinstance(mutant_id, str) or not mutant_id:
            raise AssignmentError(f"{path}, equivalent {number}: needs id = \"...\" (the id in the audit report)")
        if not reason:
            raise AssignmentError(f"{path}, equivalent {mutant_id}: needs a one-line reason")
        equivalent[mutant_id] = reason
    constant_floor = data.get("constant_floor", 0)
    if isinstance(constant_floor, bool) or not isinstance(constant_floor, (int, float)) or constant_floor < 0:
        raise AssignmentError(f"{path}: constant_floor must be a number of points, 0 or more (0: a constant "
                              "answer earns nothing)")
    lookup_floor = data.get("lookup_floor", 1)
    if isinstance(lookup_floor, bool) or not isinstance(lookup_floor, (int, float)) or lookup_floor < 0:
        raise AssignmentError(f"{path}: lookup_floor must be a number of points, 0 or more (the most a table of "
                              "the public answers may earn; 1 when not set)")
    return AuditConfig(None if floor is None else float(floor), equivalent, float(constant_floor),
                       float(lookup_floor))
