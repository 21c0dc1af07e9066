"""The model `kata train` trains: listing 1.35's BERTForClassification, from the reference
solution or from the student's exercise file, plus the attention fast path.

The model class is read from `<code>/ch01/s1_23_classifier.py`, which imports the encoder
from the exercise files beside it (the student's own earlier classes, or the reference's). It runs in this process: `kata train` is a
tool for one's own code on one's own machine, not a grading path (grading trains the student's
model inside the sandbox, see grader/checks/test_s1_23_training.py).

Fast path: every `MultiHeadSelfAttention` of the model (listing 1.31, parameters qkv and out)
can run through `torch.nn.functional.scaled_dot_product_attention`, which fuses scale, mask,
softmax and the value mix (FlashAttention / memory-efficient kernels on a GPU). It is switched
on only after it has been shown, on a probe batch with padding, to give the module's own
output to `FAST_PATH_TOL`: a student's attention that differs keeps its own forward, so
training never hides a bug.

Every message is in the reader's language (grader/course/messages.py); why the fast path is not
used is also kept in English, for metrics.json (`fast_attention`).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import traceback
import types
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from ...course.messages import Msg, t

CLASSIFIER_FILE = "ch01/s1_23_classifier.py"
FAST_PATH_TOL = 1e-5  # fp32, eval mode: the same sums in another order


class ModelError(RuntimeError):
    """The model file cannot be used for training; the message names the file and what to do."""


def import_file(path: Path, prefix: str) -> types.ModuleType:
    """Import the file at `path` under a private module name; a failure leaves no module behind
    and raises the file's own exception.

    The file's folder comes first on sys.path while it runs, for the exercise files beside it
    that it imports (`from s1_23_encoder import BERTEncoder`: the student's own earlier
    classes). Those are imported afresh from that folder and leave their plain names in
    sys.modules again after, so that the reference and a student's code imported in one process
    never mix. Each runs under a private name of its folder's (`<prefix>_<hash>__s1_23_encoder`),
    which stays in sys.modules: its classes' `__module__` names it, and torch.compile (dynamo)
    imports a class's module again by that name."""
    path = Path(path).resolve()
    folder = str(path.parent)
    siblings = {p.stem for p in path.parent.glob("*.py")}
    saved = {n: sys.modules.pop(n) for n in list(sys.modules) if n in siblings}
    name = f"{prefix}_{abs(hash(str(path)))}"
    private = f"{prefix}_{abs(hash(folder))}__"
    finder = _PrivateSiblings(path.parent, siblings, private)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, folder)
    sys.meta_path.insert(0, finder)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        for n in finder.loaded:
            sys.modules.pop(private + n, None)
        raise
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        if folder in sys.path:
            sys.path.remove(folder)
        for n in siblings:
            sys.modules.pop(n, None)
        sys.modules.update(saved)
    return module


