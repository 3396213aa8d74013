"""Exercise and solution titles written the Chinese way on Chinese pages.

sphinx-exercise 1.2.1 translates its words (练习, 解答) but keeps the English word order and ASCII
brackets: 「练习 1.1 (每行取一个元素)」 and 「解答 练习 1.1 (每行取一个元素)」. On a page whose
``language`` is Chinese this post-transform, which runs after sphinx-exercise's own title
transforms, writes full-width brackets around the exercise's title and puts the solution's
title in Chinese order: 「练习 1.1（每行取一个元素）」 and 「练习 1.1（每行取一个元素）的解答」.
Sphinx's HTML writer ends the number with a space (``<span class="caption-number">练习 1.1
</span>``); before a full-width bracket that space is dropped from the page.
Pages in other languages are left as sphinx-exercise makes them.

A puzzle of the Practice part (an ``{exercise}`` with ``:class: puzzle``, notebooks.PUZZLE) is a
node type of its own, :class:`puzzle_node`, numbered apart from the chapters' exercises and titled
with the edition's ``lab_puzzle_untitled`` words: 「第 9 题（…）」 and 「第 9 题（…）的解答」,
"Puzzle 9 (…)" and "Solution to Puzzle 9 (…)", where sphinx-exercise would say 练习 / Exercise,
the chapters' word.
"""
from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import (depart_exercise_enumerable_node, exercise_enumerable_node,
                                   visit_exercise_enumerable_node)

OPEN, CLOSE = " (", ")"  # what sphinx-exercise writes around a custom title
FULL_OPEN, FULL_CLOSE = "（", "）"


def _is_chinese(app: Sphinx) -> bool:
    """Whether this build's edition writes its titles the Chinese way (gatherbook.editions)."""
    from .editions import this_edition

    return this_edition(app).cjk_titles


class puzzle_node(exercise_enumerable_node):  # noqa: N801 (docutils names nodes so)
    """A numbered ``{exercise}`` that is a puzzle of the Practice part (enumerable as ``puzzle``)."""


#: a puzzle is written as sphinx-exercise writes an exercise
PUZZLE_WRITERS = {w: (visit_exercise_enumerable_node, depart_exercise_enumerable_node)
                  for w in ("html", "singlehtml", "latex")}


def puzzle_numfig(app: Sphinx, config) -> None:
    """``config-inited``: the puzzles' number format, from the edition's words (「第 %s 题」)."""
    from .editions import CONFIG
    from .notebooks import PUZZLE
    from .words import table

    config.numfig_format = {**config.numfig_format,
                            PUZZLE: table(config[CONFIG])["lab_puzzle_untitled"].format(number="%s")}


def mark_puzzles(app: Sphinx, doctree: nodes.document) -> None:
    """``doctree-read``: each numbered exercise with the puzzle class becomes a :class:`puzzle_node`
    (before Sphinx numbers the enumerable nodes), and so does sphinx-exercise's copy of it."""
    from .notebooks import PUZZLE

    registry = getattr(app.env, "sphinx_exercise_registry", {})
    for node in list(doctree.findall(exercise_enumerable_node)):
        if PUZZLE in node["classes"] and type(node) is exercise_enumerable_node:
            node.__class__ = puzzle_node
            copy = (registry.get(node.get("label")) or {}).get("node")
            if type(copy) is exercise_enumerable_node:
                copy.__class__ = puzzle_node


class PuzzleSolutionTitles(SphinxPostTransform):
    """A puzzle's solution is titled with the puzzle's number and word ("Solution to Puzzle 9 (…)"),
    where sphinx-exercise writes "Exercise" and the exercises' number, which a puzzle has not."""

    default_priority = 25  # after sphinx-exercise's titles (20-22), before ChineseExerciseTitles

    def run(self) -> None:
        from sphinx_exercise.nodes import solution_node

        from .notebooks import PUZZLE

        registry = getattr(self.env, "sphinx_exercise_registry", {})
        for node in self.document.findall(solution_node):
            target = (registry.get(node.get("target_label")) or {}).get("node")
            title = node.children[0] if node.children else None
            if not isinstance(target, puzzle_node) or not isinstance(title, nodes.title):
                continue
            reference = next(iter(title.findall(nodes.reference)), None)
            if reference is None or not reference.children or not isinstance(reference.children[0], nodes.Text):
                continue
            numbers = self.env.toc_fignumbers.get(target.get("docname", ""), {}).get(PUZZLE, {})
            number = ".".join(map(str, numbers.get(target["ids"][0], ())))
            reference.replace(reference.children[0],
                              nodes.Text(" " + self.config.numfig_format[PUZZLE] % number))
            node["title"] = title.astext()


def _full_width_brackets(parent: nodes.Element) -> None:
    """Turn the " (" ... ")" Text children that enclose a custom title into （ ... ）."""
    children = parent.children
    opens = [i for i, c in enumerate(children) if isinstance(c, nodes.Text) and str(c) == OPEN]
    closes = [i for i, c in enumerate(children) if isinstance(c, nodes.Text) and str(c) == CLOSE]
    if opens and closes and opens[-1] < closes[-1]:
        parent.replace(children[closes[-1]], nodes.Text(FULL_CLOSE))
        parent.replace(children[opens[-1]], nodes.Text(FULL_OPEN))


class ChineseExerciseTitles(SphinxPostTransform):
    """Full-width brackets in exercise titles, and 「练习 N（…）的解答」 for solutions."""

    default_priority = 30  # after sphinx-exercise's title transforms (20, 21, 22)

    def run(self) -> None:
        if not _is_chinese(self.app):
            return
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

        for node in self.document.findall(lambda n: isinstance(n, (exercise_node, exercise_enumerable_node))):
            title = node.children[0] if node.children else None
            if isinstance(title, nodes.title):
                _full_width_brackets(title)
        for node in self.document.findall(solution_node):
            title = node.children[0] if node.children else None
            if not isinstance(title, nodes.title) or len(title.children) != 2:
                continue
            word, reference = title.children
            if not isinstance(word, nodes.Text) or not isinstance(reference, nodes.reference):
                continue
            first = reference.children[0] if reference.children else None
            if isinstance(first, nodes.Text):  # " 练习 1.1": drop the space that followed 解答
                reference.replace(first, nodes.Text(str(first).lstrip()))
            _full_width_brackets(reference)
            title.remove(word)
            title += nodes.Text(f"的{str(word).strip()}")  # 「练习 1.1（…）的解答」
            node["title"] = title.astext()


# the number's trailing space, where a full-width bracket follows it
_NUMBER_SPACE = re.compile(r'(<span class="caption-number">[^<]*?) </span>' + FULL_OPEN)


def no_space_before_full_width_bracket(app: Sphinx, context: dict) -> None:
    """Drop the space Sphinx 7.4's HTML writer puts after a caption number, before （."""
    if _is_chinese(app) and "body" in context:
        context["body"] = _NUMBER_SPACE.sub(r"\1</span>" + FULL_OPEN, context["body"])
