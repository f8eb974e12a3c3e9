"""Export an assignment to other grading engines: otter-grader, nbgrader, Gradescope.

Everything here is generic: an exporter reads an Assignment (cases.toml), its
expected values (expected.json) and its reference notebook, and writes what
the other tool needs.  The same cases, points and comparison rules go
everywhere: the tests that the other tools run call `autograder_checks.check`,
a stand-alone module made of autograder/runtime.py plus a small case runner
(see checks.py), so a value is judged by exactly the rules our grader uses.
"""
