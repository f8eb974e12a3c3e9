"""What graders hand back: per-student feedback, the class report, releases.

They read the gradebook through autograder/gradebook/read.py.

One module, one job:
  names.py              safe folder/file names for students
  explain.py            statuses and errors in plain words; tracebacks kept short
  view.py               the student-facing view of one hand-in (the only place hidden cases are filtered)
  render.py             Jinja2 templates (autograder/templates) to HTML and Markdown
  write.py              write files only when their bytes change; deterministic zips
  pages.py              the feedback pages of a class, rendered and leak-checked
  plots.py              matplotlib (Agg) charts as embedded PNG data URIs
  report.py             the class report for the teaching team
  release_lms.py        feedback files, zip and grade CSVs for an LMS
  release_classroom.py  a `feedback` branch in each GitHub Classroom clone
  release_students.py   the student bundle (assignments, public rubric, README)
  leak_guard.py         refuse files that hold solution code or hidden cases
  cli.py                the `feedback`, `report` and `release` commands
"""
