"""A reader who types a question, or pastes an error, into the site's search finds the answer.

The questions page (notebooks/<code>/09_questions.ipynb) answers what readers ask about gather
and scatter, each answer under a heading in the words they use. These queries were written the
way a reader types them into a search box (lower case, no question mark, a pasted message with
its exception's name, Chinese words mixed with the English terms Chinese readers use: one-hot,
gather_nd, index_select), not copied from the headings. For each, the page that answers it is
among the first three hits of the site's search in a real browser (Chromium), as in
``test_search_errors.py``: ``search.html?q=<query>``.
"""
from __future__ import annotations

import pytest

from gatherbook_sphinx.search import synonyms
# the search box of test_search_errors.py, and the pages of its hits without their #section
from test_search_errors import pages, search  # noqa: F401 (a fixture)

QUESTIONS = "09_questions"
DECODER = "06_pitfalls_performance"

# (query, the pages that answer it: any of them among the first three hits)
ENGLISH = [
    ("how to export torch.gather to onnx", {QUESTIONS}),
    ("GatherElements not supported tensorrt", {QUESTIONS}),
    ("tf.gather_nd equivalent in pytorch", {QUESTIONS}),
    ("pytorch version of tf.scatter_nd", {QUESTIONS}),
    ("flat argmax index to row col coordinates", {QUESTIONS}),
    ("torch.take linear index", {QUESTIONS}),
    ("sample feature map at x y points gather", {QUESTIONS}),
    ("batched index_select different index per batch", {QUESTIONS}),
    ("argmax per segment scatter", {QUESTIONS}),
    ("segment softmax over neighbours", {QUESTIONS}),
    ("scatter_add float32 count stops at 16777216", {QUESTIONS}),
    ("index_copy duplicate indices gradient", {QUESTIONS}),
    ("label smoothing scatter_ vs cross_entropy label_smoothing", {QUESTIONS}),
    ("log probs of tokens from generate output_scores", {QUESTIONS}),
    ("why is the log probability of a sequence the sum", {QUESTIONS}),
    ("mps topk scatter_ assertion", {QUESTIONS}),
    ("gather vs index_select", {QUESTIONS}),
    ("undo shuffle inverse permutation", {QUESTIONS}),
    ("RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, "
     "different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_gather)",
     {QUESTIONS, DECODER}),
    ("RuntimeError: gather_out_cpu(): Expected dtype int64 for index", {QUESTIONS, DECODER}),
    ("RuntimeError: scatter_add_cuda_kernel does not have a deterministic implementation, but you "
     "set 'torch.use_deterministic_algorithms(True)'", {QUESTIONS, DECODER}),
]
CHINESE = [
    ("pytorch 实现 gather_nd", {QUESTIONS}),
    ("scatter_ 生成 one-hot 标签", {QUESTIONS}),
    ("独热 标签", {QUESTIONS}),
    ("batched index_select 每个样本 不同 索引", {QUESTIONS}),
    ("分段 softmax", {QUESTIONS}),
    ("导出 onnx GatherElements", {QUESTIONS}),
    ("generate output_scores 对数概率", {QUESTIONS}),
    ("label smoothing 交叉熵", {QUESTIONS}),
    ("扁平 索引 坐标", {QUESTIONS}),
    ("RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, "
     "different from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_gather)",
     {QUESTIONS, DECODER}),
]
CASES = [("en", q, pages) for q, pages in ENGLISH] + [("zh", q, pages) for q, pages in CHINESE]


@pytest.mark.parametrize("edition, query, answers", CASES,
                         ids=[f"{e}-{q[:40]}" for e, q, _ in CASES])
def test_a_reader_s_question_finds_its_answer_in_the_first_three(search, edition, query, answers):
    found = pages(search(edition, query))
    wanted = {f"{edition}/notebooks/{edition}/{name}.html" for name in answers}
    assert wanted & set(found[:3]), f"{edition}: searching {query!r} found {found[:5]}"


def test_one_hot_and_its_chinese_name_index_each_other():
    """The Chinese index holds 独热 for a page that says one-hot, and one-hot's words for 独热."""
    assert synonyms("生成 One-hot 标签") == ["独热"]
    assert synonyms("独热编码") == ["one", "hot"]
    assert synonyms("gather 的规则") == []
