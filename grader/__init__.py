"""The Transformer kata: course manifest, single-source exercises and a sandboxed grader.

Layers, each importing only those before it:
course -> submission -> worker -> checking (checks) -> report; `cli` sits on top.
"""
__version__ = "0.1.0"
