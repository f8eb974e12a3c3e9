"""Where a course keeps its files, and its settings from course.toml.

The layout is fixed so every command agrees on it:
  solutions/<id>/<notebook>              reference notebook (hidden)
  assignments/<id>/<notebook>            student notebook (generated)
  autograder/assignments/<id>/cases.toml cases, public and hidden
  autograder/assignments/<id>/expected.json  expected values (generated)
  public_rubric.xlsx                     public rubric (generated)
"""

import tomllib
from dataclasses import dataclass
from pathlib import Path


class CourseError(Exception):
    """The course folder is missing something a command needs."""


@dataclass(frozen=True)
class Course:
    root: Path
    name: str
    repository: str          # GitHub URL; the Colab badges point here
    branch: str
    points_per_assignment: float

    @property
    def cases_dir(self):
        return self.root / "autograder" / "assignments"

    def assignment_ids(self):
        return sorted(p.parent.name for p in self.cases_dir.glob("*/cases.toml"))

    def colab_url(self, relative_path):
        owner_repo = self.repository.removeprefix("https://github.com/").rstrip("/")
        return f"https://colab.research.google.com/github/{owner_repo}/blob/{self.branch}/{relative_path}"


def find_root(start=None):
    """The nearest folder at or above `start` holding course.toml."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "course.toml").is_file():
            return folder
    raise CourseError(f"no course.toml in {here} or any folder above it; "
                      "run the command inside the course repository or pass --course")


def load_course(root=None):
    root = Path(root).resolve() if root else find_root()
    path = root / "course.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))["course"]
        return Course(root=root, name=data["name"], repository=data["repository"],
                      branch=data.get("branch", "main"),
                      points_per_assignment=float(data.get("points_per_assignment", 5)))
    except FileNotFoundError:
        raise CourseError(f"{path} does not exist") from None
    except (tomllib.TOMLDecodeError, KeyError) as error:
        raise CourseError(f"{path}: {error}") from None
