"""§1.23 listings 1.39-1.40, run with the student's evaluation code on the kata's trained TinyBERT."""

from grader.checking import fixtures
from grader.listings import listing

EXERCISE = "s1_23_evaluation"


def _model_and_loader(sub):
    f = fixtures.load(EXERCISE)
    model = sub.new("TinyBERT")
    model.load_state_dict({k[2:]: v for k, v in f.items() if k.startswith("w/")})
    return model, sub.make_loader(f["t_ids"], f["t_mask"], f["t_labels"], batch_size=16)


@listing("1.39", book="""Test Accuracy: 0.8074""", errata=["E-1.23-p", "E-1.23-t"])
def listing_1_39(sub, show):
    """Accuracy of a TinyBERT trained by the kata on synthetic sequences, on 200 held-out ones."""
    model, loader = _model_and_loader(sub)
    show("Test Accuracy:", sub.evaluate(model, loader))


@listing(
    "1.40",
    book="""              precision    recall  f1-score   support

    Negative       0.81      0.80      0.81     12500
    Positive       0.81      0.81      0.81     12500

    accuracy                           0.81     25000
   macro avg       0.81      0.81      0.81     25000
weighted avg       0.81      0.81      0.81     25000""",
    errata=["E-1.23-q"],
)
def listing_1_40(sub, show):
    """The classification report of the same model, then of counts that give the book's report."""
    model, loader = _model_and_loader(sub)
    labels, preds = sub.collect_predictions(model, loader)
    show(sub.report(labels, preds))
    show("confusion matrix [[TN, FP], [FN, TP]]:", sub.confusion(labels, preds))
    show()
    show("The book's model is not available; 10,050 true negatives and 10,135 true positives of 12,500 each")
    show("(accuracy 20,185 / 25,000 = 0.8074, as listing 1.39 prints) give its report:")
    labels = [0] * 12500 + [1] * 12500
    preds = [0] * 10050 + [1] * 2450 + [0] * 2365 + [1] * 10135
    show(sub.report(labels, preds))