class _PrivateSiblings(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """While import_file runs: `import s1_23_encoder` loads that file of the folder afresh, runs
    it under the private name `<private>s1_23_encoder` (so its classes' `__module__` is that name)
    and keeps it in sys.modules under the private name too."""

    def __init__(self, folder: Path, siblings: set[str], private: str):
        self.folder, self.siblings, self.private = folder, siblings, private
        self.loaded: list[str] = []

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.siblings:
            return None
        return importlib.util.spec_from_file_location(fullname, self.folder / f"{fullname}.py", loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        plain = module.__spec__.name
        module.__name__ = self.private + plain
        sys.modules[module.__name__] = module
        self.loaded.append(plain)
        try:
            code = compile(Path(module.__spec__.origin).read_bytes(), module.__spec__.origin, "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except BaseException:
            sys.modules.pop(module.__name__, None)
            raise


def load_classifier_module(code_dir: str | Path) -> types.ModuleType:
    """Import `<code_dir>/ch01/s1_23_classifier.py` under a private module name."""
    path = Path(code_dir) / CLASSIFIER_FILE
    if not path.is_file():
        raise ModelError(t("train_model_missing", path=path))
    try:
        module = import_file(path, "kata_train_classifier")
    except Exception as e:  # the student's file, or an earlier exercise it imports: say where it broke
        earlier = earlier_exercise(e, path)
        if earlier:
            raise ModelError(t("train_model_import_earlier", path=path, earlier=earlier)) from e
        raise ModelError(
            t("train_import_failed", where=f"{path}{_line_in(e, path)}", error=f"{type(e).__name__}: {e}")
        ) from e
    if not hasattr(module, "BERTForClassification"):
        raise ModelError(t("train_model_no_class", path=path))
    return module


def origin(e: BaseException, folder: Path) -> tuple[Path, int] | None:
    """(file, line) of the deepest frame of `e` in a file of `folder` (or of a SyntaxError there)."""
    folder = Path(folder).resolve()
    if isinstance(e, SyntaxError) and e.filename and Path(e.filename).resolve().parent == folder:
        return Path(e.filename).resolve(), e.lineno or 0
    found = None
    for frame, lineno in traceback.walk_tb(e.__traceback__):
        file = Path(frame.f_code.co_filename).resolve()
        if file.parent == folder:
            found = file, lineno
    return found


def earlier_exercise(e: BaseException, path: Path) -> str:
    """When `e` came from another exercise file beside `path` (one it imports), the sentence that
    says which exercise to finish or fix first (in the reader's language); else ""."""
    where = origin(e, Path(path).resolve().parent)
    if where is None or where[0] == Path(path).resolve():
        return ""
    file, line = where
    if isinstance(e, NotImplementedError):
        return t(
            "train_earlier_unfinished", exercise=Path(path).stem, name=file.name, file=file, line=line, other=file.stem
        )
    return t(
        "train_earlier_raised",
        exercise=Path(path).stem,
        name=file.name,
        type=type(e).__name__,
        file=file,
        line=line,
        error=e,
        other=file.stem,
    )


def _line_in(e: BaseException, path: Path) -> str:
    """ ":<line>" of the deepest frame of `e` in `path` (or of a SyntaxError in it), else ""."""
    if isinstance(e, SyntaxError) and e.lineno:
        return f":{e.lineno}"
    line = ""
    for frame, lineno in traceback.walk_tb(e.__traceback__):
        if Path(frame.f_code.co_filename).resolve() == path.resolve():
            line = f":{lineno}"
    return line


def build_model(
    module: types.ModuleType, *, vocab_size: int, dim: int, max_len: int, layers: int, heads: int, ff_dim: int
) -> nn.Module:
    """BERTForClassification(vocab_size, dim, max_len, layers, heads, ff_dim), with the errors a
    stub or a bad configuration gives turned into one clear message."""
    where = getattr(module, "__file__", "s1_23_classifier.py")
    if dim % heads:
        raise ModelError(t("train_heads_divide", heads=heads, dim=dim))
    try:
        model = module.BERTForClassification(
            vocab_size=vocab_size, dim=dim, max_len=max_len, layers=layers, heads=heads, ff_dim=ff_dim
        )
    except Exception as e:
        earlier = earlier_exercise(e, Path(where))
        if earlier:  # an unfinished or broken earlier exercise that the classifier imports
            raise ModelError(t("train_build_earlier", earlier=earlier)) from e
        if isinstance(e, NotImplementedError):
            raise ModelError(t("train_build_stub", where=f"{where}{_line_in(e, Path(where))}", error=e)) from e
        raise ModelError(
            t("train_build_failed", where=f"{where}{_line_in(e, Path(where))}", error=f"{type(e).__name__}: {e}")
        ) from e
    if not isinstance(model, nn.Module) or not list(model.parameters()):
        raise ModelError(t("train_no_parameters", where=where))
    return model


def check_forward(model: nn.Module, probe: tuple[torch.Tensor, torch.Tensor], where: str | Path) -> None:
    """Run the model once on `probe` (eval mode, no gradients), so that an unfinished forward, the
    classifier's own or an earlier exercise's it imports, is named before any data is read."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            model(*probe)
    except Exception as e:
        earlier = earlier_exercise(e, Path(where))
        if earlier:
            raise ModelError(t("train_forward_earlier", earlier=earlier)) from e
        hint = t("train_forward_stub_hint") if isinstance(e, NotImplementedError) else ""
        raise ModelError(
            t(
                "train_forward_failed",
                where=f"{where}{_line_in(e, Path(where))}",
                error=f"{type(e).__name__}: {e}",
                hint=hint,
            )
        ) from e
    finally:
        model.train(was_training)


# ---------------------------------------------------------------- the attention fast path


def sdpa_forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Listing 1.31's forward through scaled_dot_product_attention; same parameters, same result."""
    B, T, C = x.shape
    heads = self.heads
    q, k, v = self.qkv(x).view(B, T, 3, heads, C // heads).permute(2, 0, 3, 1, 4)
    keep = (mask != 0)[:, None, None, :]  # True = a real key; padding keys get no weight
    p = self.attn_dropout.p if self.training else 0.0
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, dropout_p=p)
    return self.out_dropout(self.out(out.transpose(1, 2).reshape(B, T, C)))


def attention_modules(model: nn.Module) -> list[nn.Module]:
    """The model's listing-1.31 attention modules: named MultiHeadSelfAttention, with qkv, out,
    heads and the two dropouts (the names the exercise fixes)."""
    found = []
    for m in model.modules():
        if type(m).__name__ == "MultiHeadSelfAttention" and all(
            hasattr(m, a) for a in ("qkv", "out", "heads", "attn_dropout", "out_dropout")
        ):
            found.append(m)
    return found


def probe_batch(vocab_size: int, max_len: int, pad_id: int, cls_id: int, seed: int = 0):
    """Four rows of different lengths (one full), [CLS] first, padding after: (ids, mask)."""
    g = torch.Generator().manual_seed(seed)
    T = min(max_len, 24)
    lengths = [T, max(2, T // 2), max(2, T // 3), 2]
    ids = torch.full((len(lengths), T), pad_id, dtype=torch.long)
    for row, n in enumerate(lengths):
        ids[row, :n] = torch.randint(0, max(1, min(pad_id, cls_id)), (n,), generator=g)
        ids[row, 0] = cls_id
    return ids, (ids != pad_id).long()


def enable_fast_attention(model: nn.Module, probe: tuple[torch.Tensor, torch.Tensor]) -> tuple[int, str]:
    """Switch every attention module to `sdpa_forward` if that leaves the model's eval output on
    `probe` unchanged (to FAST_PATH_TOL); returns (modules switched, why not when 0, in English)."""
    switched, why = fast_attention(model, probe)
    return switched, why.render("en") if why is not None else ""


def fast_attention(model: nn.Module, probe: tuple[torch.Tensor, torch.Tensor]) -> tuple[int, Msg | None]:
    """enable_fast_attention, with why not (when 0 modules are switched) in both languages: kata
    train prints it in the reader's and records it in English."""
    modules = attention_modules(model)
    if not modules:
        return 0, Msg.key("train_fast_no_modules")
    was_training = model.training
    model.eval()
    ids, mask = probe
    try:
        with torch.no_grad():
            manual = model(ids, mask).float()
            for m in modules:
                m.forward = types.MethodType(sdpa_forward, m)
            fast = model(ids, mask).float()
    except Exception as e:  # shapes the fast path cannot follow: keep the module's own forward
        for m in modules:
            m.__dict__.pop("forward", None)
        model.train(was_training)
        return 0, Msg.key("train_fast_failed", error=f"{type(e).__name__}: {e}")
    err = (manual - fast).abs().max().item() if manual.shape == fast.shape else float("inf")
    model.train(was_training)
    if not err <= FAST_PATH_TOL * max(1.0, manual.abs().max().item()):
        for m in modules:
            m.__dict__.pop("forward", None)
        return 0, Msg.key("train_fast_differs", err=err)
    return len(modules), None
