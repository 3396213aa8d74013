"""Every word of the practice ladder, one table per language: the sentences the puzzles add to the
book's checker (``UI``; the rest are the checker's, gatherbook/exercises/_messages.py) and
each puzzle's title, task, one-line explanation of the solution (``why``) and a hint per planted
wrong answer (its key). Numbers appear in the same order in every language (the editions' outputs
are compared number by number)."""
from __future__ import annotations

UI = {
    "en": {
        "passed": "✔ {name}: right on {edges} edge cases and {search} cases hypothesis drew",
        "found": "(this case is the smallest failing one hypothesis found)",
        "kind.forbidden": "your answer calls `{op}`, which this puzzle does not allow.",
        "kind.forbidden_limit": "your answer calls `{op}` more often than the {limit} call this puzzle "
                                "allows.",
        "kind.forbidden_python": "your answer takes values out of a tensor into Python (`{op}`): a "
                                 "loop over elements by another name.",
        "kind.forbidden_index": "`x[tensor]` (indexing with a tensor) is a gather in disguise; "
                                "index with ints, slices, None and ... only.",
        "allowed": "allowed: {ops}",
        "kind.loop": "your answer runs a Python loop (line {line} of your cell runs again): write it "
                     "with tensor operations only.",
        "board.title": "Practice board: {solved} of {n} solved",
        "board.tried": ", {tried} tried and not solved yet",
        "board.legend": "✔ solved   ✘ tried, not solved yet   · not tried",
        "unknown": "There is no puzzle called {name!r}.{close} Puzzles: {names}",
        "close": " Did you mean {close!r}?",
    },
    "zh": {
        "passed": "✔ {name}：{edges} 个边界用例和 hypothesis 生成的 {search} 个用例全部通过",
        "found": "（这是 hypothesis 找到的最小失败用例）",
        "kind.forbidden": "你的答案调用了 `{op}`，这道题不允许使用它。",
        "kind.forbidden_limit": "你的答案调用 `{op}` 的次数超过了这道题允许的 {limit} 次。",
        "kind.forbidden_python": "你的答案把张量里的值取到了 Python 中（`{op}`）：这其实是换了个写法的逐元素循环。",
        "kind.forbidden_index": "`x[tensor]`（用张量做下标）其实是变相的 gather；下标只能用整数、切片、None 和 ...。",
        "allowed": "允许使用：{ops}",
        "kind.loop": "你的答案里有 Python 循环（你的单元格第 {line} 行又执行了一遍）：请只用张量运算来写。",
        "board.title": "练习进度：已解出 {solved} 题（共 {n} 题）",
        "board.tried": "，另有 {tried} 题尝试过、尚未解出",
        "board.legend": "✔ 已解出   ✘ 尝试过、尚未解出   · 还没做",
        "unknown": "没有名为 {name!r} 的题目。{close}全部题目：{names}",
        "close": "你是不是想写 {close!r}？",
    },
}

LEVELS = {
    "en": {1: "Warm-up: 1D and 2D", 2: "3D and expand", 3: "In real code", 4: "Scatter and inverses"},
    "zh": {1: "热身：1D 与 2D", 2: "3D 与 expand", 3: "真实代码中的用法", 4: "scatter 与逆运算"},
}

#: the conditions written in words in the puzzles' signatures ("Shapes" lines), per language;
#: the code (names, shapes, dtypes, ranges) stays as it is
CONDITIONS = {
    "en": [],
    "zh": [("x's dtype", "dtype 同 x"), ("values' dtype", "dtype 同 values"),
           (" (distinct)", "（互不相同）"), ("rows permutations", "每行是一个排列"),
           ("rows sum to 1", "每行之和为 1"), ("a permutation of 0..N-1", "是 0..N-1 的一个排列"),
           ("values distinct within a row", "每行的值互不相同"), ("summing to N >= 1", "之和为 N >= 1"),
           ("L >= max length", "L >= 最长的长度"),
           ("padded's dtype", "dtype 同 padded")],
}


def shapes(signature: str, lang: str) -> str:
    """A puzzle's signature with its conditions in ``lang``."""
    for en, other in CONDITIONS[lang]:
        signature = signature.replace(en, other)
    return signature


# Each puzzle: title, task (what to write), why (the solution in one line), and one hint per
# planted wrong answer, under the wrong answer's key.
PUZZLES = {"en": {}, "zh": {}}
EN, ZH = PUZZLES["en"], PUZZLES["zh"]

