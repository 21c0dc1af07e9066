"""§1.20 and §1.22 worked claims: sequential steps, receptive fields, quadratic attention cost."""

from grader.listings import listing


@listing(
    "1.20/parallel",
    book="(no printed numbers: an RNN takes one sequential step per token, a self-attention layer one step for all tokens)",
)
def listing_1_20_parallel(sub, show):
    for n in (16, 512, 4096):
        show(
            f"seq_len {n:5d}: RNN {sub.rnn_sequential_steps(n):5d} sequential steps, "
            f"self-attention {sub.attention_sequential_steps(n)}, "
            f"convolutions of kernel 3 need {sub.cnn_layers_to_span(n, 3)} layers to span it"
        )


@listing(
    "1.22/quadratic",
    book="(no printed numbers: attention cost grows with the square of the sequence length)",
    errata=["E-1.22-a"],
)
def listing_1_22_quadratic(sub, show):
    show("One example, 12 heads of 64 dimensions (BERT-base sized), float32 scores:")
    for n in (512, 1024, 2048, 4096, 8192):
        flops = sub.attention_flops(1, 12, n, 64)
        mib = sub.score_matrix_bytes(1, 12, n) / 2**20
        show(f"  seq_len {n:5d}: {flops / 1e9:8.2f} GFLOP for Q K^T and A V, score matrices {mib:8.0f} MiB")
    show("Longest sequence whose scores fit in 80 GB, batch 8, 12 heads, float32:", sub.max_seq_len(80 * 10**9, 8, 12))
