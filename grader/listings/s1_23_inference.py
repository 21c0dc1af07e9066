"""§1.23 listings 1.41-1.43, run with the student's save, load and predict on the kata's trained TinyBERT."""

from grader.checking import fixtures
from grader.checks.test_s1_23_inference import BOOK_TEXTS
from grader.listings import listing

EXERCISE = "s1_23_inference"
PATH = "bert_from_scratch_imdb/model.pt"


def _trained(sub):
    f = fixtures.load(EXERCISE)
    model = sub.new("TinyBERT")
    model.load_state_dict({k[2:]: v for k, v in f.items() if k.startswith("w/")})
    return model


@listing("1.41", book="""Model saved successfully!""")
def listing_1_41(sub, show):
    """Save the trained weights, the configuration and the tokenizer information."""
    sub.save_checkpoint(_trained(sub), PATH)
    show("Model saved successfully!", f"({PATH}, inside the sandbox's private folder)")


@listing("1.42", book="""Model loaded successfully!""")
def listing_1_42(sub, show):
    """Save, then load into a freshly initialised model."""
    sub.save_checkpoint(_trained(sub), PATH)
    info = sub.load_checkpoint(sub.new("TinyBERT"), PATH)
    show("Model loaded successfully!", "tokenizer:", info)


@listing(
    "1.43",
    book="""Prediction: Positive
Prediction: Negative""",
    errata=["E-1.23-r", "E-1.23-s"],
)
def listing_1_43(sub, show):
    """Predict the book's two reviews with a TinyBERT trained by the kata on synthetic reviews."""
    model = _trained(sub)
    for text in BOOK_TEXTS:
        show("Prediction:", sub.predict_sentiment(model, text))
