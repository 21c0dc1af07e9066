"""The student's commands: `kata list`, `kata check`, `kata reset`, `kata hint`, `kata watch`.

They sit on top of the grader (course, submission, checking, report) like cli.py; nothing
below imports them. Per-student state lives in small JSON files under the project's `.kata/`.
"""
