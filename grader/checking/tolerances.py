"""Every numeric tolerance of the course, in one table. Checks name an entry, never a number."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tol:
    atol: float
    rtol: float
    note: str

    def __str__(self) -> str:
        if (
            self.atol == 0 and self.rtol == 0
        ):  # in the reader's language, as the message around it ("容差 exact" was not)
            from ..course.messages import pick

            return pick("exact", "0（须完全相等）")
        return f"atol={self.atol:g}, rtol={self.rtol:g}"


TOLERANCES: dict[str, Tol] = {
    "exact": Tol(0.0, 0.0, "ids, masks, shapes, values copied without arithmetic"),
    "printed4": Tol(5.01e-5, 0.0, "a number the book prints to 4 decimals"),
    "printed3": Tol(5.01e-4, 0.0, "a number the book prints to 3 decimals"),
    "printed2": Tol(5.01e-3, 0.0, "a number the book prints to 2 decimals"),
    "matmul": Tol(1e-5, 1e-5, "float32 products summed in another order"),
    "softmax": Tol(1e-6, 1e-5, "softmax and normalisation, float32"),
    "attention": Tol(1e-5, 1e-5, "scores, weights and context vectors, float32"),
    "positions": Tol(1e-4, 1e-4, "sin/cos of float32 angles up to ~1000 rad"),
    "norm": Tol(1e-5, 1e-5, "layer norm, FFN"),
    "encoder": Tol(1e-4, 1e-4, "a whole encoder stack"),
}


def get(name: str) -> Tol:
    try:
        return TOLERANCES[name]
    except KeyError:
        raise KeyError(f"unknown tolerance {name!r}; known: {', '.join(TOLERANCES)}") from None
