"""Listings 1.35-1.36 (§1.23), run with the student's s1_23_classifier."""

from grader.checks import bert_reference as R
from grader.listings import listing
from grader.worker.proxy import StudentError

VOCAB_SIZE, PAD_ID, CLS_ID, SEP_ID, MAX_LEN = 50260, 50257, 50258, 50259, 256


@listing(
    "1.35",
    book="""(listing 1.35 prints nothing; listing 1.36 prints the head as)
(classifier): Sequential(
  (0): Dropout(p=0.1, inplace=False)
  (1): Linear(in_features=256, out_features=2, bias=True)
)""",
    errata=["E-1.23-k", "E-1.23-l"],
)
def listing_1_35(sub, show):
    sub.seed(123)
    model = sub.new("BERTForClassification", VOCAB_SIZE, 256, MAX_LEN, 4, 4, 1024)
    show("(classifier):", R.remote_repr(model.attr("classifier")))
    model.eval()
    ids, mask = R.padded_batch([20, 11, 5], 20, VOCAB_SIZE, PAD_ID, CLS_ID, SEP_ID, seed=135)
    logits = model(ids, mask)
    show("ids:", tuple(ids.shape), "-> logits:", tuple(logits.shape), "(one pair per review, from the [CLS] position)")
    show([[round(v, 4) for v in row] for row in logits.tolist()])


# The book's listing 1.36 cannot run as printed (heads=6, E-1.23-h); its print shows 6 blocks (E-1.23-i).
@listing(
    "1.36",
    book="""BERTForClassification(
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
  )
  (classifier): Sequential(
    (0): Dropout(p=0.1, inplace=False)
    (1): Linear(in_features=256, out_features=2, bias=True)
  )
)""",
    errata=["E-1.23-h", "E-1.23-i", "E-1.23-j", "E-1.23-k"],
)
def listing_1_36(sub, show):
    try:
        sub.new(
            "BERTForClassification", vocab_size=VOCAB_SIZE, dim=256, max_len=MAX_LEN, layers=4, heads=6, ff_dim=1024
        )
        show("heads=6: built (it should have refused: 256 % 6 = 4)")
    except StudentError as e:
        show("heads=6, as printed in the book:", str(e).splitlines()[0])
    show("book_model() (layers=4, heads=4):")
    sub.seed(123)
    show(R.remote_repr(sub.book_model()))
