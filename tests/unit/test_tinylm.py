"""gatherbook.tinylm (the chapter's tiny language model); its pictures are tested in tests/unit/test_figure_kit.py."""
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


def test_an_empty_batch_has_empty_logits():
    assert TinyLM(5, context=2)(torch.zeros(0, 3, dtype=torch.long)).shape == (0, 3, 5)
