"""Worked examples of §1.1 run with the student's code: the top-10 table of figure 1.4 and the
greedy loop of figure 1.2, on the kata's offline bigram model instead of the book's hosted LLM."""

from grader.checks.test_s1_01_next_token import CORPUS, N_GREEDY, PROMPT
from grader.listings import listing

# Figures 1.2 and 1.4 are images, not printed program output; these lines say what they show.
FIGURE_1_4 = """[figure 1.4, from a hosted LLM] the top 10 next tokens after "After years of hard work, your effort will take you": "to" 90.7%, the other nine less likely"""
FIGURE_1_2 = (
    """[figure 1.2] predict the next token, append it to the input, predict again ("The cat sat on the" -> "mat")"""
)


@listing("1.1/top-k", book=FIGURE_1_4, errata=["E-1.1-a", "E-1.1-b"])
def listing_top_k(sub, show):
    model = sub.new("BigramModel", CORPUS)
    vocab = model.attr("vocab")
    ids = model.encode(PROMPT)
    probs, top = sub.top_k(model(ids), 10)
    show(f"Top 10 next tokens after {PROMPT!r} (bigram model of the kata's corpus):")
    for rank, (p, i) in enumerate(zip(probs.tolist(), top.tolist()), 1):
        show(f"{rank:>2}. {vocab[i]!r:<12} {100 * p:5.1f}%")


@listing("1.1/generate", book=FIGURE_1_2)
def listing_generate(sub, show):
    model = sub.new("BigramModel", CORPUS)
    ids = model.encode(PROMPT)
    out = sub.greedy_generate(model, ids, N_GREEDY)
    for step in range(1, N_GREEDY + 1):
        show(f"step {step}: {model.decode(out[: len(ids) + step])}")
