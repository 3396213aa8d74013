"""gatherbook.figures: every public drawing function draws, fits a phone, and keeps to the style.

The sizes tested here are what the browser tests (tests/site/test_figure_layout.py) rely on: no figure
wider than style.MAX_WIDTH and no text smaller than style.FS_MIN.
"""
import ast
import pathlib

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import gatherbook  # noqa: E402
from gatherbook import args, figures  # noqa: E402
from gatherbook.figures import style  # noqa: E402

X = torch.arange(12.0).reshape(3, 4)
I = torch.tensor([[0, 2], [1, 1], [3, 0]])

# one call of every public drawing function, with the arguments the notebooks use
CALLS = {
    "draw_gather 1-d": lambda: figures.draw_gather(torch.arange(6) * 10, 0, torch.tensor([5, 0, 2])),
    "draw_gather 2-d": lambda: figures.draw_gather(X, 1, I),
    "draw_gather 3-d": lambda: figures.draw_gather(torch.arange(24).reshape(2, 3, 4), 2,
                                                   torch.zeros(2, 3, 1, dtype=torch.long)),
    "draw_gather tagged": lambda: figures.draw_gather(torch.arange(40).reshape(4, 10), 1,
                                                      torch.arange(40).reshape(4, 10) % 10),
    "draw_gather explain": lambda: figures.draw_gather(torch.arange(24).reshape(2, 3, 4), 1,
                                                       torch.tensor([[[2, 0, 1, 1]], [[0, 0, 2, 1]]]),
                                                       explain=(1, 0, 2)),
    "draw_index_shapes": lambda: figures.draw_index_shapes((3, 4), 1),
    "draw_padding": lambda: figures.draw_padding(["__abcde", "abcdefg"], torch.tensor([[0, 0, 1, 1, 1, 1, 1], [1] * 7]),
                                                 left=True),
    "draw_padding widest": lambda: figures.draw_padding(["ab_cd_______", "abcdefghijk_"] * 2,
                                                        torch.tensor([[1] * 5 + [0] * 7, [1] * 11 + [0]] * 2)),
    "draw_token_logprobs_3d": lambda: figures.draw_token_logprobs_3d(-torch.rand(2, 4, 6) * 5,
                                                                     torch.tensor([[1, 4, 0, 5], [2, 2, 3, 0]])),
    "draw_tensors": lambda: figures.draw_tensors({"expected": X, "got": X + 1}, mark={"got": X > 3}),
    "draw_scatter": lambda: figures.draw_scatter(torch.zeros(3, 4), 1, I, torch.ones(3, 2), reduce="add"),
    "draw_scatter mean": lambda: figures.draw_scatter(torch.zeros(4), 0, torch.tensor([0, 0, 2]),
                                                      torch.tensor([1.0, 2.0, 3.0]), reduce="mean",
                                                      include_self=False),
    "draw_q_picks": lambda: figures.draw_q_picks({"q.gather(1, actions.unsqueeze(1))":
                                                  (torch.rand(4, 3), torch.tensor([0, 2, 1, 1]))}),
    "draw_grid_policy": lambda: figures.draw_grid_policy(["SFFF", "FHFH", "FFFH", "HFFG"],
                                                         torch.rand(16, 4), path=[0, 4, 8]),
    "draw_shift": lambda: figures.draw_shift("Alice was"),
    "draw_char_logprobs": lambda: figures.draw_char_logprobs(
        {"model": ("Alice was beginning to get very tired, sitting b", -torch.rand(47) * 8)}),
    "draw_token_mask": lambda: figures.draw_token_mask(["ab ", "cd "], torch.tensor([[1, 2, 2], [1, 2, 0]]),
                                                       ["pad", "prompt", "done"]),
    # Fig 2.4's arguments: 33 columns, which once drew letters at 8 CSS px on a phone
    "draw_token_mask long": lambda: figures.draw_token_mask(
        ["h dear! Oh dear! I shall be late!", "n another moment down went Alice "],
        torch.tensor([[1] * 17 + [2] * 16, [1] * 17 + [2] * 15 + [0]]),
        ["~in_text", "in_text & ~is_scored", "is_scored"], title="targets = labels[:, 1:]"),
    "draw_patches": lambda: figures.draw_patches({"x[0]": torch.rand(16, 12)}, (4, 4), labels={"x[0]": torch.arange(16)}),
    "draw_patch_rows": lambda: figures.draw_patch_rows({"kept[0]": torch.rand(5, 12)}),
    "draw_images": lambda: figures.draw_images({"img": torch.rand(8, 8, 3)}, patch=4),
    "draw_peaks": lambda: figures.draw_peaks({"token_logprobs(logits, ids)": 3_000_000, "fused": 10**6},
                                             reference=4_000_000),
    "draw_errors": lambda: figures.draw_errors([0, 1, 2], {"bf16": [1e-3, 1e-2, 0.0], "fp16": [1e-6] * 3},
                                               xlabel="c"),
    "draw_curves": lambda: figures.draw_curves([0, 1, 2], {'log["err"]': [3, 2, 1], 'log["goal"]': [False, True, True]}),
    "draw_ratios": lambda: figures.draw_ratios({"x[rows, ids]": 1.0, "one-hot": 1585.0}, xlabel="t / t(x)"),
}


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.mark.parametrize("name", CALLS)
def test_every_figure_fits_a_phone_and_keeps_its_text_readable(name):
    fig = CALLS[name]()
    width, _ = fig.get_size_inches()
    assert width <= style.MAX_WIDTH + 1e-9, f"{name}: {width} in wide"
    sizes = style.text_sizes(fig)
    text_pt, value_pt = float(sizes[style.TEXT_PT_KEY]), float(sizes[style.VALUE_PT_KEY])
    assert text_pt >= style.FS_MIN, f"{name}: text at {text_pt} pt"
    # a 390 px phone's 343 px column shows the figure (plus Jupyter's 0.1 in crop padding a side)
    # at this scale; the cell values must stay at 9 CSS px, as tests/site/test_figure_layout.py
    # measures in the browser
    phone = min(1.0, 343 / ((width + 0.2) * style.DPI))
    assert value_pt * style.DPI / 72 * phone >= 9, f"{name}: values at {value_pt} pt, {phone:.2f} of full size"
    assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0)


