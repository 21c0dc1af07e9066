"""What the public checks read, found by running them (`kata release`).

The public checks, the listings of `kata run` and their figures are run on the reference
solutions, in the sandbox as always, while this process records:

- which fixture keys they read (`fixtures.load(...)` hands out a dict that notes every key
  read; a key met while iterating counts when the code selects it by `startswith`/`endswith`
  or compares it, as the prefix helpers of the check modules do);
- every call they make to a helper that re-implements an exercise (the reference model of
  grader/checks/bert_reference.py, and the helpers REPLAYED_HELPERS names, such as the tokenizer
  checks' calls of grader/checks/tokenizer_reference.py), its arguments
  (defaults included) and its result: the student bundle answers these calls from a table
  instead of shipping the helpers (grader/checking/replay.py). Only the outermost call is
  recorded, not the ones a helper makes to another.

The bundle then ships only those keys and those calls: nothing a hidden check alone uses.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import inspect
from collections import defaultdict
from dataclasses import dataclass, field


from ...checking import fixtures
from ...checking.replay import call_key
from ...course.manifest import Course, Exercise

REFERENCE_MODULE = "grader.checks.bert_reference"
REFERENCE_LABEL = "bert_public"  # the module that answers its calls in the bundle
# The reference model's functions that compute what a solution computes. They are replayed in the
# bundle; the rest of the module (names, shapes, seeded weights, printing) ships as it is.
REPLAYED = ("embedding", "attention", "feed_forward", "block", "encoder", "pool", "classify")
# The check modules' own helpers that re-implement an exercise (its reference, or the wrong answers
# its public checks name, computed from the right one); replayed in the bundle too.
REPLAYED_HELPERS = {
    "test_s1_01_next_token": ("corpus_ids",),
    "test_s1_02_anatomy": ("expected_shapes", "_output_mistakes"),
    "test_s1_03_tokenizers": ("ref_split", "ref_word_vocab", "ref_counts"),
    "test_s1_04_byte_bpe": ("_wrong_answers",),
    "test_s1_05_embeddings": ("_lookup_mistakes", "_cos_mistakes"),
    "test_s1_05_positions": ("_sinusoid", "_sin_mistakes"),
    "test_s1_07_additive_attention": ("_score_mistakes", "_attention_mistakes"),
    "test_s1_11_softmax": ("_naive",),
    "test_s1_12_scaled_attention": ("_mistakes",),
    "test_s1_13_causal_mask": ("_tril", "_mask_mistakes", "_masked_mistakes", "_weights_mistakes"),
    "test_s1_14_dropout": ("_survivor_mistakes",),
    "test_s1_15_attention": ("_mistakes",),
    "test_s1_16_multihead": ("_split", "_merge", "_attend", "_reference", "_mha_mistakes", "_attention_mistakes"),
    "test_s1_17_layer_norm": ("_ln", "_mistakes"),
    "test_s1_18_feed_forward": ("_gelu_mistakes", "_ffn", "_ffn_mistakes"),
    "test_s1_23_dataset": ("encode",),
    "test_s1_23_tokenizer": (
        "_ref_numbers",
        "_ref_encode",
        "_wrong_encodings",
    ),  # not reference_collate: a public check feeds it the rows of the student's own shuffled batches
    "test_s1_23_padding_mask": ("_query_masked", "_mask_mistakes", "_weight_mistakes"),
    "test_s1_23_mlm": ("head_ref", "head_mistakes", "gradient_reference", "loss_reference", "loss_mistakes"),
}


def names_wrong_answers(function: str) -> bool:
    """A helper that only names wrong answers: a call the bundle cannot answer gives none."""
    return "mistake" in function or "wrong" in function


class _Key(str):
    """A fixture key handed out while iterating: it counts as read once the code picks it."""

    def _pick(self, yes: bool) -> bool:
        if yes:
            self._seen.add(str(self))
        return yes

    def startswith(self, *args) -> bool:
        return self._pick(str.startswith(self, *args))

    def endswith(self, *args) -> bool:
        return self._pick(str.endswith(self, *args))

    def __eq__(self, other) -> bool:
        return self._pick(str.__eq__(self, other) is True)

    __hash__ = str.__hash__


class _Reading(dict):
    """A fixture's tensors; every key read is added to `seen`."""

    def __init__(self, data: dict, seen: set[str]):
        super().__init__(data)
        self._seen = seen

    def _key(self, k: str) -> _Key:
        key = _Key(k)
        key._seen = self._seen
        return key

    def __getitem__(self, k):
        self._seen.add(str(k))
        return super().__getitem__(k)

    def get(self, k, default=None):
        if k in self:
            self._seen.add(str(k))
        return super().get(k, default)

    def __iter__(self):
        return iter([self._key(k) for k in super().keys()])

    def keys(self):
        return [self._key(k) for k in super().keys()]

    def items(self):
        return [(self._key(k), v) for k, v in super().items()]

    def values(self):
        self._seen.update(super().keys())
        return list(super().values())


