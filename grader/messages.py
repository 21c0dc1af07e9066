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
