"""The course's students: the roster an LMS exports, extensions, accommodations and adjustments (grades/course.db).

lms_files.py reads a class list as each LMS exports it, store.py keeps the
records, match.py finds a hand-in's student on the roster.
"""
