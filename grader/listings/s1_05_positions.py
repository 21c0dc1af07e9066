"""§1.5 worked examples run with the student's code: integer, binary and sinusoidal positions."""

import torch

from grader.listings import figure, listing
from grader.listings.plots import Curves, Heatmap, Panel, Series, check_matrix, label


@listing(
    "1.5/integer",
    book="""\
position 300, 8 dimensions: [300, 300, 300, 300, 300, 300, 300, 300]
position 500: [500, 500, …] added to [0.23, -0.15, 0.08, …]""",
    errata=["E-1.5-c", "E-1.5-d"],
)
def integer_positions(sub, show):
    pe = sub.integer_position_encoding(501, 8)
    show("row 300:", pe[300])
    tokens = torch.tensor([0.23, -0.15, 0.08])
    show("[0.23, -0.15, 0.08] + position 500:", tokens + sub.integer_position_encoding(501, 3)[500])


@listing(
    "1.5/binary",
    book="""\
64 = 01000000 -> [0, 1, 0, 0, 0, 0, 0, 0]
65 -> [0, 1, 0, 0, 0, 0, 0, 1]
66 -> [0, 1, 0, 0, 0, 0, 1, 0]
67 -> [0, 1, 0, 0, 0, 0, 1, 1]
68 -> [0, 1, 0, 0, 0, 1, 0, 0]
i = 8: most significant bit, i = 1: least significant bit""",
    errata=["E-1.5-e", "E-1.5-f", "E-1.5-g", "E-1.5-h", "E-1.5-i"],
)
def binary_positions(sub, show):
    positions = torch.arange(64, 76)
    bits = sub.binary_position_encoding(positions, 8)
    show("position  i=8 ... i=1")
    for p, row in zip(positions.tolist(), bits.int().tolist()):
        show(f"{p:8d}  {row}")


@listing(
    "1.5/sinusoidal",
    book="""\
d_model = 768, context length = 1024; i = 0: sin(pos/1), cos(pos/1); denominator 10000^(2i/768)
i = 1: very fast, between about -1 and 1
i = 50: period of about 20-30 positions
i = 150: 2-3 full cycles over the 1024 positions; sin and cos 90 degrees apart
i = 250: hardly one cycle; cos stays near 1, sin near 0""",
    errata=[
        "E-1.5-j",
        "E-1.5-k",
        "E-1.5-l",
        "E-1.5-m",
        "E-1.5-n",
        "E-1.5-o",
        "E-1.5-p",
        "E-1.5-q",
        "E-1.5-r",
        "E-1.5-s",
        "E-1.5-t",
    ],
)
def sinusoidal_positions(sub, show):
    pe = sub.sinusoidal_position_encoding(1024, 768)
    show("shape:", tuple(pe.shape), "| min:", float(pe.min()), "| max:", float(pe.max()))
    show("position 1, first 8 columns:", pe[1, :8])
    show("pair i  wavelength (positions)  cycles in 1024  sin, cos at position 1023")
    for i in (0, 1, 50, 150, 250):
        w = float(sub.wavelength(i, 768))
        show(f"{i:6d}  {w:24.4f}  {1024 / w:14.4f}  {float(pe[1023, 2 * i]):+.4f}, {float(pe[1023, 2 * i + 1]):+.4f}")
    dist = torch.cdist(pe.double(), pe.double())
    dist.fill_diagonal_(float("inf"))
    show("smallest distance between two positions' vectors:", round(float(dist.min()), 4))


@figure("1.5/sinusoidal")
def sinusoidal_figures(sub):
    """The whole encoding as a heatmap, then the sin/cos curves of the pairs the book describes."""
    pe = check_matrix("sinusoidal_position_encoding(1024, 768)", sub.sinusoidal_position_encoding(1024, 768), 1024, 768)
    heatmap = Heatmap(
        "pe-heatmap",
        label("plot_pe_heatmap"),
        pe,
        xlabel=label("plot_dimension"),
        ylabel=label("plot_position"),
        cmap="RdBu_r",
    )
    panels = [
        Panel(
            label("plot_pe_pair", i=i, sin=2 * i, cos=2 * i + 1),
            [
                Series(f"sin (dim {2 * i})", pe[:, 2 * i], "green"),
                Series(f"cos (dim {2 * i + 1})", pe[:, 2 * i + 1], "blue"),
            ],
        )
        for i in (1, 50, 150, 250)
    ]  # the book's "不同维度的正弦模式": i = 1, 50, 150, 250
    curves = Curves(
        "pe-curves", label("plot_pe_curves"), list(range(1024)), panels, xlabel=label("plot_position"), ylabel="PE"
    )
    return [heatmap, curves]