def test_text_sizes_are_the_smallest_text_and_value_and_travel_in_the_png():
    import io

    fig = figures.draw_gather(X, 1, I)
    sizes = style.text_sizes(fig)
    assert sizes == {style.TEXT_PT_KEY: f"{style.FS_NUMBER:g}", style.VALUE_PT_KEY: f"{style.FS_VALUE:g}"}
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata=sizes)
    assert f"{style.VALUE_PT_KEY}\0{style.FS_VALUE:g}".encode() in buffer.getvalue()


def test_every_public_name_is_in_the_kit():
    public = {"draw_gather", "draw_index_shapes", "draw_padding", "draw_token_logprobs_3d", "draw_tensors", "draw_scatter", "draw_shift", "draw_char_logprobs",
              "draw_token_mask", "draw_q_picks", "draw_grid_policy", "draw_patches", "draw_patch_rows",
              "draw_images", "draw_peaks", "draw_errors", "draw_curves", "draw_ratios"}
    assert public <= set(figures.__all__)
    assert {c.split()[0] for c in CALLS} == public


def test_a_wide_row_of_panels_wraps_and_cells_keep_one_size():
    fig = figures.draw_gather(X, 1, I)
    cells = [a for a in fig.findobj(matplotlib.patches.Rectangle) if (a.get_gid() or "").startswith("input[")]
    assert len(cells) == 12
    axes_tops = sorted({round(ax.get_position().y1, 3) for ax in fig.axes})
    assert len(axes_tops) == 2, "input, index on one row; out below"