@dataclass
class Recording:
    keys: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # exercise -> fixture keys read
    calls: dict[str, object] = field(default_factory=dict)  # call_key -> result
    failures: list[str] = field(default_factory=list)  # public checks or listings the solutions fail
    checks_run: int = 0
    listings_run: int = 0
    _depth: int = 0

    def wrap(self, label: str, name: str, fn):
        """`fn`, recording each outermost call as `label.name`."""
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            if self._depth:
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = call_key(f"{label}.{name}", bound.arguments)  # before the call, which might change them
            self._depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                self._depth -= 1
            self.calls[key] = copy.deepcopy(out)
            return out

        recorded._kata_recording = True
        return recorded

    # pytest hook: the check modules as pytest imported them get their helpers wrapped
    def pytest_collection_modifyitems(self, session, config, items):
        for module in {id(item.module): item.module for item in items if getattr(item, "module", None)}.values():
            label = module.__name__.rsplit(".", 1)[-1]
            for name in REPLAYED_HELPERS.get(label, ()):
                fn = getattr(module, name, None)
                if fn is None:
                    raise RuntimeError(f"grader/checks/{label}.py has no {name} (listed in REPLAYED_HELPERS)")
                if not getattr(fn, "_kata_recording", False):
                    setattr(module, name, self.wrap(label, name, fn))

    @contextlib.contextmanager
    def active(self):
        """Record while the block runs (fixtures.load and the reference's functions patched)."""
        original_load = fixtures.load
        reference = importlib.import_module(REFERENCE_MODULE)
        saved = {name: getattr(reference, name) for name in REPLAYED}

        def load(exercise: str):
            return _Reading(original_load(exercise), self.keys[exercise])

        fixtures.load = load
        for name, fn in saved.items():
            setattr(reference, name, self.wrap(REFERENCE_LABEL, name, fn))
        try:
            yield self
        finally:
            fixtures.load = original_load
            for name, fn in saved.items():
                setattr(reference, name, fn)


def record(course: Course, exercises: list[Exercise] | None = None, listings_too: bool = True) -> Recording:
    """Run the public checks (and the listings and figures) of `exercises` on the solutions."""
    from ... import listings
    from ...checking import runner
    from ...checking.submission import open_submission
    from ...reports import figures as figure_module
    from ...worker.client import WorkerFault
    from ...worker.proxy import StudentError

    exercises = exercises or course.exercises
    ids = {ex.id for ex in exercises}
    rec = Recording()
    with rec.active(), open_submission(course.solutions_dir, course.chapter, course.exercises) as sub:
        with runner.sandbox_for(course, sub) as box:
            result = runner.run(course, sub, exercises, public_only=True, box=box, plugins=(rec,))
            rec.checks_run = len(result.results)
            rec.failures += [f"{r.exercise}::{r.name}: {r.message}" for r in result.results if r.status != "passed"]
            if listings_too:
                registry = listings.load(course)
                for lst in registry.values():
                    if lst.exercise not in ids:
                        continue
                    try:
                        worker, remote = runner.open_exercise(box, course.get(lst.exercise), course=course)
                        try:
                            lst.run(remote, lambda *values: None)
                        finally:
                            worker.close()
                        rec.listings_run += 1
                    except (StudentError, WorkerFault) as e:
                        rec.failures.append(f"listing {lst.id}: {e}")
                figs = [f for ex_id in sorted(ids) for f in listings.figures_of_exercise(ex_id)]
                for drawn in figure_module.draw(course, box, figs, budget_s=course.budget_s):
                    if drawn.error:
                        rec.failures.append(f"figure {drawn.name}: {drawn.error}")
    return rec
