"""The model every stage reads: the course and its settings, assignments and cases, limits, lateness.

  course.py       course.toml: the repository, the LMS, deadlines and late policies, default limits
  course_file.py  course.toml as `autograder init` writes it
  assignment.py   an assignment as data: its reference notebook and cases.toml
  calls.py        a case's call, parsed from Python text
  call_graph.py   which tested function calls which (feedback's "fix `get_n` first")
  limits.py       time limits that follow the reference's own timing
  lateness.py     late or not, by how much, and what it costs
  lms_columns.py  grade columns of a Canvas gradebook export
  render.py       Jinja2 templates (templates/) to HTML and Markdown, safe for hand-in text
  csv_cells.py, literal.py, folder_names.py, errors.py: small helpers every stage shares
"""
