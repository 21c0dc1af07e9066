"""Listing 1.30 (§1.23), run with the student's s1_23_bert_embedding."""

from grader.checks import bert_reference as R
from grader.listings import listing

VOCAB_SIZE, PAD_ID, CLS_ID, SEP_ID, MAX_LEN = 50260, 50257, 50258, 50259, 256


# Listing 1.30 only defines the class; listing 1.36's print shows it inside the model.
@listing(
    "1.30",
    book="""(listing 1.30 prints nothing; listing 1.36 prints this layer as)
(embed): BERTEmbedding(
  (token): Embedding(50260, 256, padding_idx=50257)
  (position): Embedding(256, 256)
  (segment): Embedding(2, 256)
  (norm): LayerNorm((256,), eps=1e-05, elementwise_affine=True)
  (dropout): Dropout(p=0.1, inplace=False)
)""",
    errata=["E-1.23-j", "E-1.23-k"],
)
def listing_1_30(sub, show):
    sub.seed(123)
    embed = sub.new("BERTEmbedding", VOCAB_SIZE, 256, MAX_LEN)
    show(R.remote_repr(embed))
    embed.eval()
    # Two reviews as listing 1.26 lays them out: [CLS] tokens [SEP], then [PAD] up to the batch length.
    ids, _ = R.padded_batch([12, 7], 12, VOCAB_SIZE, PAD_ID, CLS_ID, SEP_ID, seed=130)
    out = embed(ids)
    show("ids:", tuple(ids.shape), "-> embeddings:", tuple(out.shape))
    show(
        "mean and std of each vector (LayerNorm, fresh weights):",
        [round(v, 3) for v in out[0, :3].mean(-1).tolist()],
        [round(v, 3) for v in out[0, :3].std(-1, unbiased=False).tolist()],
    )
