"""The instructor's side: grading a class (batch/, with the gradebook formats in formats/), the
student bundle (`kata release`, release/) and the exports to other platforms (exports/: Gradescope,
nbgrader). May import every part below the command line; nothing but cli.py imports it."""