# --- level 1 ----------------------------------------------------------------------------------
EN["pick_per_row"] = {
    "title": "Pick one element per row",
    "task": "Row `i` of `x` gives its element in column `idx[i]`.",
    "why": "gather needs an index with as many dims as `x` and returns the index's shape: "
           "unsqueeze going in, squeeze(1) coming out.",
    "forgot_squeeze": "gather returns the index's shape, (B, 1) here: `.squeeze(1)` it to (B,).",
    "bare_squeeze": "a bare `.squeeze()` also drops the batch dim when B = 1, giving () instead of "
                    "(1,): write `.squeeze(1)`.",
    "wrong_dim": "with dim=0 the index picks a row, not a column; the column is what varies, so "
                 "gather along dim=1.",
}
ZH["pick_per_row"] = {
    "title": "每行取一个元素",
    "task": "`x` 的第 `i` 行给出它在第 `idx[i]` 列的元素。",
    "why": "gather 要求索引与 `x` 的维数相同，结果的形状与索引相同：进去前 unsqueeze，出来后 squeeze(1)。",
    "forgot_squeeze": "gather 的结果形状与索引相同，这里是 (B, 1)：再 `.squeeze(1)` 得到 (B,)。",
    "bare_squeeze": "不带参数的 `.squeeze()` 在 B = 1 时会把批次维也去掉，得到 () 而不是 (1,)：请写 `.squeeze(1)`。",
    "wrong_dim": "dim=0 时索引选的是行而不是列；这里变化的是列，所以要沿 dim=1 做 gather。",
}
EN["pick_per_column"] = {
    "title": "Pick one element per column",
    "task": "Column `j` of `x` gives its element in row `idx[j]`.",
    "why": "Along dim=0 the index names rows; as one row of shape (1, M), its entry j sits in column j.",
    "wrong_dim": "with dim=1, idx[j] names a column of row 0; idx[j] is a row number, so gather "
                 "along dim=0.",
    "column_index": "`idx.unsqueeze(1)` is a column (M, 1): all its entries sit in column 0. Make it "
                    "a row, `idx.unsqueeze(0)`.",
    "bare_squeeze": "a bare `.squeeze()` also drops the dim of size M when M = 1: write `.squeeze(0)`.",
}
ZH["pick_per_column"] = {
    "title": "每列取一个元素",
    "task": "`x` 的第 `j` 列给出它在第 `idx[j]` 行的元素。",
    "why": "沿 dim=0 时索引给的是行号；把它变成形状 (1, M) 的一行，第 j 个元素正好位于第 j 列。",
    "wrong_dim": "dim=1 时 idx[j] 表示第 0 行里的列号；而 idx[j] 是行号，所以要沿 dim=0 做 gather。",
    "column_index": "`idx.unsqueeze(1)` 是形状 (M, 1) 的一列：所有元素都在第 0 列。请把它变成一行：`idx.unsqueeze(0)`。",
    "bare_squeeze": "不带参数的 `.squeeze()` 在 M = 1 时会把大小为 M 的维度也去掉：请写 `.squeeze(0)`。",
}
EN["reverse"] = {
    "title": "Reverse a vector",
    "task": "Position `i` of the answer holds `x[N - 1 - i]`. No `flip`: build the index.",
    "why": "The index N-1, N-2, ..., 0 reads x back to front; `arange` with step -1 writes it.",
    "off_by_one": "`N - arange(N)` runs from N down to 1: position N does not exist. Subtract 1 more.",
    "identity": "`arange(N)` reads every position where it is: the index has to count down.",
    "stops_early": "`arange(N - 1, 0, -1)` stops before 0 (the end is excluded): write `arange(N - 1, "
                   "-1, -1)`.",
}
ZH["reverse"] = {
    "title": "把向量倒过来",
    "task": "答案的第 `i` 个位置是 `x[N - 1 - i]`。不许用 `flip`：自己构造索引。",
    "why": "索引 N-1, N-2, ..., 0 从后往前读 x；用步长为 -1 的 `arange` 就能写出它。",
    "off_by_one": "`N - arange(N)` 从 N 数到 1：位置 N 并不存在。还要再减 1。",
    "identity": "`arange(N)` 把每个位置原样读出：索引必须倒着数。",
    "stops_early": "`arange(N - 1, 0, -1)` 在 0 之前就停了（终点不包含在内）：请写 `arange(N - 1, -1, -1)`。",
}
EN["rotate"] = {
    "title": "Rotate every row",
    "task": "Each row moves `k` places to the left, wrapping around: `out[i][j] = x[i][(j + k) % N]`. "
            "No `roll`.",
    "why": "One index row `(arange(N) + k) % N` serves every row; `expand` shares it without a copy.",
    "rotate_right": "`(j - k) % N` rotates to the right; the answer reads column j + k.",
    "no_modulo": "`j + k` runs past the last column: wrap it with `% N`.",
    "index_1d": "gather needs an index with as many dims as x: expand the (N,) index to (B, N).",
}
ZH["rotate"] = {
    "title": "把每一行循环移位",
    "task": "每一行向左移动 `k` 位，移出去的从右边补回来：`out[i][j] = x[i][(j + k) % N]`。不许用 `roll`。",
    "why": "一行索引 `(arange(N) + k) % N` 适用于所有行；`expand` 让各行共用它而不复制。",
    "rotate_right": "`(j - k) % N` 是向右移；答案要读的是第 j + k 列。",
    "no_modulo": "`j + k` 会越过最后一列：用 `% N` 让它绕回来。",
    "index_1d": "gather 要求索引与 x 的维数相同：把 (N,) 的索引 expand 成 (B, N)。",
}
EN["diagonal"] = {
    "title": "The diagonal",
    "task": "`out[i] = x[i][i]`. No `diagonal`/`diag`.",
    "why": "Row i needs column i: the index `arange(N)` as a column (N, 1), gathered along dim=1.",
    "first_row": "`arange(N)` as a row (1, N) along dim=1 reads row 0 only: make it a column, "
                 "`unsqueeze(1)`.",
    "first_column": "along dim=0 the (N, 1) index picks rows of column 0; the column must vary too: "
                    "gather along dim=1.",
    "bare_squeeze": "a bare `.squeeze()` turns (1, 1) into () when N = 1: write `.squeeze(1)`.",
}
ZH["diagonal"] = {
    "title": "对角线",
    "task": "`out[i] = x[i][i]`。不许用 `diagonal`/`diag`。",
    "why": "第 i 行要第 i 列：把索引 `arange(N)` 变成一列 (N, 1)，沿 dim=1 做 gather。",
    "first_row": "把 `arange(N)` 作为一行 (1, N) 沿 dim=1 gather，只读到了第 0 行：请用 `unsqueeze(1)` 把它变成一列。",
    "first_column": "沿 dim=0 时，(N, 1) 的索引选的是第 0 列里的行；列也必须跟着变：请沿 dim=1 做 gather。",
    "bare_squeeze": "N = 1 时，不带参数的 `.squeeze()` 会把 (1, 1) 变成 ()：请写 `.squeeze(1)`。",
}
EN["value_at_argmax"] = {
    "title": "The value where the score is highest",
    "task": "For each row, the entry of `values` in the column where `scores` is largest (ties: the "
            "first). No `max`.",
    "why": "`argmax(dim=1, keepdim=True)` already has the (B, 1) shape gather wants.",
    "argmax_of_values": "the column comes from `scores`, not from `values`.",
    "argmax_dim0": "`argmax(0)` finds the best row of each column; each row needs its best column: "
                   "`argmax(dim=1)`.",
    "no_keepdim": "`argmax(1)` has shape (B,); gather needs (B, 1): `keepdim=True` or `unsqueeze(1)`.",
}
ZH["value_at_argmax"] = {
    "title": "分数最高处的值",
    "task": "对每一行，取 `scores` 最大的那一列上 `values` 的元素（并列时取第一个）。不许用 `max`。",
    "why": "`argmax(dim=1, keepdim=True)` 的形状正是 gather 需要的 (B, 1)。",
    "argmax_of_values": "列号应来自 `scores`，而不是 `values`。",
    "argmax_dim0": "`argmax(0)` 找的是每一列里最好的行；这里每一行要找最好的列：`argmax(dim=1)`。",
    "no_keepdim": "`argmax(1)` 的形状是 (B,)；gather 需要 (B, 1)：加上 `keepdim=True` 或 `unsqueeze(1)`。",
}
EN["last_token"] = {
    "title": "The last real token",
    "task": "Row `i` holds `lengths[i]` real tokens, then padding; return each row's last real token.",
    "why": "The last real token sits at column `lengths - 1`; gather it per row.",
    "no_minus_one": "columns count from 0: the last real token is at `lengths - 1`.",
    "last_column": "`x[:, -1]` is the padding in rows shorter than L: use each row's length.",
    "bare_squeeze": "a bare `.squeeze()` drops the batch dim when B = 1: write `.squeeze(1)`.",
}
ZH["last_token"] = {
    "title": "最后一个真实词元",
    "task": "第 `i` 行先有 `lengths[i]` 个真实词元，后面是填充；返回每行最后一个真实词元。",
    "why": "最后一个真实词元在第 `lengths - 1` 列；按行 gather 出来即可。",
    "no_minus_one": "列号从 0 开始：最后一个真实词元在 `lengths - 1`。",
    "last_column": "对比 L 短的行，`x[:, -1]` 取到的是填充：要用每一行自己的长度。",
    "bare_squeeze": "B = 1 时，不带参数的 `.squeeze()` 会去掉批次维：请写 `.squeeze(1)`。",
}

