"""Listings 1.2–1.4, re-run with the student's code."""

from grader.checking import book
from grader.listings import listing


@listing(
    "1.2",
    book="""\
tensor([0.4300, 0.5600, 0.4300, 0.5600, 0.6900, 0.2100, 0.5600, 0.2100])
8
4
""",
    errata=["E-1.10-a", "E-1.10-b", "E-1.10-c", "E-1.10-d"],
)
def listing_1_2(sub, show):
    """Pick one token's embedding and set the dimensions."""
    inputs = book.inputs()
    x_2 = inputs[1]  # "next"
    show(x_2)
    show(inputs.shape[1])
    show(4)


@listing(
    "1.3",
    book="""\
W_query:
Parameter containing:
tensor([[ 0.2961, 0.5166, -0.0973, 0.2340],
[ 0.2517, 0.6886, 0.0451, -0.4128],
[ 0.0740, 0.8665, 0.3210, 0.0185],
[ 0.1366, 0.1025, -0.2314, 0.5642],
[ 0.1841, 0.7264, -0.1035, 0.3399],
[ 0.3153, 0.6871, 0.2478, -0.1520],
[ 0.0756, 0.1966, 0.5142, 0.0813],
[ 0.3164, 0.4017, -0.0879, 0.2904]])
W_key:
Parameter containing:
tensor([[ 0.1186, 0.8274, 0.1040, -0.3055],
[ 0.3821, 0.6605, -0.2103, 0.1428],
[ 0.8536, 0.5932, -0.1449, 0.3170],
[ 0.6367, 0.9826, 0.2553, -0.0872],
[ 0.2745, 0.6584, 0.0342, 0.5051],
[ 0.2775, 0.8573, -0.2984, 0.1907],
[ 0.8993, 0.0390, 0.1206, 0.2843],
[ 0.9268, 0.7388, -0.0721, 0.3419]])
W_value:
Parameter containing:
tensor([[ 0.7179, 0.7058, -0.1630, 0.3310],
[ 0.9156, 0.4340, 0.0982, -0.2753],
[ 0.0772, 0.3565, 0.2056, 0.1468],
[ 0.1479, 0.5331, -0.0925, 0.2391],
[ 0.4066, 0.2318, 0.0194, 0.1844],
[ 0.4545, 0.9737, -0.3086, -0.0417],
[ 0.4606, 0.5159, 0.1274, 0.0219],
[ 0.4220, 0.5786, -0.0853, 0.3640]])
""",
    errata=["E-1.11-b", "E-1.11-c", "E-1.11-d"],
)
def listing_1_3(sub, show):
    """Initialise the query, key and value weight matrices."""
    W_query, W_key, W_value = sub.init_qkv_weights(8, 4, seed=123)
    for name, w in (("W_query", W_query), ("\nW_key", W_key), ("\nW_value", W_value)):
        show(f"{name}:")
        show(w)


@listing(
    "1.4",
    book="""\
queries.shape: torch.Size([5, 4])
keys.shape : torch.Size([5, 4])
values.shape : torch.Size([5, 4])
queries:
tensor([[ 0.8840, 2.0469, 0.3419, 0.5755],
[ 0.8723, 2.0443, 0.3241, 0.3917],
[ 0.9738, 1.9925, 0.3154, 0.7673],
[ 1.1051, 2.1175, 0.2772, 0.9102],
[ 0.9692, 2.5180, 0.2741, 0.8069]])
keys:
tensor([[ 2.2381, 2.7132, 0.0507, 0.8830],
[ 2.1564, 2.7927, -0.0064, 0.8684],
[ 2.6705, 2.7739, 0.0891, 1.0862],
[ 2.4087, 3.1074, 0.0683, 1.0651],
[ 2.6735, 3.1745, 0.0538, 1.2434]])
values:
tensor([[ 2.1213, 2.5079, -0.2830, 0.7693],
[ 2.0476, 2.1981, -0.2301, 0.4927],
[ 2.1971, 2.4733, -0.2806, 0.9121],
[ 2.4207, 2.5415, -0.3020, 0.9874],
[ 2.2625, 2.5902, -0.2714, 0.9625]])
""",
    errata=["E-1.11-f", "E-1.11-g", "E-1.11-h", "E-1.11-i"],
)
def listing_1_4(sub, show):
    """Compute query, key and value vectors."""
    (W_query, W_key, W_value), _ = book.qkv()
    queries, keys, values = sub.project_qkv(book.inputs(), W_query, W_key, W_value)
    show("queries.shape:", queries.shape)
    show("keys.shape :", keys.shape)
    show("values.shape :", values.shape)
    show("\nqueries:")
    show(queries)
    show("\nkeys:")
    show(keys)
    show("\nvalues:")
    show(values)
