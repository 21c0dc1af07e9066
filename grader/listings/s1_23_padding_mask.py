"""§1.23 listing 1.27 run with the student's code (`kata run 1.27`)."""

import torch

from grader.listings import listing

PAD, CLS, SEP = 50257, 50258, 50259


@listing("1.27", book="(the book prints nothing for this listing)", errata=["E-1.23-g"])
def listing_1_27(sub, show):
    """create_attention_mask(input_ids) = (input_ids != PAD_ID).long()"""
    # "This movie is slow, but the acting is excellent." and "Great film!" with GPT-2's ids, max_len 12.
    ids = torch.tensor(
        [
            [CLS, 1212, 3807, 318, 3105, 11, 475, 262, 7205, 318, 6275, SEP],
            [CLS, 13681, 2646, 0, SEP, PAD, PAD, PAD, PAD, PAD, PAD, PAD],
        ]
    )
    show("input_ids:")
    show(ids)
    mask = sub.create_attention_mask(ids)
    show("create_attention_mask(input_ids):")
    show(mask)
    scores = torch.zeros(2, 1, 12, 12)
    weights = sub.masked_attention_weights(scores, mask)
    show("with equal scores, the weights of the first query of each review (padded keys get 0):")
    show(weights[:, 0, 0].numpy().round(4))