EN["leading_rows"] = {
    "title": "The ≤ rule: the first R rows",
    "task": "For the first `R` rows of `x` only, row `i` of the answer holds `x[i, cols[k]]` in column "
            "`k`. Do not slice `x`: build an index with `R` rows and let gather read the first `R` rows.",
    "why": "Off `dim`, an index may be smaller than `x` (rule 2: `R <= B`): gather then reads the "
           "first R rows only; `expand` puts `cols` in each of them without a copy.",
    "one_row": "a size-1 dim of the index does not stretch: a (1, K) index reads row 0 only (rule "
               "2). `expand(R, -1)` it to (R, K).",
    "all_rows": "an index with B rows reads every row of `x`; give it R rows and gather reads only "
                "the first R (rule 2: `index.size(0) <= x.size(0)`).",
    "column_index": "`cols.unsqueeze(1)` is a column (K, 1): entry k sits in row k. Make it a row, "
                    "`cols.unsqueeze(0)`, then expand it to R rows.",
}
ZH["leading_rows"] = {
    "title": "≤ 规则：只取前 R 行",
    "task": "只看 `x` 的前 `R` 行：答案第 `i` 行第 `k` 列是 `x[i, cols[k]]`。不要对 `x` 切片：构造一个有 `R` 行的索引，让 gather 只读前 `R` 行。",
    "why": "在 `dim` 以外的维度上，索引可以比 `x` 小（规则 2：`R <= B`）：gather 只读前 R 行；`expand` 把 `cols` 放进每一行，不复制数据。",
    "one_row": "索引里大小为 1 的维度不会自动扩展：形状 (1, K) 的索引只读第 0 行（规则 2）。请用 `expand(R, -1)` 把它变成 (R, K)。",
    "all_rows": "有 B 行的索引会读 `x` 的每一行；给它 R 行，gather 就只读前 R 行（规则 2：`index.size(0) <= x.size(0)`）。",
    "column_index": "`cols.unsqueeze(1)` 是形状 (K, 1) 的一列：第 k 个元素位于第 k 行。请把它变成一行 `cols.unsqueeze(0)`，再扩展成 R 行。",
}

