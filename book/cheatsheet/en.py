"""The cheat sheet's code: book/en/cheatsheet.md shows each region of this file as is.

A region runs from ``# [name]`` to ``# [/name]``; the lines around it make the tensors
it uses and check, with a loop or a second way, what its comments claim.
``book/cheatsheet/zh.py`` is the same code with Chinese comments.
tests/notebooks/test_cheatsheet.py runs both files, checks that their code is the same,
and that each page shows every region of its file and no other code.
"""
import torch

torch.manual_seed(0)
input = torch.arange(12.).reshape(3, 4) * 10
index = torch.tensor([[3, 0], [1, 1], [2, 0]])

# [rule]
out = input.gather(1, index)                # out[i][j] = input[i][index[i][j]]
# [/rule]
# [loop]
loop = torch.empty(index.shape)             # out has index's shape
for i in range(index.size(0)):
    for j in range(index.size(1)):
        loop[i][j] = input[i][index[i][j]]  # dim=0: input[index[i][j]][j]
# [/loop]
assert torch.equal(out, loop)
index0 = index % 3  # in range along dim 0
assert torch.equal(input.gather(0, index0), torch.tensor(
    [[input[index0[i][j]][j] for j in range(2)] for i in range(3)]))

target, src = torch.zeros(3, 4), torch.ones(3, 2)
# [scatter]
written = target.scatter(1, index[:, :1], src[:, :1])  # out[i][index[i][j]] = src[i][j]
# [/scatter]
assert written.sum() == 3 and written[0, 3] == written[1, 1] == written[2, 2] == 1
dim = 1

# [shapes]
assert index.ndim == input.ndim                             # same number of dims
assert all(index.size(d) <= input.size(d)                   # <= in every other dim
           for d in range(input.ndim) if d != dim)          # (any size along dim)
assert out.shape == index.shape                             # out has index's shape
assert 0 <= index.min() and index.max() < input.size(dim)   # in range, never negative
rows = input.gather(1, torch.tensor([[3, 0]]).expand(3, -1))  # no broadcasting: expand
# [/shapes]
assert rows.shape == (3, 2) and torch.equal(rows[:, 0], input[:, 3])
assert input.gather(1, torch.tensor([[3, 0]])).shape == (1, 2)  # not expanded: row 0

B, L, V, A, D, N, K, C = 2, 5, 7, 3, 4, 6, 3, 5
logits = torch.randn(B, L, V)
ids = torch.randint(0, V, (B, L))
mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]).bool()  # False: padding
# [logprobs]
lp = logits[:, :-1].log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]  # (B, L - 1)
lp = torch.where(mask[:, 1:], lp, 0.0)  # padding counts 0 (* mask: nan where lp is -inf)
# [/logprobs]
want = torch.tensor([[logits[b, t].log_softmax(-1)[ids[b, t + 1]] if mask[b, t + 1] else 0.0
                      for t in range(L - 1)] for b in range(B)])
assert lp.shape == (B, L - 1) and torch.allclose(lp, want)

q, actions = torch.randn(B, A), torch.tensor([2, 0])
# [q]
q_sa = q.gather(1, actions[:, None]).squeeze(1)   # (B, A), (B,) -> (B,)
# [/q]
assert torch.equal(q_sa, torch.stack([q[b, actions[b]] for b in range(B)]))

x, scores, k = torch.randn(B, N, D), torch.randn(B, N), 3
# [topk]
keep = scores.topk(k, dim=1).indices.sort(dim=1).values        # (B, k), in image order
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
mean = sums / count.clamp(min=1)[:, None]          # an empty segment: 0
# [/segment]
want = [feats[seg == s].mean(0) if (seg == s).any() else torch.zeros(D)
        for s in range(S)]
assert torch.allclose(mean, torch.stack(want))

scores_v, p = torch.randn(B, V) * 2, 0.8  # (B, V) logits
# [topp]
sorted_logits, order = scores_v.sort(dim=-1, descending=True)
probs = sorted_logits.softmax(-1)
remove_sorted = probs.cumsum(-1) - probs >= p   # mass before each token; the 1st stays
remove = torch.zeros_like(remove_sorted).scatter(-1, order, remove_sorted)  # by token
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
same = torch.zeros(T, H).index_add_(0, token, w[:, None] * y)   # the same, no expand
# [/moe]
assert torch.allclose(out, same)
want = [(w[token == t, None] * y[token == t]).sum(0) for t in range(T)]
assert torch.allclose(out, torch.stack(want))

target_q = torch.randn(B)
# [pitfall-shape]
q_sa = q.gather(1, actions[:, None])   # (B, 1), not (B,)
wrong = q_sa - target_q                # (B, B): broadcast, no error
right = q_sa.squeeze(1) - target_q     # (B,)
# [/pitfall-shape]
assert wrong.shape == (B, B) and right.shape == (B,)

logp = torch.randn(1, V).log_softmax(-1)
# [pitfall-take]
ids = torch.tensor([[2, -100]])                                # -100: the padding label
wrapped = torch.take_along_dim(logp, ids, dim=1)              # reads logp[0, -100 % V]
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
one = torch.zeros(2).scatter_(0, dup, vals)      # out[0]: 1 or 2, unspecified
add = torch.zeros(2).scatter_add_(0, dup, vals)  # [3., 3.]: duplicates add
# [/pitfall-dup]
assert one[0].item() in (1.0, 2.0) and one[1] == 3 and add.tolist() == [3.0, 3.0]

two = torch.tensor([0, 0])
# [pitfall-self]
kept_zero = torch.zeros(2).scatter_reduce(0, two, torch.tensor([-1., -3.]), "amax")
no_self = torch.zeros(2).scatter_reduce(0, two, torch.tensor([-1., -3.]), "amax",
                                        include_self=False)
# [/pitfall-self]
assert kept_zero.tolist() == [0.0, 0.0] and no_self.tolist() == [-1.0, 0.0]