def test_draw_gather_states_the_rule_it_breaks():
    with pytest.raises(ValueError, match=r"index\[0, 1\] is 4, out of range.*0 \.\. 3"):
        figures.draw_gather(X, 1, torch.tensor([[0, 4]]))
    with pytest.raises(ValueError, match="takes no negative indices"):
        figures.draw_gather(X, 1, torch.tensor([[-1]]))
    with pytest.raises(ValueError, match=r"index.size\(0\) is 4 but input.size\(0\) is 3"):
        figures.draw_gather(X, 1, torch.zeros(4, 1, dtype=torch.long))
    with pytest.raises(ValueError, match="A bool mask is not an index"):
        figures.draw_gather(X, 1, X > 3)


def _marked(fig) -> set[str]:
    return {a.get_gid()[len("mark:"):] for a in fig.findobj(matplotlib.patches.Rectangle)
            if (a.get_gid() or "").startswith("mark:")}


def _texts(fig, gid: str) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_gid() == gid]


@pytest.mark.parametrize("dim, pos, read, line", [
    (1, (2, 1), "input[2,3]", "out[2][1] = input[2][index[2][1]] = input[2][3]"),
    (0, (0, 1), "input[2,1]", "out[0][1] = input[index[0][1]][1] = input[2][1]"),
])
def test_explain_marks_the_three_cells_and_writes_the_replaced_coordinate(dim, pos, read, line):
    index = torch.tensor([[0, 2], [1, 1], [3, 3]]) if dim == 1 else torch.tensor([[1, 2]])
    fig = figures.draw_gather(X, dim, index, explain=pos)
    at = ",".join(map(str, pos))
    assert _marked(fig) == {read, f"index[{at}]", f"out[{at}]"}
    segments = [t for t in fig.texts + fig.artists if isinstance(t, matplotlib.text.Text) and t.get_gid() == "value"]
    assert "".join(t.get_text() for t in segments) == line
    boxed = [t.get_text() for t in segments if t.get_bbox_patch() is not None]
    assert boxed == [f"index[{pos[0]}][{pos[1]}]", read[-2] if dim else read[-4]]


def test_explain_names_the_position_it_needs():
    with pytest.raises(AssertionError, match=r"a position of index, a tuple of 2 int\(s\) such as \(0, 0\)"):
        figures.draw_gather(X, 1, I, explain=(1,))
    with pytest.raises(AssertionError, match=r"explain=\(3, 0\) lies outside index, of shape \(3, 2\)"):
        figures.draw_gather(X, 1, I, explain=(3, 0))
    with pytest.raises(TypeError, match=r"explain\[1\] must be an int"):
        figures.draw_gather(X, 1, I, explain=(1, 0.5))


def test_index_shape_verdicts_are_what_torch_gather_does():
    shapes = [(3, 1), (3, 9), (2, 4), (4, 1), (3,)]
    texts = _texts(figures.draw_index_shapes((3, 4), 1, shapes=shapes), "value")
    rows = {tuple(texts[i::len(shapes)]) for i in range(len(shapes))}  # a column after another
    assert ("(3, 1)", "(3, 1)", "fine", "") in rows
    assert ("(3, 9)", "(3, 9)", "fine", "size(1): 9 > 4 ok") in rows
    assert ("(2, 4)", "(2, 4)", "silent", "reads input[:2, :]") in rows
    assert ("(4, 1)", "-", "error", "size(0): 4 > 3") in rows
    assert ("(3,)", "-", "error", "ndim 1 != 2") in rows
    assert len(rows) == len(shapes)
    for verdict, face in style.VERDICT_FACES.items():  # the words read on their colours
        assert style.contrast_ratio(style.ink_on(face), face) >= 4.5, verdict


def test_index_shapes_refuses_what_it_cannot_draw():
    with pytest.raises(AssertionError, match=r"input_shape: 1 to 3 sizes"):
        figures.draw_index_shapes([3, 4], 1)
    with pytest.raises(AssertionError, match=r"dim=2 is out of range for input_shape \(3, 4\)"):
        figures.draw_index_shapes((3, 4), 2)
    with pytest.raises(AssertionError, match=r"shapes\[0\]: a tuple of sizes"):
        figures.draw_index_shapes((3, 4), 1, shapes=[[3, 1]])


