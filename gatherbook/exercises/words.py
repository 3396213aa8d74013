"""The words of the package, as the exercises read them: :mod:`gatherbook.wordbook` (one loader for
every module that shows a reader a sentence: the checker, gb.folded, gb.token_logprobs)."""
from gatherbook.wordbook import FOLDER, of, table, text

__all__ = ["FOLDER", "of", "table", "text"]
