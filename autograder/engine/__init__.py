"""The engine: runs untrusted hand-ins in a sandbox and brings back plain outcomes.

zygote.py (a warm process) forks one worker.py per hand-in; isolation.py shuts
each worker in before any student code runs; sandbox.py is the grader's half
(starting the zygote, talking to workers, enforcing time limits); runner.py
runs a notebook's cells and its cases; replies.py checks every reply.
Nothing here knows expected values or points: that is grade/'s job.
"""
