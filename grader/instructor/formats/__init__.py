"""Gradebook formats, each made from report documents (report.to_dict's JSON, schema 1, plus the
"student" block a batch run adds; see grader/instructor/batch/store.py). Nothing here grades or reads a
submission, so every format can be written again from stored reports.

    exercism.py    Exercism test-runner results.json, version 3
    junit.py       JUnit XML
    csvbook.py     the CSV gradebook: one row per student, one column per exercise
    summary.py     the class summary: score histogram, per-check failure rate (PNG + Markdown)
The per-student HTML page is grader/reports/report_html.py's; Gradescope's results.json is
grader/instructor/exports/gradescope.py's (the same as `kata export gradescope`'s autograder writes).
"""
