"""`kata train` speaks the reader's language: its progress lines and its errors in Chinese with
`kata --lang zh` (or KATA_LANG=zh, or a zh locale), in English otherwise, word for word as before;
metrics.json reads the same in both."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from grader.capstone import gpt2

from conftest import ROOT, TINY_TRAIN, kata

TINY = TINY_TRAIN  # a model small enough to train in seconds on a CPU
# 120 reviews, 100 of them kept (--limit): 90 train, 10 validation, 30 test; 3 steps of pre-training first
RUN = ["--data", "synthetic:120", "--limit", "100", "--pretrain-mlm", "3", "--epochs", "1", *TINY]
needs_ranks = pytest.mark.skipif(not gpt2.have_asset(), reason="gpt2.tiktoken is missing (kata assets fetch)")
MODEL_FILES = (
    "s1_23_bert_embedding.py",
    "s1_23_self_attention.py",
    "s1_23_feed_forward.py",
    "s1_23_encoder_block.py",
    "s1_23_encoder.py",
    "s1_23_tokenizer.py",
)


def kata_in(lang: str, *args: str, flag: bool = True) -> subprocess.CompletedProcess:
    """`kata --lang LANG ...` (flag) or `KATA_LANG=LANG kata ...`; the locale says English either way."""
    argv = ["--lang", lang, *args] if flag else list(args)
    env = {**os.environ, "KATA_LANG": "en" if flag else lang, "LC_ALL": "C.UTF-8", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "grader", *argv], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env
    )


def lines_matching(stdout: str, pattern: str) -> list[str]:
    return [line for line in stdout.splitlines() if re.fullmatch(pattern, line)]


@needs_ranks
def test_a_run_prints_its_progress_in_chinese_and_keeps_english_word_for_word(tmp_path):
    zh_out, en_out = tmp_path / "zh", tmp_path / "en"
    zh = kata_in("zh", "train", *RUN, "--out", str(zh_out))
    en = kata("train", *RUN, "--out", str(en_out))
    assert zh.returncode == 0, zh.stderr[-3000:]
    assert en.returncode == 0, en.stderr[-3000:]

    source_zh = re.escape("合成语料（n=120，test_n=30，seed=0）")
    expected_zh = [
        rf"数据：{source_zh}：训练集 90，验证集 10，测试集 30（词元 id (来自缓存|已计算并缓存)，分词器 .*s1_23_tokenizer\.py）",
        r"模型：.*s1_23_classifier\.py：[\d,]+ 个参数，dim 32，1 层，2 个头，ff 64；设备 cpu，fp32；注意力快速路径：已启用（1 个模块）",
        rf"预训练数据：{source_zh}：120 条无标签文本 \+ 120 条训练集文本（已去掉标签）；从中抽取 100 条（--limit）",
        re.escape("预训练：为 [MASK] = 50260，词元嵌入从 50,260 行增加到 50,261 行（微调时 vocab_size 为 50,261）"),
        r"预训练：嵌入表统一乘以 0\.\d{4}，使词元嵌入表的标准差与 BERT 一样为 0\.02（编码器的计算结果不变；"
        r"绑定权重的输出头的初始损失接近 ln 50,261 = 10\.8）",
        r"预训练（掩码语言模型，.*s1_23_mlm\.py）：3 步，每步从 100 条文本中取 16 条，mask_prob 0\.15，lr 0\.003，设备 cpu",
        r"预训练第 3/3 步：被掩码词元的损失 \d+\.\d{4}（在 50,261 个 id 上均匀猜测为 10\.82）",
        "输出：" + re.escape(str(zh_out)),
        r"第 (\d+)/\1 步（epoch 1）：训练损失 \d+\.\d{4}，验证损失 \d+\.\d{4}，准确率 \d+\.\d{2}%，[\d,]+ 词元/秒  \[最佳，已保存\]",
        r"测试集（最佳检查点，第 \d+ 步）：准确率 \d+\.\d{2}%，损失 \d+\.\d{4}",
        "已写入 "
        + "、".join(
            re.escape(str(zh_out / name))
            for name in ("metrics.json", "curves.png", "cls_attention.png", "best.safetensors")
        ),
    ]
    for pattern in expected_zh:
        assert len(lines_matching(zh.stdout, pattern)) == 1, (pattern, zh.stdout)

    # the English lines, as kata train has always printed them
    source_en = re.escape("synthetic corpus (n=120, test_n=30, seed=0)")
    expected_en = [
        rf"data: {source_en}: train 90, validation 10, test 30 \(token ids (from the cache|computed and cached), "
        r"tokenizer .*s1_23_tokenizer\.py\)",
        r"model: .*s1_23_classifier\.py: [\d,]+ parameters, dim 32, 1 layers, 2 heads, ff 64; device cpu, fp32; "
        r"attention fast path: on \(1 modules\)",
        rf"pre-training data: {source_en}: 120 unlabelled texts \+ 120 train texts \(labels removed\); "
        r"100 of them drawn \(--limit\)",
        re.escape(
            "pre-training: the token embedding grows from 50,260 to 50,261 rows for [MASK] = 50260 "
            "(fine-tune with vocab_size 50,261)"
        ),
        r"pre-training: the embedding tables are scaled by 0\.\d{4}, so the token table's spread is 0\.02 as BERT's "
        r"\(the encoder computes the same; the tied head's first loss is near ln 50,261 = 10\.8\)",
        r"pre-training \(masked-language model, .*s1_23_mlm\.py\): 3 steps of 16 texts from 100, mask_prob 0\.15, "
        r"lr 0\.003, device cpu",
        r"pre-training step 3/3: masked-token loss \d+\.\d{4} \(a uniform guess over 50,261 ids: 10\.82\)",
        "output: " + re.escape(str(en_out)),
        r"step (\d+)/\1 \(epoch 1\): train loss \d+\.\d{4}, validation loss \d+\.\d{4}, accuracy \d+\.\d{2}%, "
        r"[\d,]+ tokens/s  \[best, saved\]",
        r"test \(best checkpoint, step \d+\): accuracy \d+\.\d{2}%, loss \d+\.\d{4}",
        "wrote "
        + ", ".join(
            re.escape(str(en_out / name))
            for name in ("metrics.json", "curves.png", "cls_attention.png", "best.safetensors")
        ),
    ]
    for pattern in expected_en:
        assert len(lines_matching(en.stdout, pattern)) == 1, (pattern, en.stdout)
    assert not re.search(r"[\u3400-\u9fff]", en.stdout + en.stderr)
    english_starts = ("data:", "model:", "pre-training", "output:", "step ", "test (", "wrote ")
    assert not [line for line in zh.stdout.splitlines() if line.startswith(english_starts)], zh.stdout

    # metrics.json: the same English texts whatever the language of the run
    zh_m, en_m = (json.loads((out / "metrics.json").read_text()) for out in (zh_out, en_out))
    for m in (zh_m, en_m):
        assert m["data"]["source"] == "synthetic corpus (n=120, test_n=30, seed=0)"
        assert m["pretrain"]["data"] == (
            "synthetic corpus (n=120, test_n=30, seed=0): 120 unlabelled texts + "
            "120 train texts (labels removed); 100 of them drawn (--limit)"
        )
        assert m["fast_attention"] == {"modules": 1, "reason": ""}
    assert zh_m.keys() == en_m.keys() and len(zh_m["history"]) == len(en_m["history"]) == 1


@needs_ranks
def test_an_unfinished_exercise_and_a_bad_data_source_are_named_in_chinese(tmp_path):
    mine = tmp_path / "mine" / "ch01"
    mine.mkdir(parents=True)
    for name in MODEL_FILES:
        (mine / name).write_text((ROOT / "solutions/ch01" / name).read_text())
    stub = mine / "s1_23_classifier.py"
    stub.write_text((ROOT / "exercises/ch01/s1_23_classifier.py").read_text())
    r = kata_in(
        "zh",
        "train",
        "--code",
        str(tmp_path / "mine"),
        "--data",
        "synthetic:100",
        "--out",
        str(tmp_path / "o"),
        *TINY,
        flag=False,
    )  # KATA_LANG=zh
    assert r.returncode == 2, r.stdout + r.stderr
    assert re.search(
        rf"{re.escape(str(stub))}:\d+：尚未实现（.*）；请完成 s1_23_classifier 练习，"
        r"或者用 --code reference 训练参考解答",
        r.stderr,
    ), r.stderr
    assert "Traceback" not in r.stderr and "not implemented" not in r.stderr

    missing = tmp_path / "nope.csv"
    r = kata_in("zh", "train", "--data", str(missing), "--out", str(tmp_path / "o"), *TINY)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"kata train: 数据：{missing}：没有这个文件或文件夹" in r.stderr.splitlines(), r.stderr
    r = kata("train", "--data", str(missing), "--out", str(tmp_path / "o"), *TINY)
    assert f"kata train: data: {missing}: no such file or folder" in r.stderr.splitlines(), r.stderr
    assert not (tmp_path / "o").exists()


def test_a_data_error_is_in_the_readers_language_and_a_corpus_keeps_english_for_its_records(monkeypatch, tmp_path):
    from grader.capstone import data
    from grader.capstone.data import sources
    from grader.course.messages import Msg

    monkeypatch.setenv("KATA_LANG", "zh")
    with pytest.raises(data.DataError) as e:
        data.load_local(tmp_path / "nope")
    assert str(e.value) == f"{tmp_path / 'nope'}：没有这个文件或文件夹"
    assert e.value.msg.render("en") == f"{tmp_path / 'nope'}: no such file or folder"

    texts, described = data.unlabelled_texts_described("synthetic:4")
    assert str(described) == "合成语料（n=4，test_n=1，seed=0）：4 条无标签文本 + 4 条训练集文本（已去掉标签）"
    assert (
        texts.info.description
        == "synthetic corpus (n=4, test_n=1, seed=0): 4 unlabelled texts + 4 train texts (labels removed)"
    )

    def hub_fails(unlabelled=False):
        raise data.DataError(
            Msg.key(
                "data_hub_failed", name="'imdb'", how=Msg.key("data_hub_offline"), error="ConnectionError: no network"
            )
        )

    monkeypatch.setattr(sources, "load_from_hub", hub_fails)
    root = tmp_path / "aclImdb"
    for split in ("train", "test"):
        for label in ("pos", "neg"):
            (root / split / label).mkdir(parents=True)
            (root / split / label / "0_5.txt").write_text(f"a {label} review")
    corpus = data.load_imdb(root, use_hub=True)
    assert corpus.source == f"aclImdb folder {root}" and str(corpus.source_msg) == f"aclImdb 文件夹 {root}"
    assert corpus.notes == [
        "datasets.load_dataset('imdb') offline, from the cache failed (ConnectionError: no network)"
    ]
    monkeypatch.setenv("KATA_IMDB", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(sources, "data_dir", lambda: tmp_path / "no-data")
    with pytest.raises(data.DataError) as e:
        data.load_imdb()
    assert str(e.value).startswith(
        "IMDb 不可用：datasets.load_dataset('imdb')（离线，从缓存读取） 失败（ConnectionError: "
        f"no network）；{tmp_path / 'elsewhere'} 处没有本地副本；"
    )