def test_padding_lines_labels_under_the_positions_that_score_them():
    mask = torch.tensor([[0, 0, 1, 1, 1]])
    fig = figures.draw_padding(["__abc"], mask, left=True)
    values = _texts(fig, "value")
    rows = [values[k * 5:(k + 1) * 5] for k in range(5)]
    assert rows[0] == list("__abc") and rows[3] == list("_abc") + [""]
    assert rows[4] == ["0", "1", "1", "1", ""]
    assert _marked(fig) == {"b0[3,1]"}, "the first real token, scored from a padding position"
    assert _marked(figures.draw_padding(["abc__"], mask.flip(1))) == set()


def test_padding_says_which_side_its_mask_pads():
    with pytest.raises(AssertionError, match=r"mask\[0\] = \[0, 1, 1\] is not right-padded: pass left=True"):
        figures.draw_padding(["_ab"], torch.tensor([[0, 1, 1]]))
    with pytest.raises(AssertionError, match="one length L"):
        figures.draw_padding(["ab", "abc"], torch.ones(2, 2))
    with pytest.raises(AssertionError, match="only 0"):
        figures.draw_padding(["ab"], torch.tensor([[1, 2]]))


def test_grid_policy_writes_each_cells_greedy_arrow_and_value_and_outlines_the_path():
    q = torch.tensor([[0.0, 0.1, 0.5, 0.2], [0.0, 0.9, 0.3, 0.2], [0.0] * 4, [0.0] * 4])
    fig = figures.draw_grid_policy(["SF", "HG"], q, path=[0, 1])  # S: right; F: down
    assert _texts(fig, "value") == ["S▶ 0.50", "▼ 0.90", "H", "G"]
    assert _marked(fig) == {"policy[0,0]", "policy[0,1]"}
    with pytest.raises(AssertionError, match=r"path: states in \[0, 4\)"):
        figures.draw_grid_policy(["SF", "HG"], q, path=[4])


def test_token_logprobs_3d_picks_one_cell_per_position():
    logp = -torch.rand(2, 3, 5)
    tokens = torch.tensor([[4, 0, 2], [1, 1, 3]])
    fig = figures.draw_token_logprobs_3d(logp, tokens)
    assert _marked(fig) == {f"logp[{b}][{t},{int(tokens[b, t])}]" for b in range(2) for t in range(3)}
    out = logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    assert _texts(fig, "value")[-6:] == [f"{v:.2f}" for v in out.reshape(-1).tolist()]
    with pytest.raises(AssertionError, match=r"tokens: shape \(B, L\) = \(2, 3\)"):
        figures.draw_token_logprobs_3d(logp, tokens[:, :2])
    with pytest.raises(AssertionError, match=r"tokens: ids in 0 \.\. 4"):
        figures.draw_token_logprobs_3d(logp, tokens + 1)


def test_the_argument_vocabulary_speaks_one_way():
    with pytest.raises(TypeError, match=r"^x must be a torch.Tensor, got list. Convert it"):
        args.tensor("x", [1])
    with pytest.raises(ValueError, match=r"^x must have 2 dimension\(s\), got shape \(3,\).$"):
        args.tensor("x", torch.zeros(3), ndim=2)
    with pytest.raises(TypeError, match="^dim must be an int, got bool True.$"):
        args.integer("dim", True)
    with pytest.raises(ValueError, match="^patch must be an int >= 1, got 0.$"):
        args.integer("patch", 0, least=1)
    with pytest.raises(TypeError, match=r"^x\[1\] must be a number, got str 'a'.$"):
        args.reals("x", [1, "a"])
    with pytest.raises(ValueError, match="caption"):
        style.label("title", "图")
    with pytest.raises(ValueError, match="at least one entry"):
        style.mapping("tensors", {})
    assert style.label("title", None, optional=True) is None


# --- style lives in one module -----------------------------------------------------------------
_STYLE_KEYWORDS = {"color", "colors", "facecolor", "edgecolor", "fontsize", "size", "labelsize",
                   "cmap", "c", "fc", "ec", "foreground", "labelcolor"}
