"""The Transformer kata: course manifest, single-source exercises and a sandboxed grader.

One folder per part, lowest first; a part imports only the parts below it (tests/test_layers.py):
course -> capstone | worker -> checking -> checks -> listings -> reports | authoring -> student
-> instructor -> cli.py. Parts joined by | are on one level and never import each other.
"""

__version__ = "0.1.0"
