"""`kata release`: the student bundle (release.py), its check modules cut down to the public
checks (release_source.py) and the values those checks and the listings read, recorded on the
solutions (release_record.py). This folder itself never ships in the bundle (release.INSTRUCTOR_ONLY)."""
