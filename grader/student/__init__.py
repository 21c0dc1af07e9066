"""The student's commands (commands.py): `kata list`, `kata check`, `kata reset`, `kata hint`,
`kata watch`, `kata run`, `kata notebook` and `kata submit` (submit.py).

They import the parts below (course, worker, checking, listings, reports, authoring's stubs);
only instructor/ and cli.py import them. Per-student state lives in small JSON files under the
project's `.kata/`.
"""
