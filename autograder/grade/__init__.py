"""Grade hand-ins, outside the sandbox: what the engine brought back, judged and scored.

  handin.py     one hand-in: read its cells, run them and its cases in the engine, score every case
  scoring.py    a call's outcome against the expected value: points and a message
  baselines.py  the timed baselines of speed cases, run in a clean worker
  pool.py       many hand-ins at once, one per grading slot
  class_run.py  a whole class: intake, sandbox, pool, gradebook, grades.csv (`grade_class`)
  explain.py    statuses and errors in plain words (what may be said of a hidden case)
"""
