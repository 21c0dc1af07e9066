"""`python -m grader.capstone.data ...` (cli.py)."""

from .cli import main

raise SystemExit(main())
