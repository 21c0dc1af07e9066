"""The course exported to other grading platforms: `kata export gradescope` (gradescope.py, also
what its run_autograder calls) and `kata export nbgrader` (export_nbgrader.py; nbgrader_cell.py and
nbgrader_autograde.py grade the notebooks). Nothing is imported here: a notebook's kernel imports
grader.instructor.exports.nbgrader_cell by name."""
