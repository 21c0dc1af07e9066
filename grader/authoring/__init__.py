"""The course's author tools: `kata stubs` (stubs.py: exercises/ from solutions/), `kata fixtures`
(fixturegen.py) and `kata verify` (verify.py, with answers.py: no stub gives an answer away).
Imports course, worker and checking; the student's and the instructor's parts import stubs.py."""
