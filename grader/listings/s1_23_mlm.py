"""Beyond the book: BERT's masking rule and the MLM head, run with the student's s1_23_mlm
(`kata run 1.23/mlm`). The chapter has no such listing, so there is no printed output to set
beside it (course.toml marks the exercise beyond_book)."""

import torch

from grader.checks import bert_reference as R
from grader.checks.test_s1_23_mlm import BOOK_IDS, MASK, MLM_VOCAB, BASE, PAD, SPECIAL, batch, shares
from grader.listings import listing


@listing("1.23/mlm", errata=["K-1.23-a"])
def listing_mlm(sub, show):
    """mask_tokens on §1.23's two sample reviews, the 80/10/10 split on a large batch, the tied head"""
    ids = torch.tensor(BOOK_IDS)
    show("MASK_ID =", sub.get("MASK_ID"), " MLM_VOCAB_SIZE =", sub.get("MLM_VOCAB_SIZE"))
    show("input_ids (listing 1.27's reviews, [CLS] = 50258, [SEP] = 50259, [PAD] = 50257):")
    show(ids)
    inputs, labels = sub.mask_tokens(
        ids, mask_id=MASK, vocab_size=BASE, special_ids=SPECIAL, generator=sub.given("generator", 1273), mask_prob=0.15
    )
    show("inputs, mask_prob=0.15 (generator seeded with 1273):")
    show(inputs)
    show("labels (-100: not chosen):")
    show(labels)
    big = batch(128, 512, BASE, SPECIAL, seed=1231, min_len=200)
    inputs, labels = sub.mask_tokens(
        big, mask_id=MASK, vocab_size=BASE, special_ids=SPECIAL, generator=sub.given("generator", 1232)
    )
    s = shares(big, inputs, labels, MASK)
    real = int((~torch.isin(big, torch.tensor(SPECIAL))).sum())
    show(
        f"a 128 x 512 batch: {s['chosen']} of {real} real tokens chosen ({s['chosen'] / real:.3f}); of those "
        f"{s['mask']:.3f} [MASK], {s['random']:.3f} random, {s['kept']:.3f} unchanged"
    )
    sub.seed(1233)
    embedding = sub.given("embedding", MLM_VOCAB, 256, padding_idx=PAD)
    head = sub.new("MLMHead", embedding, 256)
    show(R.remote_repr(head))
    hidden = torch.randn(2, 12, 256, generator=torch.Generator().manual_seed(1234))
    show("logits of (2, 12, 256) encoder outputs:", tuple(head(hidden).shape))
