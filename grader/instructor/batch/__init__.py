"""Grading a whole class: `kata grade DIR --out OUT [--jobs N]`, and `kata gradebook OUT`.

    discover.py  the submissions in a class folder, their student names and fingerprints
    store.py     the output folder: one record per student, written atomically; the run's metadata
    child.py     what one grading process does: open one submission, grade it in its own sandbox
    run.py       the scheduler: N grading processes at a time, resume, progress bar, summary

Each submission is graded in a fresh process forked from a `multiprocessing` fork server that
imported torch, pytest and the checks' libraries once (so a submission costs its sandbox and its
checks, not a new interpreter), and each such process starts its own sandboxed worker for the
submission, exactly as `kata grade PATH` does. The record `OUT/students/<name>/report.json` is
written by the scheduler alone, atomically, when its process reports back; it is the only thing
a rerun trusts, so a run killed at any moment resumes without losing or duplicating a result.
Every other file in OUT is derived from the records (grader/instructor/formats/) and can be written again
with `kata gradebook OUT`.
"""