# --- level 2 ----------------------------------------------------------------------------------
EN["rows_of_batch"] = {
    "title": "K rows of each batch item",
    "task": "Item `b` keeps its rows `idx[b]`, each with all `D` features: `out[b][k] = x[b][idx[b][k]]`.",
    "why": "gather's index has the output's shape, (B, K, D): the row numbers `idx`, repeated along the "
           "features by `expand`.",
    "forgot_expand": "an index (B, K, 1) gives (B, K, 1): only feature 0. Expand it to (B, K, D).",
    "repeat_then_view": "`idx.repeat(1, D)` lays the copies out row after row; viewed as (B, K, D) "
                        "they mix rows. Add the axis last: `idx.unsqueeze(-1).expand(-1, -1, D)`.",
    "expand_wrong_axis": "the new axis went in the middle, (B, D, K); put it last: (B, K, D).",
}
ZH["rows_of_batch"] = {
    "title": "每个样本取 K 行",
    "task": "样本 `b` 保留它的第 `idx[b]` 行，每行带全部 `D` 个特征：`out[b][k] = x[b][idx[b][k]]`。",
    "why": "gather 的索引与输出形状相同，都是 (B, K, D)：把行号 `idx` 用 `expand` 沿特征维重复。",
    "forgot_expand": "形状 (B, K, 1) 的索引得到 (B, K, 1)：只取到了第 0 个特征。请把它 expand 成 (B, K, D)。",
    "repeat_then_view": "`idx.repeat(1, D)` 把副本一行接一行地排开；再 view 成 (B, K, D) 会把行弄乱。"
                        "新轴要加在最后：`idx.unsqueeze(-1).expand(-1, -1, D)`。",
    "expand_wrong_axis": "新轴加在了中间，得到 (B, D, K)；应该加在最后：(B, K, D)。",
}
EN["feature_vector"] = {
    "title": "One feature vector per item",
    "task": "Item `b` keeps its one row `idx[b]`: `out[b] = x[b][idx[b]]`, shape (B, D).",
    "why": "The index (B,) becomes (B, 1, D): one row, all its features; squeeze(1) drops the K = 1 axis.",
    "forgot_squeeze": "the index (B, 1, D) gives (B, 1, D): `.squeeze(1)` it to (B, D).",
    "bare_squeeze": "a bare `.squeeze()` also drops B = 1 or D = 1: write `.squeeze(1)`.",
    "forgot_expand": "an index (B, 1, 1) reads feature 0 only: expand it to (B, 1, D).",
}
ZH["feature_vector"] = {
    "title": "每个样本取一个特征向量",
    "task": "样本 `b` 只保留第 `idx[b]` 行：`out[b] = x[b][idx[b]]`，形状 (B, D)。",
    "why": "把 (B,) 的索引变成 (B, 1, D)：一行、它的全部特征；再用 squeeze(1) 去掉 K = 1 的那一维。",
    "forgot_squeeze": "形状 (B, 1, D) 的索引得到 (B, 1, D)：再 `.squeeze(1)` 得到 (B, D)。",
    "bare_squeeze": "不带参数的 `.squeeze()` 在 B = 1 或 D = 1 时也会去掉那一维：请写 `.squeeze(1)`。",
    "forgot_expand": "形状 (B, 1, 1) 的索引只读到第 0 个特征：请把它 expand 成 (B, 1, D)。",
}
EN["pick_per_token"] = {
    "title": "One log-prob per token",
    "task": "`out[b][i] = logp[b][i][ids[b][i]]`: the log-probability of each token.",
    "why": "The token picks the last axis: unsqueeze(2) to (B, L, 1), gather along dim=2, squeeze(2).",
    "wrong_dim": "with dim=1 the token id picks a position, not a vocabulary entry: gather along dim=2.",
    "forgot_squeeze": "the index (B, L, 1) gives (B, L, 1): `.squeeze(2)` it to (B, L).",
    "bare_squeeze": "a bare `.squeeze()` also drops B = 1 or L = 1: write `.squeeze(2)`.",
}
ZH["pick_per_token"] = {
    "title": "每个词元一个对数概率",
    "task": "`out[b][i] = logp[b][i][ids[b][i]]`：每个词元的对数概率。",
    "why": "词元选的是最后一维：unsqueeze(2) 成 (B, L, 1)，沿 dim=2 gather，再 squeeze(2)。",
    "wrong_dim": "dim=1 时词元 id 选的是位置，而不是词表里的词元：请沿 dim=2 做 gather。",
    "forgot_squeeze": "形状 (B, L, 1) 的索引得到 (B, L, 1)：再 `.squeeze(2)` 得到 (B, L)。",
    "bare_squeeze": "不带参数的 `.squeeze()` 在 B = 1 或 L = 1 时也会去掉那一维：请写 `.squeeze(2)`。",
}
EN["same_columns"] = {
    "title": "The same K columns in every row",
    "task": "Item `b` keeps its columns `idx[b]` in every one of its rows: `out[b][n][k] = "
            "x[b][n][idx[b][k]]`.",
    "why": "The index (B, K) is shared by the N rows: (B, 1, K) expanded to (B, N, K), gathered along dim=2.",
    "no_expand": "an index (B, 1, K) is legal (index sizes may be smaller) but reads row 0 only: "
                 "expand it over the N rows.",
    "wrong_axis": "the rows' axis is dim 1: `idx.unsqueeze(1).expand(-1, N, -1)`, not a new last axis.",
    "gather_dim1": "the index holds column numbers: gather along dim=2, not dim=1.",
}
ZH["same_columns"] = {
    "title": "每一行取同样的 K 列",
    "task": "样本 `b` 的每一行都保留第 `idx[b]` 列：`out[b][n][k] = x[b][n][idx[b][k]]`。",
    "why": "(B, K) 的索引由 N 行共用：先变成 (B, 1, K)，expand 成 (B, N, K)，再沿 dim=2 gather。",
    "no_expand": "形状 (B, 1, K) 的索引是合法的（索引的大小可以更小），但只读到第 0 行：请沿 N 行 expand。",
    "wrong_axis": "行所在的是第 1 维：`idx.unsqueeze(1).expand(-1, N, -1)`，而不是在最后加一维。",
    "gather_dim1": "索引里是列号：要沿 dim=2 做 gather，而不是 dim=1。",
}
EN["sliding_windows"] = {
    "title": "Sliding windows",
    "task": "Every window of `w` consecutive values of each row: `out[b][i][j] = x[b][i + j]`. No `unfold`.",
    "why": "There are T = L - w + 1 windows; the index i + j is a (T, w) table from two aranges, and "
           "each row of x is shared by the T windows through `expand`.",
    "no_overlap": "`i * w + j` cuts the row into separate blocks; windows overlap and start one step "
                  "apart: `i + j`.",
    "one_short": "there are L - w + 1 windows, not L - w: the last one starts at L - w.",
    "transposed": "your table is (w, T), T = L - w + 1: the window number must come first, `arange(T)[:, None] + "
                  "arange(w)`.",
}
ZH["sliding_windows"] = {
    "title": "滑动窗口",
    "task": "每一行里每 `w` 个相邻值组成一个窗口：`out[b][i][j] = x[b][i + j]`。不许用 `unfold`。",
    "why": "窗口共有 T = L - w + 1 个；索引 i + j 是由两个 arange 相加得到的 (T, w) 表，x 的每一行经 `expand` 给这 T 个窗口共用。",
    "no_overlap": "`i * w + j` 把行切成互不重叠的块；滑动窗口彼此重叠、每次只前移一格：`i + j`。",
    "one_short": "窗口有 L - w + 1 个，而不是 L - w 个：最后一个从 L - w 开始。",
    "transposed": "你的表是 (w, T)（T = L - w + 1）：窗口编号应在前面，`arange(T)[:, None] + arange(w)`。",
}
EN["pick_layer"] = {
    "title": "A layer for every pixel",
    "task": "`x` stacks `K` images; `idx[n][m]` says which one gives pixel (n, m): `out[n][m] = "
            "x[idx[n][m]][n][m]`.",
    "why": "gather along dim=0 with the index as one layer (1, N, M), then squeeze(0).",
    "forgot_squeeze": "the index (1, N, M) gives (1, N, M): `.squeeze(0)` it to (N, M).",
    "no_unsqueeze": "gather needs an index with 3 dims like x: `idx.unsqueeze(0)`.",
    "bare_squeeze": "a bare `.squeeze()` also drops N = 1 or M = 1: write `.squeeze(0)`.",
}
ZH["pick_layer"] = {
    "title": "为每个像素选一层",
    "task": "`x` 叠放了 `K` 张图；`idx[n][m]` 指明像素 (n, m) 取自哪一张：`out[n][m] = x[idx[n][m]][n][m]`。",
    "why": "把索引变成一层 (1, N, M)，沿 dim=0 gather，再 squeeze(0)。",
    "forgot_squeeze": "形状 (1, N, M) 的索引得到 (1, N, M)：再 `.squeeze(0)` 得到 (N, M)。",
    "no_unsqueeze": "gather 要求索引和 x 一样有 3 维：`idx.unsqueeze(0)`。",
    "bare_squeeze": "不带参数的 `.squeeze()` 在 N = 1 或 M = 1 时也会去掉那一维：请写 `.squeeze(0)`。",
}

