"""`kata train`: the §1.23 capstone trained for real (see loop.py for what it does).

    kata train                                  # the reference model on the offline corpus
    kata train --code student --data imdb       # your classifier on IMDb
    torchrun --nproc_per_node 2 -m grader train --data synthetic:2000 ...   # DDP

Import from the modules (grader.capstone.training.loop, .model, .batches, .outputs): this package file
imports nothing, so that `kata --help` stays fast.
"""
