"""gatherbook.tinylm (the chapter's tiny language model); its pictures are tested in tests/unit/test_figures.py."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

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
