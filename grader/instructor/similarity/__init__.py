"""`kata similarity`: which students' code is suspiciously alike, exercise by exercise.

    collect.py      every submission's exercise files, read as grading reads them (never run)
    fingerprint.py  copydetect's winnowing fingerprints of each student's own code (the stub removed)
    run.py          every pair compared per exercise; the default threshold
    outputs.py      similarity.csv, similarity.md, similarity.html; the flagged rows for summary.md
    commands.py     the command's body
"""