# --- level 3 ----------------------------------------------------------------------------------
EN["token_logprobs"] = {
    "title": "Per-token log-probs with shift and padding",
    "task": "Position `i` predicts token `i + 1`: `out[b][i]` is the log-probability that "
            "`log_softmax(logits[b][i])` gives `ids[b][i + 1]`, and 0 where that token is `pad`.",
    "why": "Drop the last position of the logits and the first token (the shift), gather, then zero "
           "the padding.",
    "no_shift": "position i predicts the next token: pair `logits[:, :-1]` with `ids[:, 1:]`.",
    "no_mask": "targets equal to `pad` score 0: `masked_fill(target == pad, 0.0)`.",
    "shift_backwards": "the shift goes the other way: logits of positions 0..L-2 score tokens 1..L-1.",
    "raw_logits": "score log-probabilities, not logits: `log_softmax(dim=-1)` first.",
}
ZH["token_logprobs"] = {
    "title": "带错位与填充的逐词元对数概率",
    "task": "位置 `i` 预测词元 `i + 1`：`out[b][i]` 是 `log_softmax(logits[b][i])` 给 `ids[b][i + 1]` "
            "的对数概率；该词元为 `pad` 时记 0。",
    "why": "去掉 logits 的最后一个位置和词元的第一个（错位），gather，再把填充处置 0。",
    "no_shift": "位置 i 预测的是下一个词元：`logits[:, :-1]` 要和 `ids[:, 1:]` 配对。",
    "no_mask": "目标为 `pad` 的位置记 0：`masked_fill(target == pad, 0.0)`。",
    "shift_backwards": "错位方向反了：位置 0..L-2 的 logits 给词元 1..L-1 打分。",
    "raw_logits": "要取对数概率，而不是 logits：先做 `log_softmax(dim=-1)`。",
}
EN["double_q"] = {
    "title": "Double DQN's target with an action mask",
    "task": "The online net picks the best valid action (`valid[b][a]`; ties: the first), the target "
            "net gives its value: `out[b] = q_target[b][a*]`.",
    "why": "Invalid actions get -inf so argmax never picks them; argmax on q_online, gather from q_target.",
    "no_mask": "argmax may pick an invalid action: fill them with -inf first.",
    "target_argmax": "Double DQN chooses the action with the online net and values it with the "
                     "target net: argmax on `q_online`.",
    "online_value": "the value comes from `q_target`, gathered at the online net's choice.",
}
ZH["double_q"] = {
    "title": "带动作掩码的 Double DQN 目标",
    "task": "在线网络选出最好的合法动作（`valid[b][a]`；并列时取第一个），目标网络给出它的价值："
            "`out[b] = q_target[b][a*]`。",
    "why": "把非法动作填成 -inf，argmax 就不会选中它们；在 q_online 上 argmax，从 q_target 里 gather。",
    "no_mask": "argmax 可能选中非法动作：先把它们填成 -inf。",
    "target_argmax": "Double DQN 用在线网络选动作、用目标网络估价：argmax 要在 `q_online` 上做。",
    "online_value": "价值取自 `q_target`，在在线网络选出的动作处 gather。",
}
EN["topk_in_order"] = {
    "title": "Top-k patches, kept in image order",
    "task": "Keep each item's `k` highest-scoring rows of `x`, in the order they have in the image.",
    "why": "topk gives the positions in score order; sorting them restores image order; expand over D.",
    "score_order": "topk lists positions best first; sort them (`.sort(dim=1).values`) to keep image order.",
    "no_expand": "an index (B, k, 1) keeps feature 0 only: expand it to (B, k, D).",
    "lowest": "`largest=False` keeps the lowest scores: keep the highest.",
}
ZH["topk_in_order"] = {
    "title": "取得分最高的 k 个图像块，保持图像中的顺序",
    "task": "每个样本保留 `x` 中得分最高的 `k` 行，按它们在图像中的顺序排列。",
    "why": "topk 按得分顺序给出位置；排序后恢复图像中的顺序；再沿 D expand。",
    "score_order": "topk 按得分从高到低列出位置；要保持图像中的顺序，还得排序（`.sort(dim=1).values`）。",
    "no_expand": "形状 (B, k, 1) 的索引只保留第 0 个特征：请把它 expand 成 (B, k, D)。",
    "lowest": "`largest=False` 保留的是得分最低的：要保留得分最高的。",
}
EN["unshuffle"] = {
    "title": "Restore a shuffled order",
    "task": "`shuffled = x.gather(1, perm)`; give `x` back.",
    "why": "`perm.argsort(dim=1)` is the inverse permutation; gathering with it puts every element home.",
    "shuffle_again": "gathering with `perm` shuffles a second time; gather with its inverse, "
                     "`perm.argsort(dim=1)`.",
    "argsort_dim0": "each row has its own permutation: `argsort(dim=1)`.",
    "sorted_values": "you sorted the values; the order to undo is the one in `perm`.",
}
ZH["unshuffle"] = {
    "title": "还原打乱的顺序",
    "task": "`shuffled = x.gather(1, perm)`；把 `x` 还原出来。",
    "why": "`perm.argsort(dim=1)` 就是逆置换；用它 gather，每个元素都回到原位。",
    "shuffle_again": "用 `perm` gather 等于又打乱了一次；要用它的逆置换 `perm.argsort(dim=1)`。",
    "argsort_dim0": "每一行有自己的置换：`argsort(dim=1)`。",
    "sorted_values": "你把值排了序；要撤销的是 `perm` 给出的顺序。",
}
EN["beam_step"] = {
    "title": "A beam-search step",
    "task": "Of the K·V scores of each item, the K best (best first) each name a beam `k` and a token "
            "`v`; the new beam is that beam's history plus `v`.",
    "why": "topk over the flattened (K·V) scores; beam = flat // V, token = flat % V; gather the "
           "histories, cat the tokens.",
    "swapped": "in the flat index, the beam varies slowest: beam = flat // V, token = flat % V.",
    "divide_by_k": "each beam has V scores in the flat row, so divide by V, not by K.",
    "no_reorder": "the histories must follow their beams: gather `seqs` with the beam numbers.",
}
ZH["beam_step"] = {
    "title": "束搜索的一步",
    "task": "每个样本有 K·V 个分数，其中最好的 K 个（从高到低）各对应一个束 `k` 和一个词元 `v`；"
            "新的束是那个束的历史加上 `v`。",
    "why": "在展平的 (K·V) 分数上做 topk；束 = flat // V，词元 = flat % V；gather 历史，再 cat 上词元。",
    "swapped": "展平索引里变化最慢的是束：束 = flat // V，词元 = flat % V。",
    "divide_by_k": "展平的一行里每个束有 V 个分数，所以要除以 V，而不是 K。",
    "no_reorder": "历史要跟着它的束走：用束编号 gather `seqs`。",
}
EN["top_p_mask"] = {
    "title": "The top-p mask, back in vocabulary order",
    "task": "Rank each row's tokens by probability (ties: lower id first); keep a token while the mass "
            "ranked above it is below `p`. Return the mask in vocabulary order.",
    "why": "Sort, cumsum minus self is the mass above, compare with p, and scatter the mask back "
           "through the sort's indices.",
    "sorted_order": "the mask is still in sorted order: scatter it back with the sort's indices.",
    "cumsum_lt_p": "`cumsum < p` drops the token that crosses p; compare the mass *above* each "
                   "token, `cumsum - probs`.",
    "gather_not_inverse": "gathering with the sort's indices sorts a second time; scatter with "
                          "them (or gather with their argsort).",
}
ZH["top_p_mask"] = {
    "title": "top-p 掩码，放回词表顺序",
    "task": "按概率给每行的词元排序（并列时 id 小的在前）；只要排在它前面的概率之和仍小于 `p`，就保留该词元。"
            "按词表顺序返回掩码。",
    "why": "排序后 cumsum 减去自身就是排在前面的概率之和，与 p 比较，再用排序的索引把掩码 scatter 回去。",
    "sorted_order": "掩码还是排序后的顺序：用排序得到的索引把它 scatter 回去。",
    "cumsum_lt_p": "`cumsum < p` 会丢掉跨过 p 的那个词元；应比较排在它*前面*的概率之和 `cumsum - probs`。",
    "gather_not_inverse": "用排序的索引 gather 等于又排了一次序；应该用它们 scatter（或用它们的 argsort 来 gather）。",
}

