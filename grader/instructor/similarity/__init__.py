"""`kata similarity`: which students' code is suspiciously alike, exercise by exercise.

collect.py      every submission's exercise files, read as grading reads them (never run)
canonical.py    the form compared: comments, docstrings and no-op statements gone, keyword
                arguments sorted (a `pass` after every line changes nothing); too long or too
                deeply nested: not compared, with the reason
fingerprint.py  copydetect's winnowing fingerprints of each student's own code (the stub removed)
run.py          every pair compared per exercise (the default threshold is here: every
                command's help reads it without loading numpy and copydetect); CLUSTER_MIN or more
                students with the same file (as compared and tokenised: names, strings, comments
                and layout aside; the untouched stub too) are one cluster, one line, its first
                student standing for all in the pairs; flagged pairs ranked by how many
                exercises agree
outputs.py      similarity.csv, similarity.md, similarity.html; the flagged rows for summary.md
commands.py     the command's body
"""

DEFAULT_THRESHOLD = 0.5  # planted copies scored 0.92-1.0, independent solutions 0 (tests/test_similarity.py)
MIN_TOKENS = 40  # fewer matched tokens never flag a pair: one line of the obvious answer is not a copy
CLUSTER_MIN = 3  # this many or more students with the same code are one cluster, not every pair of them
