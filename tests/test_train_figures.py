"""`kata train`'s figures, curves.png and cls_attention.png, in the reader's language: every text
drawn in them but the review's own tokens comes from the message catalog, in Chinese and with a
Chinese font when the reader's language is zh and matplotlib has such a font, else in English word
for word as before. The choice is grader/course/figure_text.py's, the same as `kata run --plot`'s.

The figures are drawn directly (as kata train draws them), from a small history and weights, and
read just before they are saved: no training."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

from grader.capstone.training import attention_map, outputs
from grader.course import figure_text
from grader.course.messages import Msg
from grader.listings import plots

HISTORY = [
    {"step": 5, "train_loss": 0.71, "val_loss": 0.69, "val_accuracy": 0.5},
    {"step": 10, "train_loss": 0.52, "val_loss": 0.60, "val_accuracy": 0.7},
]
TOKENS = ["[CLS]", "a", "good", "film", "!"]
SOURCE = Msg.key("data_source_synthetic", n=120, test_n=30, seed=0)  # as kata train's Data.source_msg

# what the figures always said in English
ENGLISH = {
    "curves": {
        "title": "BERT classifier (dim 32, 1 layers, 2 heads) on synthetic corpus (n=120, test_n=30, seed=0)",
        "xlabels": ["step", "step"],
        "ylabels": ["cross-entropy loss", "validation accuracy (%)"],
        "legend": ["training", "validation"],
        "yticks": None,
        "xticks": None,
    },
    "attention": {
        "title": "[CLS] attention, test review #3: label positive, predicted negative",
        "xlabels": ["", ""],
        "ylabels": ["layer 0", "layer 1"],
        "legend": [],
        "yticks": [["head 0", "head 1"], ["head 0", "head 1"]],
        "xticks": TOKENS,
    },
}


def draw(monkeypatch, tmp_path) -> tuple[dict, dict]:
    """Both figures as kata train draws them: ({figure: its texts}, {figure: what drew them}), each
    read while it is saved (the font is looked up then); the PNG files are written as usual."""
    texts, drawing = {}, {}
    save = outputs.save_figure

    def capture(path, fig):
        from matplotlib import font_manager

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            written = save(path, fig)
        axes = [ax for ax in fig.axes if ax.lines or ax.images]  # not the colorbars
        name = Path(path).stem
        heatmap = name == "attention"
        texts[name] = {
            "title": axes[0].get_title() if heatmap else fig.get_suptitle(),
            "xlabels": [ax.get_xlabel() for ax in axes],
            "ylabels": [ax.get_ylabel() for ax in axes],
            "legend": [t.get_text() for ax in axes if ax.get_legend() for t in ax.get_legend().get_texts()],
            "yticks": [[t.get_text() for t in ax.get_yticklabels()] for ax in axes] if heatmap else None,
            "xticks": [t.get_text() for t in axes[-1].get_xticklabels()] if heatmap else None,
        }
        labels = [axes[0].title if heatmap else fig._suptitle]
        labels += [ax.xaxis.label for ax in axes] + [ax.yaxis.label for ax in axes]
        labels += [t for ax in axes if ax.get_legend() for t in ax.get_legend().get_texts()]
        drawing[name] = {
            "fonts": {Path(font_manager.findfont(t.get_fontproperties())).name for t in labels if t.get_text()},
            "missing_glyphs": [str(w.message) for w in caught if "missing from font" in str(w.message)],
            "png": written.read_bytes()[:4],
        }
        return written

    monkeypatch.setattr(outputs, "save_figure", capture)
    outputs.plot_curves(tmp_path / "curves.png", HISTORY, outputs.curves_title(32, 1, 2, SOURCE))
    weights = torch.softmax(torch.arange(20.0).reshape(2, 2, 5), dim=-1)  # 2 layers, 2 heads, 5 tokens
    attention_map.plot_cls_attention(
        tmp_path / "attention.png", weights, TOKENS, attention_map.attention_title(3, 1, 0)
    )
    return texts, drawing


def font_file(family: str) -> str:
    from matplotlib import font_manager

    return Path(font_manager.findfont(font_manager.FontProperties(family=family))).name


def test_in_chinese_with_a_cjk_font_every_label_is_chinese_and_drawn_with_that_font(monkeypatch, tmp_path):
    monkeypatch.setenv("KATA_LANG", "zh")
    font = figure_text.cjk_font()
    if font is None:
        pytest.skip("matplotlib finds no CJK font here (setup.sh installs fonts-wqy-microhei)")
    texts, drawing = draw(monkeypatch, tmp_path)
    assert texts["curves"] == {
        "title": "BERT 分类器（dim 32，1 层，2 个头），数据：合成语料（n=120，test_n=30，seed=0）",
        "xlabels": ["步", "步"],
        "ylabels": ["交叉熵损失", "验证集准确率（%）"],
        "legend": ["训练", "验证"],
        "yticks": None,
        "xticks": None,
    }
    assert texts["attention"] == {
        "title": "[CLS] 的注意力，测试集评论 #3：标签 正面，预测 负面",
        "xlabels": ["", ""],
        "ylabels": ["第 0 层", "第 1 层"],
        "legend": [],
        "yticks": [["注意力头 0", "注意力头 1"], ["注意力头 0", "注意力头 1"]],
        "xticks": TOKENS,
    }
    for figure in ("curves", "attention"):
        assert drawing[figure]["fonts"] == {font_file(font)}, (figure, font)
        assert drawing[figure]["missing_glyphs"] == [], figure  # no empty boxes
        assert drawing[figure]["png"] == b"\x89PNG"
    assert plots.text_language() == "zh"  # kata run --plot decides the same way


def test_in_english_the_figures_say_what_they_always_said(monkeypatch, tmp_path):
    monkeypatch.setenv("KATA_LANG", "en")
    texts, drawing = draw(monkeypatch, tmp_path)
    assert texts == ENGLISH
    for figure in ("curves", "attention"):
        assert drawing[figure]["fonts"] == {font_file("DejaVu Sans")}, figure
        assert drawing[figure]["png"] == b"\x89PNG"


def test_in_chinese_without_a_cjk_font_the_figures_fall_back_to_english(monkeypatch, tmp_path):
    monkeypatch.setenv("KATA_LANG", "zh")
    monkeypatch.setattr(figure_text, "cjk_font", lambda: None)
    texts, drawing = draw(monkeypatch, tmp_path)
    assert texts == ENGLISH
    for figure in ("curves", "attention"):
        assert drawing[figure]["fonts"] == {font_file("DejaVu Sans")}, figure
    assert plots.text_language() == "en" and plots.label("plot_rows_more", count=2) == "… 2 more rows"