# --- level 4 ----------------------------------------------------------------------------------
EN["inverse_perm"] = {
    "title": "The inverse permutation",
    "task": "`inv[perm[i]] = i`. No `argsort`: write the positions where `perm` says.",
    "why": "scatter writes `i` at position `perm[i]`: exactly the definition.",
    "compose": "`perm.gather(0, perm)` applies perm twice; write `arange` at the positions perm names.",
    "scatter_swapped": "the index says where to write: `scatter(0, perm, arange(N))`, not the other "
                       "way round.",
    "one_based": "positions count from 0: `arange(N)`.",
}
ZH["inverse_perm"] = {
    "title": "逆置换",
    "task": "`inv[perm[i]] = i`。不许用 `argsort`：按 `perm` 指定的位置把位置号写进去。",
    "why": "scatter 把 `i` 写到位置 `perm[i]`：正是定义本身。",
    "compose": "`perm.gather(0, perm)` 是把 perm 作用了两次；应把 `arange` 写到 perm 指定的位置上。",
    "scatter_swapped": "索引表示写到哪里：`scatter(0, perm, arange(N))`，而不是反过来。",
    "one_based": "位置从 0 开始：`arange(N)`。",
}
EN["rank"] = {
    "title": "Rank without argsort twice",
    "task": "`rank[b][i]` = how many values of row `b` are smaller than `x[b][i]` (values distinct). "
            "`argsort` at most once.",
    "why": "argsort gives the order; scattering 0..N-1 through it writes each element's rank at its place.",
    "order_not_rank": "argsort lists positions by rank; the rank of each position is its inverse: "
                      "scatter `arange` through it.",
    "descending": "rank 0 is the smallest value: argsort ascending.",
    "counts_itself": "`>=` counts the value itself: count the strictly smaller ones.",
}
ZH["rank"] = {
    "title": "求名次，不做两次 argsort",
    "task": "`rank[b][i]` = 第 `b` 行中比 `x[b][i]` 小的值的个数（各值互不相同）。`argsort` 最多用一次。",
    "why": "argsort 给出顺序；通过它把 0..N-1 scatter 回去，每个元素的名次就写到了它自己的位置上。",
    "order_not_rank": "argsort 按名次列出位置；每个位置的名次是它的逆：通过它把 `arange` scatter 回去。",
    "descending": "名次 0 是最小的值：argsort 要升序。",
    "counts_itself": "`>=` 把它自己也数进去了：只数严格更小的。",
}
EN["one_hot"] = {
    "title": "One-hot",
    "task": "Row `i` is all 0 but a 1 in column `idx[i]`, int64. No `F.one_hot`.",
    "why": "scatter writes a 1 in column idx[i] of row i; the index (N, 1) names one column per row.",
    "float_dtype": "`torch.zeros(N, C)` is float32: ask for `dtype=torch.int64`.",
    "scatter_dim0": "along dim=0 idx[i] names a row; it names a column: scatter along dim=1.",
    "transposed": "your answer is (C, N): one row per index, one column per class.",
}
ZH["one_hot"] = {
    "title": "独热编码",
    "task": "第 `i` 行全为 0，只有第 `idx[i]` 列为 1，dtype 为 int64。不许用 `F.one_hot`。",
    "why": "scatter 在第 i 行的第 idx[i] 列写入 1；(N, 1) 的索引每行指定一列。",
    "float_dtype": "`torch.zeros(N, C)` 是 float32：请指定 `dtype=torch.int64`。",
    "scatter_dim0": "沿 dim=0 时 idx[i] 表示行号；它表示的是列号：请沿 dim=1 做 scatter。",
    "transposed": "你的答案是 (C, N)：应该每个索引一行、每个类别一列。",
}
EN["histogram"] = {
    "title": "A histogram per row",
    "task": "`out[b][c]` counts the values equal to `c` in row `b` (int64). No `bincount`.",
    "why": "scatter_add adds a 1 to the bin of every value; repeated bins accumulate.",
    "scatter_not_add": "`scatter` keeps one write per bin (so counts of 1); `scatter_add` adds them up.",
    "dim0": "the values name bins within their own row: scatter_add along dim=1.",
    "float_counts": "counts are int64: start from `torch.zeros(B, C, dtype=torch.int64)`.",
}
ZH["histogram"] = {
    "title": "逐行直方图",
    "task": "`out[b][c]` 统计第 `b` 行中等于 `c` 的值的个数（int64）。不许用 `bincount`。",
    "why": "scatter_add 在每个值对应的箱里加 1；重复的箱会累加。",
    "scatter_not_add": "`scatter` 每个箱只保留一次写入（所以计数都是 1）；`scatter_add` 才会累加。",
    "dim0": "值表示的是它所在行里的箱：请沿 dim=1 做 scatter_add。",
    "float_counts": "计数是 int64：从 `torch.zeros(B, C, dtype=torch.int64)` 开始。",
}
EN["segment_sum"] = {
    "title": "Segment sum",
    "task": "`out[s]` is the sum of the values whose `seg` is `s`; an empty segment sums to 0.",
    "why": "scatter_add into S zeros: every value adds itself to its segment.",
    "scatter_last_wins": "`scatter` keeps one value per segment; `scatter_add` sums them.",
    "counts": "you counted the values; add the values themselves.",
    "gather_not_scatter": "gather reads one value per index (shape (N,)); writing into S segments is "
                          "a scatter.",
}
ZH["segment_sum"] = {
    "title": "分段求和",
    "task": "`out[s]` 是 `seg` 等于 `s` 的那些值之和；空段的和为 0。",
    "why": "在 S 个 0 上做 scatter_add：每个值都加到自己的段上。",
    "scatter_last_wins": "`scatter` 每段只保留一个值；`scatter_add` 才会求和。",
    "counts": "你数的是个数；要加的是值本身。",
    "gather_not_scatter": "gather 按每个索引读一个值（形状 (N,)）；写入 S 个段要用 scatter。",
}
EN["segment_max"] = {
    "title": "Segment max",
    "task": "`out[s]` is the largest value whose `seg` is `s`; an empty segment gives 0.",
    "why": "`scatter_reduce(..., 'amax', include_self=False)` ignores the zeros it starts from, so a "
           "negative maximum survives and an empty segment keeps its 0.",
    "include_self": "with `include_self=True` the starting 0 takes part: a segment of negative values "
                    "gives 0. Pass `include_self=False`.",
    "scatter_last_wins": "`scatter` keeps one value per segment; reduce them with `scatter_reduce`.",
    "amin": "`'amin'` takes the smallest; the largest is `'amax'`.",
}
ZH["segment_max"] = {
    "title": "分段最大值",
    "task": "`out[s]` 是 `seg` 等于 `s` 的值中最大的一个；空段为 0。",
    "why": "`scatter_reduce(..., 'amax', include_self=False)` 不理会起始的 0，所以负的最大值得以保留，空段仍为 0。",
    "include_self": "`include_self=True` 时起始的 0 也参与比较：全是负值的段会得到 0。请传入 `include_self=False`。",
    "scatter_last_wins": "`scatter` 每段只保留一个值；要用 `scatter_reduce` 做归约。",
    "amin": "`'amin'` 取最小值；最大值是 `'amax'`。",
}
EN["segment_mean"] = {
    "title": "Segment mean",
    "task": "`out[s]` is the mean of the values whose `seg` is `s`; an empty segment gives 0.",
    "why": "A sum and a count by scatter_add; dividing by the count clamped to at least 1 leaves empty "
           "segments at 0 instead of 0 / 0.",
    "include_self": "with `include_self=True` the starting 0 counts as one more value: pass "
                    "`include_self=False`.",
    "divide_by_n": "divide each segment's sum by its own count, not by N.",
    "nan_on_empty": "an empty segment gives 0 / 0 = nan: clamp the count to at least 1.",
}
ZH["segment_mean"] = {
    "title": "分段均值",
    "task": "`out[s]` 是 `seg` 等于 `s` 的那些值的均值；空段为 0。",
    "why": "用 scatter_add 求和与计数；除以至少为 1 的计数，空段就是 0 而不是 0 / 0。",
    "include_self": "`include_self=True` 时起始的 0 会多算作一个值：请传入 `include_self=False`。",
    "divide_by_n": "每段的和要除以它自己的个数，而不是 N。",
    "nan_on_empty": "空段得到 0 / 0 = nan：把计数下限截到 1。",
}
EN["ragged_to_padded"] = {
    "title": "Ragged to padded",
    "task": "`values` holds the sequences one after another, `lengths[b]` values each; lay them out as "
            "rows of length `L`, padded on the right with `pad`.",
    "why": "Each sequence starts at `cumsum(lengths) - lengths`; read start + j for j < length, pad the rest.",
    "inclusive_starts": "`cumsum(lengths)` is where each sequence *ends*; it starts at "
                        "`cumsum(lengths) - lengths`.",
    "no_mask": "past its length a row reads the next sequence: put `pad` where j >= lengths[b].",
    "left_padded": "this layout pads on the right: values first, then `pad`.",
}
ZH["ragged_to_padded"] = {
    "title": "变长序列转为填充批次",
    "task": "`values` 把各序列首尾相接，第 `b` 个序列有 `lengths[b]` 个值；把它们排成长度为 `L` 的行，"
            "右侧用 `pad` 填充。",
    "why": "每个序列从 `cumsum(lengths) - lengths` 开始；j < 长度时读 start + j，其余填 pad。",
    "inclusive_starts": "`cumsum(lengths)` 是每个序列*结束*的位置；它从 `cumsum(lengths) - lengths` 开始。",
    "no_mask": "超出长度后，这一行读到的是下一个序列：在 j >= lengths[b] 处放 `pad`。",
    "left_padded": "这里要右侧填充：先放值，再放 `pad`。",
}
EN["right_to_left"] = {
    "title": "Right padding to left padding",
    "task": "Row `b` holds `lengths[b]` values, then anything; move the values to the end of the row "
            "and put `pad` in front.",
    "why": "Output column j reads column j - (L - length), taken % L to stay in range; the front "
           "columns get `pad`.",
    "no_mask": "the cells past a length hold anything: put `pad` in the front columns with `where`.",
    "shift_wrong_way": "output column j reads column j - (L - length): shift back, not forward.",
    "mask_wrong_side": "left padding puts `pad` in the *first* L - length columns.",
}
ZH["right_to_left"] = {
    "title": "右侧填充改为左侧填充",
    "task": "第 `b` 行先有 `lengths[b]` 个值，后面是任意内容；把这些值挪到行尾，前面填 `pad`。",
    "why": "输出第 j 列读第 j - (L - 长度) 列，取 % L 保持在范围内；前面的列填 `pad`。",
    "no_mask": "超出长度的格子里是任意内容：用 `where` 在前面的列填 `pad`。",
    "shift_wrong_way": "输出第 j 列读的是第 j - (L - 长度) 列：要往回移，而不是往前。",
    "mask_wrong_side": "左侧填充是在*前* L - 长度 列放 `pad`。",
}
EN["left_to_ragged"] = {
    "title": "Left padding back to one flat sequence",
    "task": "Row `b` ends with its `lengths[b]` values, after `L - lengths[b]` cells of padding "
            "(anything); put all the values one after another, row by row, in a vector of length `N`.",
    "why": "A real cell goes to where its row starts (`cumsum` of the lengths minus the length) "
           "plus its place in the row; scatter writes it there, and the pads go to a spare slot N "
           "that is cut off.",
    "right_padding": "the values sit at the *end* of each row (left padding): a cell is real when its "
                     "column is >= L - length.",
    "no_start": "every row wrote from position 0 of the output: add where the row starts, "
                "`lengths.cumsum(0) - lengths`.",
    "spare_slot_kept": "the spare slot N that took the pads is still at the end: cut it off with "
                       "`[:N]`.",
}
ZH["left_to_ragged"] = {
    "title": "左侧填充还原为一条扁平序列",
    "task": "第 `b` 行先是 `L - lengths[b]` 个填充格（内容任意），行尾才是它的 `lengths[b]` 个值；把所有值按行依次排成一个长度为 `N` 的向量。",
    "why": "真实的格子写到它所在行的起点（长度的 `cumsum` 减去本行长度）再加上它在行内的位置；用 scatter 写过去，填充格都写到多出来的第 N 个位置，最后切掉。",
    "right_padding": "值在每一行的*末尾*（左侧填充）：列号 >= L - 长度 的格子才是真实值。",
    "no_start": "每一行都从输出的第 0 个位置开始写：还要加上这一行的起点 `lengths.cumsum(0) - lengths`。",
    "spare_slot_kept": "接收填充格的第 N 个位置还留在末尾：用 `[:N]` 切掉。",
}
EN["moe_dispatch"] = {
    "title": "Mixture-of-Experts dispatch",
    "task": "Token `n` goes to expert `expert[n]`, into its next free slot (tokens in order); an "
            "expert holds `C` tokens, later ones are dropped. Return the (E, C, D) buffer, 0 where unused.",
    "why": "A cumsum over the one-hot routing gives each token its slot; tokens past C go to a spare "
           "row; one scatter fills the buffer.",
    "no_capacity": "slots >= C spill into the next expert's rows: send those tokens to a spare row "
                   "and drop it.",
    "slot_from_one": "the first token of an expert takes slot 0: subtract 1 from the running count.",
    "global_slot": "the slot counts the tokens of the same expert, not all tokens: cumsum the "
                   "one-hot routing.",
}
ZH["moe_dispatch"] = {
    "title": "混合专家（MoE）的分发",
    "task": "词元 `n` 发往专家 `expert[n]`，放进它的下一个空位（按词元顺序）；每个专家最多容纳 `C` 个词元，"
            "后来的被丢弃。返回 (E, C, D) 的缓冲区，未用的位置为 0。",
    "why": "对独热路由做 cumsum 得到每个词元的空位号；超过 C 的送到备用行；一次 scatter 填满缓冲区。",
    "no_capacity": "空位号 >= C 的词元会溢出到下一个专家的行里：把它们送到一个备用行，最后丢掉。",
    "slot_from_one": "每个专家的第一个词元占 0 号空位：累计计数要减 1。",
    "global_slot": "空位号数的是同一专家的词元，而不是所有词元：对独热路由做 cumsum。",
}
EN["moe_combine"] = {
    "title": "Mixture-of-Experts combine",
    "task": "Token `n` reads its expert's output at `buf[expert[n]][slot[n]]`, times `weight[n]`; a "
            "dropped token (`slot[n] == -1`) gets 0.",
    "why": "View the buffer as (E·C, D) rows; row expert·C + slot, gathered with an index expanded over "
           "D; weight, and zero the dropped.",
    "no_weight": "multiply each token's row by its `weight[n]`.",
    "dropped_kept": "a dropped token (slot -1) must get 0: mask it after the gather.",
    "wrong_layout": "in the (E·C, D) view, expert e's slots are rows e·C .. e·C + C - 1: row = expert·C + slot.",
}
ZH["moe_combine"] = {
    "title": "混合专家（MoE）的合并",
    "task": "词元 `n` 读取它的专家在 `buf[expert[n]][slot[n]]` 处的输出，乘以 `weight[n]`；"
            "被丢弃的词元（`slot[n] == -1`）得 0。",
    "why": "把缓冲区看成 (E·C, D) 的行；第 expert·C + slot 行，用沿 D expand 的索引 gather；乘权重，再把丢弃的置 0。",
    "no_weight": "每个词元的那一行要乘以它的 `weight[n]`。",
    "dropped_kept": "被丢弃的词元（slot 为 -1）必须得 0：gather 之后用掩码处理。",
    "wrong_layout": "在 (E·C, D) 的视图里，专家 e 的空位是第 e·C .. e·C + C - 1 行：行号 = expert·C + slot。",
}


