"""Code that runs inside the sandbox. It is copied into the grading directory as the package
`kata_worker`; it must import nothing from `grader` (which the sandbox cannot see)."""
