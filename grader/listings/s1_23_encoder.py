"""Listing 1.34 (§1.23), run with the student's s1_23_encoder."""

from grader.checks import bert_reference as R
from grader.listings import listing

VOCAB_SIZE, PAD_ID, CLS_ID, SEP_ID, MAX_LEN = 50260, 50257, 50258, 50259, 256


@listing(
    "1.34",
    book="""(listing 1.34 prints nothing; listing 1.36 prints the encoder as)
(bert): BERTEncoder(
  (embed): BERTEmbedding(
    (token): Embedding(50260, 256, padding_idx=50257)
    (position): Embedding(256, 256)
    (segment): Embedding(2, 256)
    (norm): LayerNorm((256,), eps=1e-05, elementwise_affine=True)
    (dropout): Dropout(p=0.1, inplace=False)
  )
  (layers): ModuleList(
    (0-5): 6 x TransformerBlock(
      (attn): MultiHeadSelfAttention(
        (qkv): Linear(in_features=256, out_features=768, bias=True)
        (out): Linear(in_features=256, out_features=256, bias=True)
        (attn_dropout): Dropout(p=0.1, inplace=False)
        (out_dropout): Dropout(p=0.1, inplace=False)
      )
      (ff): FeedForward(
        (net): Sequential(
          (0): Linear(in_features=256, out_features=1024, bias=True)
          (1): GELU(approximate='none')
          (2): Dropout(p=0.1, inplace=False)
          (3): Linear(in_features=1024, out_features=256, bias=True)
          (4): Dropout(p=0.1, inplace=False)
        )
      )
      (norm1): LayerNorm((256,), eps=1e-05, elementwise_affine=True)
      (norm2): LayerNorm((256,), eps=1e-05, elementwise_affine=True)
    )
  )
)""",
    errata=["E-1.23-i", "E-1.23-j", "E-1.23-k"],
)
def listing_1_34(sub, show):
    sub.seed(123)
    enc = sub.new("BERTEncoder", VOCAB_SIZE, 256, MAX_LEN, 4, 4, 1024)
    show(R.remote_repr(enc))
    enc.eval()
    ids, mask = R.padded_batch([16, 9], 16, VOCAB_SIZE, PAD_ID, CLS_ID, SEP_ID, seed=134)
    show("ids:", tuple(ids.shape), "-> contextual vectors:", tuple(enc(ids, mask).shape))
