"""The message catalog: every text a student sees, in English and Chinese.

`t(key, **fields)` renders a message in the current language (`KATA_LANG`, else the locale;
English is the fallback). Keep texts here, not scattered through the code.
"""
from __future__ import annotations

import locale
import os

CATALOG: dict[str, dict[str, str]] = {
    "not_a_tensor": {
        "en": "{what}: expected a torch.Tensor, got {got}",
        "zh": "{what}：应返回 torch.Tensor，实际得到 {got}",
    },
    "shape": {
        "en": "{what}: wrong shape: expected {expected}, got {actual}",
        "zh": "{what}：形状错误：应为 {expected}，实际为 {actual}",
    },
    "shape_hidden": {
        "en": "{what}: wrong shape {actual} for this input",
        "zh": "{what}：对该输入返回的形状 {actual} 不正确",
    },
    "dtype": {
        "en": "{what}: wrong dtype: expected {expected}, got {actual}",
        "zh": "{what}：数据类型错误：应为 {expected}，实际为 {actual}",
    },
    "nonfinite": {
        "en": "{what}: {count} value(s) are NaN or infinite where a finite number was expected (first at index {index})",
        "zh": "{what}：有 {count} 个值为 NaN 或无穷大，而应为有限数（第一个位于索引 {index}）",
    },
    "values": {
        "en": ("{what}: {bad} of {total} values differ (tolerance {tol}). Worst at index {index}: "
               "expected {expected}, got {actual}; max abs error {abs_err:.3g}, max rel error {rel_err:.3g}"),
        "zh": ("{what}：{total} 个值中有 {bad} 个不符（容差 {tol}）。误差最大处索引 {index}："
               "应为 {expected}，实际为 {actual}；最大绝对误差 {abs_err:.3g}，最大相对误差 {rel_err:.3g}"),
    },
    "values_hidden": {
        "en": "{what}: {bad} of {total} values differ from the expected ones (tolerance {tol})",
        "zh": "{what}：{total} 个值中有 {bad} 个与期望值不符（容差 {tol}）",
    },
    "mistake": {
        "en": "This looks like {mistake}.",
        "zh": "这看起来像是{mistake_zh}。",
    },
    "not_implemented": {
        "en": "not implemented yet: {message}",
        "zh": "尚未实现：{message}",
    },
    "missing": {
        "en": "{message}",
        "zh": "缺少所需内容：{message}",
    },
    "signature": {
        "en": "wrong signature: {message}",
        "zh": "函数签名不对：{message}",
    },
    "forbidden": {
        "en": "{message}",
        "zh": "使用了本练习禁止的 API：{message}",
    },
    "syntax": {
        "en": "syntax error in {where}: {message}",
        "zh": "{where} 有语法错误：{message}",
    },
    "raised": {
        "en": "{label} raised {type}: {message}{at}",
        "zh": "{label} 抛出了 {type}：{message}{at}",
    },
    "import_failed": {
        "en": "importing {file} failed: {reason}",
        "zh": "导入 {file} 失败：{reason}",
    },
    "import_failed_before": {
        "en": "not run: importing {file} failed in an earlier check ({reason})",
        "zh": "未运行：在前面的检查中导入 {file} 已失败（{reason}）",
    },
    "fault": {
        "en": "{reason}",
        "zh": "工作进程出错：{reason}",
    },
    "scan": {
        "en": "uses an API this exercise asks you to write yourself: {items}. {hint} This exercise scores 0 until it is removed.",
        "zh": "使用了本练习要求你自己实现的 API：{items}。{hint} 删除之前本练习记 0 分。",
    },
    "hidden_failed": {
        "en": "{what}: the result is not correct for this hidden input",
        "zh": "{what}：对这个隐藏输入的结果不正确",
    },
    "check_error": {
        "en": "the check could not use your result: {type}: {message}",
        "zh": "检查无法使用你的返回值：{type}：{message}",
    },
    # --- issue 5, slice "html": kata run --plot, figures, HTML feedback (grader/plots.py, figures.py, report_html.py)
    "plot_not_numbers": {
        "en": "{what}: cannot be drawn: expected numbers, got {got}",
        "zh": "{what}：无法绘图：应为数值，实际得到 {got}",
    },
    "plot_shape": {
        "en": "{what}: cannot be drawn: expected a matrix of shape {expected}, got shape {actual}",
        "zh": "{what}：无法绘图：应为形状 {expected} 的矩阵，实际形状为 {actual}",
    },
    "plot_bpe_pair": {
        "en": "most_frequent_pair(table): cannot be drawn: expected a pair of two strings (or None), got {got}",
        "zh": "most_frequent_pair(table)：无法绘图：应返回由两个字符串组成的一对（或 None），实际得到 {got}",
    },
    "plot_failed": {
        "en": "No figure for listing {listing}: {reason}",
        "zh": "无法为代码清单 {listing} 绘图：{reason}",
    },
    "plot_none": {
        "en": "kata: listing {listing} has no figure. Listings with figures: {known}",
        "zh": "kata：代码清单 {listing} 没有图。有图的代码清单：{known}",
    },
    "plot_wrote": {
        "en": "figure: {path}",
        "zh": "图：{path}",
    },
    "plot_pe_heatmap": {
        "en": "Sinusoidal position encoding: 1024 positions × 768 dimensions",
        "zh": "正弦位置编码：1024 个位置 × 768 个维度",
    },
    "plot_pe_curves": {
        "en": "Sine and cosine of dimension pair i over 1024 positions (d_model = 768)",
        "zh": "维度对 i 的正弦与余弦随 1024 个位置的变化（d_model = 768）",
    },
    "plot_pe_pair": {
        "en": "i = {i}: dimension {sin} (sin, green) and {cos} (cos, blue)",
        "zh": "i = {i}：维度 {sin}（正弦，绿色）和 {cos}（余弦，蓝色）",
    },
    "plot_position": {
        "en": "position",
        "zh": "位置",
    },
    "plot_dimension": {
        "en": "dimension",
        "zh": "维度",
    },
    "plot_attention_16": {
        "en": "Listing 1.6: attention weights (each row sums to 1)",
        "zh": "代码清单 1.6：注意力权重（每行之和为 1）",
    },
    "plot_attention_112": {
        "en": "Listing 1.12: causal attention weights (no weight on later tokens)",
        "zh": "代码清单 1.12：因果注意力权重（后面的 token 权重为 0）",
    },
    "plot_query": {
        "en": "query token",
        "zh": "查询 token",
    },
    "plot_key": {
        "en": "key token (attended to)",
        "zh": "键 token（被关注的）",
    },
    "plot_bpe_title": {
        "en": "BPE merges learned from figure 1.20's corpus (old ×7, older ×3, finest ×9, lowest ×4)",
        "zh": "从图 1.20 的语料学到的 BPE 合并（old ×7，older ×3，finest ×9，lowest ×4）",
    },
    "plot_bpe_step": {
        "en": "merge",
        "zh": "合并",
    },
    "plot_bpe_pair_col": {
        "en": "pair",
        "zh": "符号对",
    },
    "plot_bpe_symbol": {
        "en": "new symbol",
        "zh": "新符号",
    },
    "plot_bpe_count": {
        "en": "count",
        "zh": "频次",
    },
    "plot_bpe_words": {
        "en": "the words after the merge",
        "zh": "合并后的单词",
    },
    "html_title": {
        "en": "Transformer kata — feedback",
        "zh": "Transformer 练习 — 反馈",
    },
    "html_score": {
        "en": "Score",
        "zh": "得分",
    },
    "html_meta": {
        "en": "Submission {submission} · kata {version} · torch {torch} · sandbox: {sandbox} · {seconds} s",
        "zh": "提交：{submission} · kata {version} · torch {torch} · 沙箱：{sandbox} · {seconds} 秒",
    },
    "html_limits_only": {
        "en": "The sandbox ran with resource limits only (bubblewrap was not found): no filesystem or network isolation.",
        "zh": "沙箱仅使用了资源限制（未找到 bubblewrap）：没有文件系统和网络隔离。",
    },
    "html_note": {
        "en": "Note: {note}",
        "zh": "注意：{note}",
    },
    "html_by_section": {
        "en": "Score by section",
        "zh": "各节得分",
    },
    "html_exercises": {
        "en": "exercises",
        "zh": "练习数",
    },
    "html_points": {
        "en": "points",
        "zh": "分数",
    },
    "html_check": {
        "en": "check",
        "zh": "检查",
    },
    "html_listing": {
        "en": "listing",
        "zh": "代码清单",
    },
    "html_hidden": {
        "en": "(hidden)",
        "zh": "（隐藏）",
    },
    "html_passed": {
        "en": "passed",
        "zh": "通过",
    },
    "html_failed": {
        "en": "failed",
        "zh": "未通过",
    },
    "html_skipped": {
        "en": "skipped",
        "zh": "跳过",
    },
    "html_figure": {
        "en": "Drawn from your code: listing {listing}",
        "zh": "由你的代码绘制：代码清单 {listing}",
    },
    "html_wrote": {
        "en": "HTML report: {path}",
        "zh": "HTML 报告：{path}",
    },
}


def language() -> str:
    lang = os.environ.get("KATA_LANG", "")
    if not lang:
        try:
            lang = locale.getlocale()[0] or os.environ.get("LANG", "")
        except ValueError:
            lang = os.environ.get("LANG", "")
    return "zh" if lang.lower().startswith("zh") else "en"


class _Safe(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def t(key: str, lang: str | None = None, **fields) -> str:
    entry = CATALOG[key]
    text = entry.get(lang or language()) or entry["en"]
    try:
        return text.format_map(_Safe(fields))
    except (ValueError, TypeError):
        return entry["en"].format_map(_Safe(fields))
