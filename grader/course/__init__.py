"""The course and what every part shares: the course manifest (`course.toml`, manifest.py), the
message catalog and its checks (messages.py, i18n.py), the forbidden-API scan (scan.py,
scan_escapes.py), student text made safe to show (safe_text.py), files found without following a
link (files.py) and every file written atomically (atomic.py).
Imports nothing of the grader outside this folder; every other part may import it."""
