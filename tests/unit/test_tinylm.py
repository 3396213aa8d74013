"""gatherbook.tinylm (the chapter's tiny language model) and gatherbook.draw_logprobs (its pictures)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from gatherbook import draw_logprobs  # noqa: E402
from gatherbook.tinylm import ALICE, CharVocab, TinyLM  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_text_and_vocabulary():
    assert ALICE.isascii() and ALICE.startswith("Alice was beginning")
    vocab = CharVocab(ALICE)
    assert len(vocab) == len(set(ALICE)) and vocab.chars == sorted(vocab.chars)
    ids = vocab.encode("Oh dear!")
    assert ids.dtype == torch.long and "".join(vocab.chars[i] for i in ids) == "Oh dear!"
    with pytest.raises(ValueError, match=r"characters \['Z', 'x'\] are not in the vocabulary"):
        vocab.encode("xZ")
    with pytest.raises(ValueError, match="non-empty str"):
        CharVocab("")


def test_model_is_causal_and_shaped():
    torch.manual_seed(0)
    model = TinyLM(10, context=3)
    ids = torch.randint(0, 10, (2, 7))
    logits = model(ids)
    assert logits.shape == (2, 7, 10)
    changed = ids.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 10
    other = model(changed)
    assert torch.equal(logits[:, :4], other[:, :4])  # the future does not leak into the past
    assert not torch.allclose(logits[:, 4], other[:, 4])
    # the window is 3 characters: position 6 no longer sees a change at position 3
    far = ids.clone()
    far[:, 3] = (far[:, 3] + 1) % 10
    assert torch.equal(model(far)[:, 6], logits[:, 6])
    with pytest.raises(ValueError, match=r"\(B, L\) integer tensor; got shape \(7,\)"):
        model(ids[0])


def test_figures_are_white_and_reject_bad_input():
    figs = [
        draw_logprobs.draw_shift("Alice was"),
        draw_logprobs.draw_char_logprobs({"a": ("abc", torch.tensor([-1.0, -20.0]))}, title="t"),
        draw_logprobs.draw_token_mask(["ab ", "cd "], torch.tensor([[1, 2, 2], [1, 2, 0]]), ["pad", "prompt", "done"]),
        draw_logprobs.draw_peaks({"x": 3_000_000, "y": 1_000_000}, reference=4_000_000),
        draw_logprobs.draw_errors([0, 1], {"e": [1e-3, 1e-2], "f": [0.0, 1e-6]}, xlabel="c"),
    ]
    for fig in figs:
        assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"must be a tensor of shape \(2,\).*got \(3,\)"):
        draw_logprobs.draw_char_logprobs({"a": ("abc", torch.zeros(3))})
    with pytest.raises(ValueError, match="ASCII"):
        draw_logprobs.draw_shift("日本")
    with pytest.raises(ValueError, match="at most 24"):
        draw_logprobs.draw_shift("x" * 25)
    with pytest.raises(ValueError, match=r"values must lie in \[0, 2\)"):
        draw_logprobs.draw_token_mask(["ab"], torch.tensor([[0, 2]]), ["pad", "text"])
    with pytest.raises(ValueError, match="2 values for 3 x positions"):
        draw_logprobs.draw_errors([0, 1, 2], {"e": [1, 2]}, xlabel="c")


def test_bad_arguments_are_named():
    vocab = CharVocab("abc")
    with pytest.raises(TypeError, match="CharVocab.encode: text must be a str; got int 5"):
        vocab.encode(5)
    for kwargs in ({"vocab_size": 0}, {"vocab_size": 5, "context": 0}, {"vocab_size": "5"}, {"vocab_size": 5, "dim": 2.0}):
        name = next(k for k, v in kwargs.items() if not (isinstance(v, int) and v >= 1))
        with pytest.raises(ValueError, match=rf"TinyLM: {name} must be a positive int; got {kwargs[name]!r}"):
            TinyLM(**kwargs)
    model = TinyLM(5, context=2)
    with pytest.raises(TypeError, match=r"TinyLM: ids must be a \(B, L\) integer tensor; got list"):
        model([[1, 2]])
    with pytest.raises(ValueError, match=r"TinyLM: ids must lie in \[0, 5\) \(vocab_size=5\); got the id 5"):
        model(torch.tensor([[1, 5]]))  # 5 would silently be the "before the start" embedding
    with pytest.raises(ValueError, match=r"TinyLM: ids must lie in \[0, 5\).*got the id -1"):
        model(torch.tensor([[-1, 2]]))
    with pytest.raises(ValueError, match=r"ids has shape \(2, 0\); each sequence needs at least one token"):
        model(torch.zeros(2, 0, dtype=torch.long))
    assert model(torch.zeros(0, 3, dtype=torch.long)).shape == (0, 3, 5)
