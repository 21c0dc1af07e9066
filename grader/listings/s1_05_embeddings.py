"""§1.5 worked example run with the student's code: one-hot vectors vs a dense lookup table."""

import torch

from grader.listings import listing

CAT, DOG, QUANTUM = 3, 17, 42


@listing(
    "1.5/one-hot",
    book="""\
vocabulary: 50,000 tokens; "cat" = 50,000 entries, all 0 except position 3
"cat"·"dog" and "cat"·"quantum": equally orthogonal""",
    errata=["E-1.5-a", "E-1.5-b"],
)
def one_hot_cat(sub, show):
    cat = sub.one_hot(torch.tensor(CAT), 50_000)
    show(
        "one-hot 'cat' (id 3): length",
        cat.shape[0],
        "| ones:",
        int((cat == 1).sum()),
        "| zeros:",
        int((cat == 0).sum()),
        "| the 1 at index",
        int(cat.argmax()),
    )
    vectors = sub.one_hot(torch.tensor([CAT, DOG, QUANTUM]), 50_000)
    show("cosine similarities of cat, dog, quantum (one-hot):")
    show(sub.cosine_similarity_matrix(vectors))
    show("distances:")
    show(torch.cdist(vectors, vectors))
    weight = torch.randn(50, 4, generator=torch.Generator().manual_seed(0))
    ids = torch.tensor([CAT, DOG, QUANTUM])
    show("dense rows looked up in a (50, 4) table:")
    show(sub.embedding_lookup(ids, weight))
    show("the same rows as one-hot vectors @ weight:")
    show(sub.one_hot_embedding(ids, weight))
    show("cosine similarities of the dense rows:")
    show(sub.cosine_similarity_matrix(sub.embedding_lookup(ids, weight)))
