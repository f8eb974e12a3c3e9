"""What students and the teaching team read: one feedback page per student, and the class report.

They read the gradebook through gradebook/read.py.

  view.py        the student-facing view of one hand-in (the only place hidden cases are filtered)
  pages.py       the feedback pages of a class, rendered and leak-checked
  leak_guard.py  refuse files that hold solution code or hidden cases
  plots.py       matplotlib (Agg) charts as embedded PNG data URIs
  report.py      the class report for the teaching team
  write.py       write files only when their bytes change; deterministic zips
"""