#: the words of the code comments in the loops and solutions (the notebooks' code cells), per
#: language: English is the source's own; a comment that is code notation only (``(B, K) -> (B, K, D)``,
#: ``inv[perm[i]] = i``) reads the same in every language and has no entry
COMMENTS = {
    "en": {},
    "zh": {
        "the practice part's checker, pictures and board": "练习部分的检查、示例图和进度",
        "(N,): the column each output cell reads": "(N,)：每个输出位置读取的列",
        "ties: the first maximum wins": "并列时取第一个最大值",
        "(B, 1): the column of each row's maximum": "(B, 1)：每行最大值所在的列",
        "(K,) -> (1, K) -> (R, K): an index of R <= B rows reads the first R rows of x":
            "(K,) -> (1, K) -> (R, K)：R <= B 行的索引读出 x 的前 R 行",
        "position i predicts the next token": "位置 i 预测下一个词元",
        "padding scores 0": "填充位置记 0",
        "(B, L-1, V): position i predicts token i+1": "(B, L-1, V)：位置 i 预测词元 i+1",
        "ties: the first valid maximum": "并列时取第一个合法动作",
        "invalid actions never win": "非法动作永远不会被选中",
        "(B, 1): chosen by the online net": "(B, 1)：由在线网络选出",
        "valued by the target net": "由目标网络给出价值",
        "the k best": "得分最高的 k 个",
        "in image order": "按图像中的顺序",
        "(B, k), ascending positions": "(B, k)，位置从小到大",
        "shuffled[b][j] came from x[b][perm[b][j]]": "shuffled[b][j] 来自 x[b][perm[b][j]]",
        "each row's inverse permutation": "每一行的逆置换",
        "the K best (beam, token) pairs": "最好的 K 个 (beam, token) 组合",
        "the history of the beam it extends": "它所延续的那个束的历史",
        "and the new token": "再接上新词元",
        "stable: ties by index": "stable：并列时按索引先后",
        "the mass ranked above v is still below p": "排在 v 前面的概率之和仍小于 p",
        "(B, V) each": "两者都是 (B, V)",
        "mass ranked above each": "排在每个词元前面的概率之和",
        "in sorted order": "按排序后的顺序",
        "back to vocab order": "放回词表顺序",
        "order[b][r]: the r-th smallest": "order[b][r]：第 r 小的值所在的位置",
        "row i: a 1 in column idx[i]": "第 i 行：第 idx[i] 列为 1",
        "each value adds 1 to its own bin": "每个值给自己的箱加 1",
        "duplicates in seg add up": "seg 中的重复索引会累加",
        "an empty segment stays 0": "空的分段保持为 0",
        "an empty segment: 0 / 1 = 0": "空的分段：0 / 1 = 0",
        "(B,): where each sequence starts": "(B,)：每个序列的起点",
        "(B, L), kept in range": "(B, L)，保持在范围内",
        "(B, 1): pads to move to the front": "(B, 1)：要挪到前面的填充格数",
        "(B, L): a column in range": "(B, L)：范围内的列",
        "(B, 1): a row's first real column": "(B, 1)：每行第一个非填充的列",
        "(B, 1): where the row goes in out": "(B, 1)：这一行在 out 中的起点",
        "(B, L): each cell's place in out; the pads go to a spare slot N":
            "(B, L)：每个格子在 out 中的位置；填充格放进多出来的位置 N",
        "the expert still has a free slot": "这个专家还有空位",
        "a token past the capacity is dropped": "超出容量的词元被丢弃",
        "(N,) rank in expert": "(N,)：在所属专家中的名次",
        "dropped tokens go to a spare row": "被丢弃的词元放进多出来的一行",
        "slot -1: the token was dropped, its output is 0": "slot 为 -1：该词元已被丢弃，输出为 0",
        "(N,): row of the flat buffer": "(N,)：在展平的缓冲区中的行",
    },
}
