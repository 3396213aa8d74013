"""速查表的代码：book/zh/cheatsheet.md 原样展示本文件的每个区块。

区块从 ``# [name]`` 到 ``# [/name]``；区块前后的代码构造它用到的张量，
并用循环或另一种写法检查注释里的说法。
代码与 ``book/cheatsheet/en.py`` 相同，只有注释不同。
tests/notebooks/test_cheatsheet.py 运行这两个文件，检查代码相同，
并检查每个页面展示了对应文件的全部区块、没有别的代码。
"""
import torch

torch.manual_seed(0)
input = torch.arange(12.).reshape(3, 4) * 10
index = torch.tensor([[3, 0], [1, 1], [2, 0]])

# [rule]
out = input.gather(1, index)                # out[i][j] = input[i][index[i][j]]
# [/rule]
# [loop]
loop = torch.empty(index.shape)             # out 与 index 形状相同
for i in range(index.size(0)):
    for j in range(index.size(1)):
        loop[i][j] = input[i][index[i][j]]  # dim=0 时：input[index[i][j]][j]
# [/loop]
assert torch.equal(out, loop)
index0 = index % 3  # 沿维度 0 不越界
assert torch.equal(input.gather(0, index0), torch.tensor(
    [[input[index0[i][j]][j] for j in range(2)] for i in range(3)]))

target, src = torch.zeros(3, 4), torch.ones(3, 2)
# [scatter]
written = target.scatter(1, index[:, :1], src[:, :1])  # out[i][index[i][j]] = src[i][j]
# [/scatter]
assert written.sum() == 3 and written[0, 3] == written[1, 1] == written[2, 2] == 1
dim = 1

# [shapes]
assert index.ndim == input.ndim                             # 维数相同
assert all(index.size(d) <= input.size(d)                   # 其他维度上 <=
           for d in range(input.ndim) if d != dim)          # （沿 dim 不限）
assert out.shape == index.shape                             # out 与 index 形状相同
assert 0 <= index.min() and index.max() < input.size(dim)   # 不越界，也不能为负
rows = input.gather(1, torch.tensor([[3, 0]]).expand(3, -1))  # 不会广播：自己 expand
# [/shapes]
assert rows.shape == (3, 2) and torch.equal(rows[:, 0], input[:, 3])
assert input.gather(1, torch.tensor([[3, 0]])).shape == (1, 2)  # 不 expand：只有第 0 行

B, L, V, A, D, N, K, C = 2, 5, 7, 3, 4, 6, 3, 5
logits = torch.randn(B, L, V)
ids = torch.randint(0, V, (B, L))
mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]).bool()  # False：填充
# [logprobs]
lp = logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]  # (B, L - 1)
lp = torch.where(mask[:, 1:], lp, 0.0)  # 填充处为 0（乘以 mask：-inf 处会得到 nan）
# [/logprobs]
want = torch.tensor([[logits[b, t].log_softmax(-1)[ids[b, t + 1]] if mask[b, t + 1] else 0.0
                      for t in range(L - 1)] for b in range(B)])
assert lp.shape == (B, L - 1) and torch.allclose(lp, want)

q, actions = torch.randn(B, A), torch.tensor([2, 0])
# [q]
q_sa = q.gather(1, actions[:, None]).squeeze(1)   # (B, A)、(B,) -> (B,)
# [/q]
assert torch.equal(q_sa, torch.stack([q[b, actions[b]] for b in range(B)]))

x, scores, k = torch.randn(B, N, D), torch.randn(B, N), 3
# [topk]
keep = scores.topk(k, dim=1).indices.sort(dim=1).values        # (B, k)，按图像中的顺序
kept = x.gather(1, keep[..., None].expand(-1, -1, D))          # (B, k, D)
# [/topk]
for b in range(B):
    best = sorted(range(N), key=lambda n: -scores[b, n])[:k]
    assert torch.equal(kept[b], x[b, sorted(best)])

perm = torch.rand(B, N).argsort(dim=1)
shuffled = x.gather(1, perm[..., None].expand(-1, -1, D))
# [restore]
back = shuffled.gather(1, perm.argsort(dim=1)[..., None].expand(-1, -1, D))  # == x
# [/restore]
assert torch.equal(back, x)

