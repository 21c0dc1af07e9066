"""The §1.23 capstone: `kata train` (training/), its data layer (data.py: IMDb, the offline
corpus, the token-id cache), GPT-2's ranks (gpt2.py) and `kata assets` (assets.py).
Imports only grader.course; the checks and listings of §1.4 and §1.23 import data.py and gpt2.py."""
