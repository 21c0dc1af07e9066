"""`kata run LISTING --plot`: the listings' figures as PNG files, drawn from the student's code."""

import re
from pathlib import Path

from PIL import Image

from tests.conftest import SOLUTIONS, kata, make_submission, solution_with


def _written(stdout: str) -> list[Path]:
    return [Path(p) for p in re.findall(r"^figure: (.+\.png)$", stdout, re.M)]


def _png(path: Path) -> Image.Image:
    assert path.is_file(), f"{path} was printed but not written"
    img = Image.open(path)
    assert img.format == "PNG"
    return img.convert("RGB")


def test_sinusoidal_heatmap_and_the_books_dimension_pairs(tmp_path):
    proc = kata("run", "1.5/sinusoidal", "--path", str(SOLUTIONS), "--plot", "--out", str(tmp_path / "figs"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    paths = _written(proc.stdout)
    assert [p.name for p in paths] == ["listing-1.5-sinusoidal-pe-heatmap.png", "listing-1.5-sinusoidal-pe-curves.png"]
    heatmap, curves = (_png(p) for p in paths)
    assert heatmap.width >= 800 and len(heatmap.getcolors(1 << 24)) > 1000  # a real 1024 x 768 picture
    # the curves figure: four panels (i = 1, 50, 150, 250), sin in green and cos in blue as the book says
    colors = {rgb for _, rgb in curves.getcolors(1 << 24)}
    assert (0, 128, 0) in colors and (0, 0, 255) in colors


def test_attention_heatmap_comes_from_the_students_code(tmp_path):
    right = kata("run", "1.6", "--path", str(SOLUTIONS), "--plot", "--out", str(tmp_path / "right"))
    wrong_sub = make_submission(
        tmp_path,
        {
            "s1_12_scaled_attention": solution_with(
                "s1_12_scaled_attention",
                "torch.softmax(scale_scores(scores, d_k), dim=-1)",
                "torch.softmax(scale_scores(scores, d_k), dim=0)",
            )
        },
    )
    wrong = kata("run", "1.6", "--path", str(wrong_sub), "--plot", "--out", str(tmp_path / "wrong"))
    assert right.returncode == 0 and wrong.returncode == 0, right.stderr + wrong.stderr
    [a], [b] = _written(right.stdout), _written(wrong.stdout)
    assert a.name == b.name == "listing-1.6-attention-weights.png"
    assert _png(a).size == _png(b).size
    assert a.read_bytes() != b.read_bytes()  # softmax over the wrong dimension shows in the picture


def test_causal_weights_and_bpe_merge_table(tmp_path):
    for listing, name in (
        ("1.12", "listing-1.12-causal-weights.png"),
        ("1.4/merges", "listing-1.4-merges-bpe-merges.png"),
    ):
        proc = kata("run", listing, "--path", str(SOLUTIONS), "--plot", "--out", str(tmp_path))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        [path] = _written(proc.stdout)
        assert path.name == name
        img = _png(path)
        assert len(img.getcolors(1 << 24)) > 50


def test_plot_of_unfinished_code_says_why_and_writes_nothing(tmp_path):
    proc = kata("run", "1.12", "--plot", "--out", str(tmp_path / "figs"))  # exercises/: the stubs
    assert proc.returncode == 1
    assert "No figure for listing 1.12: not implemented yet" in proc.stdout.replace("\n", " ")
    assert not (tmp_path / "figs").exists()


def test_plot_of_a_listing_without_figures_names_those_with(tmp_path):
    proc = kata("run", "1.7", "--path", str(SOLUTIONS), "--plot")
    assert proc.returncode == 2
    assert "listing 1.7 has no figure" in proc.stderr and "1.5/sinusoidal" in proc.stderr and "1.6" in proc.stderr