labels = torch.tensor([2, 0, 4])
# [onehot]
onehot = torch.zeros(len(labels), C).scatter_(1, labels[:, None], 1.0)
# [/onehot]
assert torch.equal(onehot, torch.nn.functional.one_hot(labels, C).float())

values = torch.randint(0, C, (B, 8))
# [histogram]
hist = torch.zeros(B, C).scatter_add_(1, values, torch.ones(values.shape))
# [/histogram]
counts = [torch.bincount(v, minlength=C) for v in values]
assert torch.equal(hist, torch.stack(counts).float())

feats, seg, S = torch.randn(7, D), torch.tensor([0, 0, 2, 2, 2, 3, 3]), 4
# [segment]
sums = torch.zeros(S, D).scatter_add_(0, seg[:, None].expand(-1, D), feats)
count = torch.zeros(S).scatter_add_(0, seg, torch.ones(len(seg)))
mean = sums / count.clamp(min=1)[:, None]          # 空的分段：0
# [/segment]
want = [feats[seg == s].mean(0) if (seg == s).any() else torch.zeros(D)
        for s in range(S)]
assert torch.allclose(mean, torch.stack(want))

scores_v, p = torch.randn(B, V) * 2, 0.8  # (B, V) 的 logits
# [topp]
sorted_logits, order = scores_v.sort(dim=-1, descending=True)
probs = sorted_logits.softmax(-1)
remove_sorted = probs.cumsum(-1) - probs >= p   # 前面的概率和；首个保留
remove = torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)  # 按词表顺序
filtered = scores_v.masked_fill(remove, float("-inf"))
# [/topp]
for b in range(B):
    pr = scores_v[b].softmax(-1)
    for v in range(V):
        above = pr[pr > pr[v]].sum()
        assert bool(remove[b, v]) == bool(above >= p)

T, H = 4, 3
y, token, w = torch.randn(6, H), torch.tensor([0, 0, 1, 2, 2, 3]), torch.rand(6)
# [moe]
out = torch.zeros(T, H).scatter_add_(0, token[:, None].expand(-1, H), w[:, None] * y)
same = torch.zeros(T, H).index_add_(0, token, w[:, None] * y)   # 结果相同，不用 expand
# [/moe]
assert torch.allclose(out, same)
want = [(w[token == t, None] * y[token == t]).sum(0) for t in range(T)]
assert torch.allclose(out, torch.stack(want))

target_q = torch.randn(B)
# [pitfall-shape]
q_sa = q.gather(1, actions[:, None])   # 形状是 (B, 1)，不是 (B,)
wrong = q_sa - target_q                # (B, B)：广播了，不报错
right = q_sa.squeeze(1) - target_q     # (B,)
# [/pitfall-shape]
assert wrong.shape == (B, B) and right.shape == (B,)

logp = torch.randn(1, V).log_softmax(-1)
# [pitfall-take]
ids = torch.tensor([[2, -100]])                                # -100：填充位置的标签
wrapped = torch.take_along_dim(logp, ids, dim=1)              # 读 logp[0, -100 % V]
safe = torch.where(ids != -100, logp.gather(1, ids.clamp(min=0)), 0.0)
# [/pitfall-take]
assert wrapped[0, 1] == logp[0, -100 % V] and safe[0, 1] == 0
try:
    logp.gather(1, ids)
    raise AssertionError("gather accepted -100")
except RuntimeError:
    pass

dup, vals = torch.tensor([0, 0, 1]), torch.tensor([1., 2., 3.])
# [pitfall-dup]
one = torch.zeros(2).scatter_(0, dup, vals)      # out[0]：1 或 2，未指定
add = torch.zeros(2).scatter_add_(0, dup, vals)  # [3., 3.]：重复的相加
# [/pitfall-dup]
assert one[0].item() in (1.0, 2.0) and one[1] == 3 and add.tolist() == [3.0, 3.0]

two = torch.tensor([0, 0])
# [pitfall-self]
kept_zero = torch.zeros(2).scatter_reduce(0, two, torch.tensor([-1., -3.]), "amax")
no_self = torch.zeros(2).scatter_reduce(0, two, torch.tensor([-1., -3.]), "amax",
                                        include_self=False)
# [/pitfall-self]
assert kept_zero.tolist() == [0.0, 0.0] and no_self.tolist() == [-1.0, 0.0]
