"""A tiny character-level causal language model, small enough to train in a second on a CPU.

Used by the chapter on per-token log-probabilities: a real model whose logits are worth
scoring, with no download. The training text is the opening of Lewis Carroll's *Alice's
Adventures in Wonderland* (1865, public domain).
"""
from __future__ import annotations


import torch
from torch import nn
from torch.nn import functional as F

from gatherbook import args

__all__ = ["ALICE", "CharVocab", "TinyLM"]

#: The opening of *Alice's Adventures in Wonderland* (public domain): the text TinyLM trains on.
#: Introduced in Chapter 2.
ALICE = (
    "Alice was beginning to get very tired of sitting by her sister on the bank, and of "
    "having nothing to do: once or twice she had peeped into the book her sister was "
    "reading, but it had no pictures or conversations in it, 'and what is the use of a "
    "book,' thought Alice 'without pictures or conversations?'\n"
    "So she was considering in her own mind (as well as she could, for the hot day made her "
    "feel very sleepy and stupid), whether the pleasure of making a daisy-chain would be "
    "worth the trouble of getting up and picking the daisies, when suddenly a White Rabbit "
    "with pink eyes ran close by her.\n"
    "There was nothing so very remarkable in that; nor did Alice think it so very much out "
    "of the way to hear the Rabbit say to itself, 'Oh dear! Oh dear! I shall be late!' "
    "(when she thought it over afterwards, it occurred to her that she ought to have "
    "wondered at this, but at the time it all seemed quite natural); but when the Rabbit "
    "actually took a watch out of its waistcoat-pocket, and looked at it, and then hurried "
    "on, Alice started to her feet, for it flashed across her mind that she had never before "
    "seen a rabbit with either a waistcoat-pocket, or a watch to take out of it, and burning "
    "with curiosity, she ran across the field after it, and fortunately was just in time to "
    "see it pop down a large rabbit-hole under the hedge.\n"
    "In another moment down went Alice after it, never once considering how in the world "
    "she was to get out again.\n"
    "The rabbit-hole went straight on like a tunnel for some way, and then dipped suddenly "
    "down, so suddenly that Alice had not a moment to think about stopping herself before "
    "she found herself falling down a very deep well.\n"
)


class CharVocab:
    """Characters <-> integer ids. ``CharVocab(text)`` uses the sorted set of ``text``'s characters.

    Introduced in Chapter 2.
    """

    def __init__(self, text: str):
        assert isinstance(text, str) and text, f"text must be a non-empty str, got {text!r}"
        self.chars: list[str] = sorted(set(text))
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """``(len(text),)`` int64 tensor of ids. Raises ValueError naming a character not in the vocabulary."""
        assert isinstance(text, str), f"text must be a str, got {type(text).__name__}"
        missing = sorted(set(text) - set(self._index))
        if missing:
            raise ValueError(
                f"CharVocab.encode: characters {missing!r} are not in the vocabulary "
                f"({len(self)} characters from the training text)."
            )
        return torch.tensor([self._index[c] for c in text], dtype=torch.long)


class TinyLM(nn.Module):
    """Causal character model: the logits at position t depend on ``ids[..., t-context+1 : t+1]``.

    An embedding of the last ``context`` characters (positions before the start see a special
    "start" embedding), concatenated, then a one-hidden-layer MLP. ``forward(ids)`` maps
    ``(B, L)`` int64 ids to ``(B, L, V)`` logits, where ``logits[:, t]`` scores the token at
    position ``t + 1``.

    Introduced in Chapter 2.
    """

    def __init__(self, vocab_size: int, context: int = 8, dim: int = 16, hidden: int = 128):
        for name, value in (("vocab_size", vocab_size), ("context", context), ("dim", dim), ("hidden", hidden)):
            args.integer(name, value, least=1)
        super().__init__()
        self.vocab_size = vocab_size
        self.context = context
        self.embed = nn.Embedding(vocab_size + 1, dim)  # the extra row is "before the start"
        self.mlp = nn.Sequential(nn.Linear(context * dim, hidden), nn.Tanh(), nn.Linear(hidden, vocab_size))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """``(B, L)`` int64 ids in ``[0, vocab_size)`` -> ``(B, L, vocab_size)`` logits."""
        args.tensor("ids", ids, ndim=2, kind="int")
        assert ids.shape[1] > 0, f"ids has shape {tuple(ids.shape)}: each sequence needs a token"
        low, high = ids.aminmax() if ids.numel() else (0, 0)  # B == 0 has no ids
        assert 0 <= int(low) and int(high) < self.vocab_size, f"ids must lie in [0, {self.vocab_size})"
        padded = F.pad(ids, (self.context - 1, 0), value=self.vocab_size)  # (B, L + context - 1)
        windows = padded.unfold(1, self.context, 1)  # (B, L, context): the window ending at t
        return self.mlp(self.embed(windows).flatten(2))  # (B, L, V)
