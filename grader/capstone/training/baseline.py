"""The class balance behind a reported accuracy: is the model doing more than answering the
majority class?

On a split that is 70% positive, a model that answers "positive" for every review scores 70%:
a number that looks like learning and is none. `kata train` reports the test accuracy with the
split's majority share beside it whenever the two are within a point of each other, or the
model predicts one class for everything (metrics.json keeps the same facts under test.majority).
"""

from __future__ import annotations

from collections import Counter

from ...course.messages import t

NAMES = ("negative", "positive")  # label 0 and label 1, as the classification report names them
MARGIN = 0.01  # an accuracy within this of the majority share (one point) is flagged


def majority(labels: list[int], preds: list[int], accuracy: float, names=NAMES) -> dict:
    """The facts: the majority class of `labels` and its share, the classes the model predicted
    (and how often it predicted each), and `flag`: whether the accuracy says nothing beyond them."""
    counts = Counter(labels)
    top, n = max(sorted(counts.items()), key=lambda kv: kv[1]) if counts else (0, 0)
    share = n / len(labels) if labels else 0.0
    said = Counter(preds)
    predicted = sorted(said)
    most, most_n = max(sorted(said.items()), key=lambda kv: kv[1]) if said else (top, 0)
    return {
        "class": names[top],
        "share": share,
        "accuracy": accuracy,
        "predicted_classes": [names[p] for p in predicted],
        "predicted_counts": {names[p]: said[p] for p in predicted},
        "most_predicted": names[most],
        "most_predicted_count": most_n,
        "n": len(preds),
        "flag": len(predicted) == 1 or abs(accuracy - share) <= MARGIN,
    }


def note(facts: dict, lang: str | None = None) -> str:
    """What to say about the test accuracy's `facts` (from `majority`); "" when it needs no remark.
    It names the class the model actually answered most, with how often, never the majority class
    in its place."""
    if not facts["flag"]:
        return ""
    fields = dict(acc=f"{100 * facts['accuracy']:.1f}", share=f"{100 * facts['share']:.1f}", majority=facts["class"])
    only = facts["predicted_classes"]
    if len(only) == 1 and only[0] == facts["class"]:
        return t("train_majority_only", lang=lang, **fields)
    if len(only) == 1:
        return t("train_one_class_only", lang=lang, only=only[0], **fields)
    return t(
        "train_majority_close",
        lang=lang,
        most=facts["most_predicted"],
        k=facts["most_predicted_count"],
        n=facts["n"],
        **fields,
    )