_STYLE_CALLS = {"get_cmap", "colormaps", "rc", "rcParams"}


def _style_literals(path: pathlib.Path) -> list[str]:
    """Colours, font sizes and colour maps written as literals in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.keyword) and node.arg in _STYLE_KEYWORDS:
            if isinstance(node.value, ast.Constant) and node.value.value is not None:
                found.append(f"{path.name}:{node.lineno} {node.arg}={node.value.value!r}")
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in _STYLE_CALLS:
            if any(isinstance(a, ast.Constant) for a in node.args):
                found.append(f"{path.name}:{node.lineno} {node.func.attr}(...)")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value.startswith("#") and len(node.value) in (4, 7, 9)
                and all(c in "0123456789abcdefABCDEF" for c in node.value[1:])):
            found.append(f"{path.name}:{node.lineno} {node.value}")
        if isinstance(node, ast.Constant) and node.value in ("viridis", "cividis", "gray", "white", "black"):
            found.append(f"{path.name}:{node.lineno} {node.value!r}")
    return found


def test_style_is_the_only_module_that_sets_colours_sizes_and_colour_maps():
    package = pathlib.Path(gatherbook.__file__).parent
    modules = [p for p in package.rglob("*.py") if p != package / "figures" / "style.py"]
    assert len(modules) > 10
    found = [f for p in modules for f in _style_literals(p)]
    assert found == []
    assert _style_literals(package / "figures" / "style.py"), "the detector finds nothing even in style.py"


def test_style_colour_maps_are_colour_blind_safe_and_inks_read():
    assert style.SEQUENTIAL == "cividis"
    for face in style.PALETTE + style.STATE_FACES:
        assert style.contrast_ratio(style.ink_on(face), face) >= 4.5
    assert style.contrast_ratio(style.QUIET_INK, style.QUIET_FACE) >= style.MIN_QUIET_CONTRAST
    # a 390 px phone's 343 px column shows the widest figure (plus Jupyter's 0.1 in crop padding
    # a side) with its cell values at 9 CSS px or more
    assert style.FS_VALUE * style.DPI / 72 * 343 / ((style.MAX_WIDTH + 0.2) * style.DPI) >= 9
    # a 741 px desktop column shows every figure whole: no text below 10 CSS px
    assert style.MAX_WIDTH * style.DPI <= 741 and style.FS_MIN * style.DPI / 72 >= 10


def test_each_public_drawing_function_names_its_chapter_in_its_source():
    package = pathlib.Path(figures.__file__).parent
    docs = {node.name: ast.get_docstring(node) or "" for p in package.glob("*.py")
            for node in ast.walk(ast.parse(p.read_text(encoding="utf8"))) if isinstance(node, ast.FunctionDef)}
    drawing = [n for n in figures.__all__ if n.startswith("draw_")] + ["bars", "lines", "draw_routing"]
    missing = [n for n in drawing if "Introduced in " not in docs[n]]
    assert not missing, f"no 'Introduced in ...' in the docstrings of {missing}"
    for name in drawing:
        if name in gatherbook.__all__:
            assert f"Introduced in Chapter {gatherbook.chapter_of(name)}." in docs[name], name


def test_a_puzzle_case_is_drawn_by_the_grid_renderer_and_fits_a_phone():
    from gatherbook.exercises.messages import scalar
    from gatherbook.figures.checks import draw_case

    got = torch.tensor([1.5, 0.25, 3.0])
    fig = draw_case([("x", torch.arange(36).reshape(4, 3, 3), "input"), ("k", 2, "input"),
                     ("expected", torch.tensor([1.5, 0.2501, 3.0]), "expected"), ("yours", got, "yours")],
                    mark=torch.tensor([False, True, False]), fmt=scalar)
    width, _ = fig.get_size_inches()
    assert width * style.DPI <= 360, "4 slices of 3 x 3 wrap within 360 px"
    assert style.text_sizes(fig)[style.VALUE_PT_KEY] == f"{style.FS_VALUE:g}"
    assert _marked(fig) == {"yours[1]"}
    assert "0.2501" in _texts(fig, "value"), "floats as the check prints them"
    assert {"x[0]", "x[3]"} <= {t.get_text() for t in fig.texts}, "every slice, labelled"
    assert draw_case([("yours", "IndexError", "yours")]) is not None, "an error's name is one cell"
    assert draw_case([("x", torch.zeros(9, 2), "input")]) is None, "too many rows to draw"


def _box(fig, gid: str):
    """Where the cell called ``gid`` is drawn, in display units (y up)."""
    fig.draw_without_rendering()
    return next(a for a in fig.findobj(matplotlib.patches.Rectangle) if a.get_gid() == gid).get_window_extent()


def _failed(expected: torch.Tensor, got: torch.Tensor, **inputs):
    from types import SimpleNamespace

    from gatherbook.exercises.messages import scalar
    from gatherbook.figures.checks import draw_failed_case

    differs = expected != got if expected.shape == got.shape else None
    result = SimpleNamespace(status="failed", kind="values" if differs is not None else "shape",
                             inputs=tuple(inputs.values()), expected=expected, got=got, differs=differs)
    return draw_failed_case(result, tuple(inputs), scalar)


def test_a_failed_puzzle_case_draws_yours_beside_the_expected_on_one_scale():
    expected = torch.tensor([[4.0, 5.0], [8.0, 1.5]])
    fig = _failed(expected, torch.tensor([[4.0, 5.0], [8.0, -10.25]]), x=torch.arange(12).reshape(3, 4),
                  idx=torch.tensor([2, 0, 3]))
    e, y, x = _box(fig, "expected[1,1]"), _box(fig, "yours[1,1]"), _box(fig, "x[2,3]")
    assert y.x0 > e.x1 and abs(y.y0 - e.y0) < 0.5, "yours beside the expected, row in line with row"
    assert abs(y.width - e.width) < 0.5, "one scale: cells of one width (-10.25 is wider than 1.5)"
    assert x.y0 > e.y1, "the inputs above"
    assert _marked(fig) == {"yours[1,1]"}
    assert fig.get_size_inches()[0] <= style.MAX_WIDTH
    plt.close(fig)


def test_a_failed_case_too_wide_side_by_side_is_stacked():
    """Rows of 10: expected and yours side by side would be wider than a figure may be."""
    expected = torch.arange(20).reshape(2, 10)
    fig = _failed(expected, expected.flip(1), x=expected)
    e, y = _box(fig, "expected[1,0]"), _box(fig, "yours[0,0]")
    assert abs(y.x0 - e.x0) < 0.5 and y.y1 < e.y0, "yours under the expected"
    assert fig.get_size_inches()[0] <= style.MAX_WIDTH
    plt.close(fig)


def test_a_failed_case_taller_than_a_phone_screen_is_left_to_the_text():
    """Nine inputs of ten values: about 1,000 px on a phone, more than its screen."""
    expected = torch.arange(16).reshape(8, 2)
    assert _failed(expected, expected + 1, **{f"x{k}": torch.arange(10) * 111 for k in range(9)}) is None
    assert _failed(expected, expected + 1, **{f"x{k}": torch.arange(10) * 111 for k in range(2)}) is not None


def test_a_failed_case_of_several_slices_pairs_slice_k_with_slice_k():
    """(2, 2, 2) beside (2, 2, 2) is too wide in one row: expected[k] | yours[k], row by row."""
    expected = torch.arange(8).reshape(2, 2, 2) * 11
    fig = _failed(expected, expected + 1, x=torch.arange(20).reshape(5, 4))
    e0, y0, e1 = _box(fig, "expected[0,1,1]"), _box(fig, "yours[0,1,1]"), _box(fig, "expected[1,0,0]")
    assert y0.x0 > e0.x1 and abs(y0.y0 - e0.y0) < 0.5 and e1.y1 < e0.y0
    plt.close(fig)
