"""`kata run LISTING`: the book's listings re-run with the student's code, beside the book."""

from grader.course import manifest as course
from grader import listings
from tests.conftest import ROOT, SOLUTIONS, kata


def test_every_code_listing_can_be_run():
    c = course.load(ROOT)
    registry = listings.load(c)
    missing = [lst.id for lst in c.listings if lst.id not in registry]
    assert not missing, f"listings without a runner in grader/listings/: {missing}"
    for lst in registry.values():  # the book prints nothing for an exercise that goes beyond it
        if c.get(lst.exercise).beyond_book:
            assert not lst.book, f"listing {lst.id} goes beyond the book but gives a printed book output"
        else:
            assert lst.book, f"listing {lst.id} has no printed book output"


def test_run_with_the_book_beside_and_errata():
    proc = kata("run", "1.6", "--path", str(SOLUTIONS), "--book")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Attention weights matrix:" in out and "the book prints" in out
    assert "0.2133" in out  # the true first weight (torch 2.13.0)
    assert "0.1331" in out  # what the book prints instead
    assert "E-1.12-d" in out and "not reproducible" in out


def test_run_a_worked_example():
    proc = kata("run", "1.11/matmul", "--path", str(SOLUTIONS))
    assert proc.returncode == 0 and "(1, 1) = 27" in proc.stdout and "(2, 1) = 61" in proc.stdout


def test_run_with_an_unfinished_exercise_says_so():
    proc = kata("run", "1.5")  # exercises/ holds the stubs in the repository
    assert proc.returncode == 1
    assert "not implemented yet" in proc.stdout


def test_unknown_listing_suggests_the_nearest():
    proc = kata("run", "1.11/softmx")
    assert proc.returncode == 2 and "Did you mean 1.11/softmax" in proc.stderr


def test_a_section_runs_every_listing_of_its_exercises():
    # issue 28: `kata run 1.11` runs listing 1.11, the causal mask of §1.13; §1.11 is asked for with §
    proc = kata("run", "§1.11", "--path", str(SOLUTIONS))
    assert proc.returncode == 0, proc.stderr
    titles = [line for line in proc.stdout.splitlines() if line.startswith("Listing ")]
    assert [t.split(" (")[0] for t in titles] == [
        "Listing 1.11/matmul",
        "Listing 1.5",
        "Listing 1.11/normalize",
        "Listing 1.11/softmax",
    ], titles
    assert all("§1.11)" in t for t in titles), titles


def test_a_listing_whose_number_is_also_a_section_says_where_it_belongs():
    proc = kata("run", "1.11", "--path", str(SOLUTIONS))
    assert proc.returncode == 0
    assert "Listing 1.11 is in §1.13; for the listings of §1.11, run `kata run §1.11`." in proc.stderr
    assert "Listing 1.11 (s1_13_causal_mask, §1.13)" in proc.stdout
    assert "Listing 1.6 is in" not in kata("run", "1.6", "--path", str(SOLUTIONS)).stderr  # §1.6 has no listing


def test_a_section_without_listings_names_those_with():
    proc = kata("run", "§9.9")
    assert proc.returncode == 2 and "no listing belongs to §9.9" in proc.stderr and "§1.23" in proc.stderr
