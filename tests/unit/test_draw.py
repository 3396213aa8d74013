"""Unit tests of gatherbook.draw: layout, colour links, validation (agreeing with torch.gather)."""
import matplotlib

matplotlib.use("Agg")

from io import BytesIO  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from gatherbook import draw  # noqa: E402
from gatherbook.draw import draw_gather, draw_tensors  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def cells(fig: Figure) -> dict[str, tuple[tuple, str]]:
    """gid of every cell ("index[1,0]") -> (facecolor RGBA, the text written in it)."""
    found = {}
    for ax in fig.axes:
        texts = {(round(t.get_position()[0], 3), round(t.get_position()[1], 3)): t.get_text() for t in ax.texts}
        for patch in ax.patches:
            gid = patch.get_gid()
            if isinstance(patch, Rectangle) and gid and not gid.startswith("mark:"):
                x, y = patch.get_xy()
                found[gid] = (tuple(patch.get_facecolor()), texts[(round(x + 0.5, 3), round(y + 0.5, 3))])
    return found


def gid(name: str, pos: tuple[int, ...]) -> str:
    return f"{name}[{','.join(map(str, pos))}]"


def all_text(fig: Figure) -> list[str]:
    texts = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        texts += [t.get_text() for t in ax.texts]
    return texts


def png(fig: Figure) -> bytes:
    buf = BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def random_index(input: torch.Tensor, dim: int, shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    size = input.shape[dim] if input.ndim else 1
    return torch.randint(0, size, shape, generator=torch.Generator().manual_seed(seed))


# (input shape, dim, index shape, number of axes: one per 2-d slice of input, index and out)
SHAPES = [
    ((), 0, (), 3),
    ((), -1, (3,), 3),
    ((6,), 0, (4,), 3),
    ((6,), -1, (9,), 3),
    ((5,), 0, (), 3),
    ((3, 4), 0, (2, 4), 3),
    ((3, 4), 1, (3, 2), 3),
    ((3, 4), -1, (2, 6), 3),
    ((2, 3, 4), 0, (3, 2, 4), 2 + 3 + 3),
    ((2, 3, 4), 1, (2, 2, 4), 2 + 2 + 2),
    ((2, 3, 4), 2, (1, 3, 5), 2 + 1 + 1),
    ((2, 3, 4), -2, (2, 5, 3), 2 + 2 + 2),
]


@pytest.mark.parametrize("xshape, dim, ishape, n_axes", SHAPES)
def test_gather_picture_shows_torch_result_and_links_colours(xshape, dim, ishape, n_axes):
    x = torch.arange(int(np.prod(xshape)) or 1).reshape(xshape) * 10
    index = random_index(x, dim, ishape)
    fig = draw_gather(x, dim, index)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == n_axes
    out = torch.gather(x, dim, index)
    found = cells(fig)
    ndim = max(x.ndim, 1)
    for pos in np.ndindex(*ishape):
        src = list(pos) if pos else [0]
        src[dim % ndim] = int(index[pos])
        src = tuple(src) if x.ndim else ()
        in_face, in_text = found[gid("input", src)]
        idx_face, idx_text = found[gid("index", pos)]
        out_face, out_text = found[gid("out", pos)]
        assert idx_text == str(int(index[pos]))
        assert out_text == str(int(out[pos])) == in_text
        assert idx_face == out_face == in_face, f"index{pos} is not coloured like input{src}"
        assert in_face != to_rgba(draw._UNSELECTED_FACE)


def test_link_ids_of_a_known_example():
    index = torch.tensor([[0, 2], [1, 3], [3, 3]])
    input_ids, index_ids = draw._link_ids((3, 4), 1, index)
    np.testing.assert_array_equal(input_ids, [[0, -1, 1, -1], [-1, 2, -1, 3], [-1, -1, -1, 4]])
    np.testing.assert_array_equal(index_ids, [[0, 1], [2, 3], [4, 4]])
    input_ids, index_ids = draw._link_ids((3, 4), 0, torch.tensor([[2, 0, 2, 2]]))
    np.testing.assert_array_equal(input_ids, [[-1, 0, -1, -1], [-1, -1, -1, -1], [1, -1, 2, 3]])
    np.testing.assert_array_equal(index_ids, [[1, 0, 2, 3]])


def test_selected_cells_get_distinct_colours_and_unselected_stay_grey():
    x = torch.arange(12).reshape(3, 4)
    index = torch.tensor([[0, 1], [1, 2], [2, 3]])
    found = cells(draw_gather(x, 1, index))
    selected = {(0, 0), (0, 1), (1, 1), (1, 2), (2, 2), (2, 3)}
    faces = {pos: found[gid("input", pos)][0] for pos in np.ndindex(3, 4)}
    assert len({faces[p] for p in selected}) == len(selected)  # fewer than the palette's 9 colours
    assert {faces[p] for p in faces if p not in selected} == {to_rgba(draw._UNSELECTED_FACE)}
    assert len(draw._PALETTE) == len(set(draw._PALETTE)) >= 8
    assert to_rgba(draw._UNSELECTED_FACE) not in {to_rgba(c) for c in draw._PALETTE}


def tags(fig: Figure) -> dict[str, str]:
    """gid of every cell -> the link number written in its corner ("" when it has none)."""
    found = {}
    for ax in fig.axes:
        corner = {(round(t.get_position()[0], 3), round(t.get_position()[1], 3)): t.get_text()
                  for t in ax.texts if t.get_gid() == "tag"}
        for patch in ax.patches:
            if isinstance(patch, Rectangle) and patch.get_gid() and not patch.get_gid().startswith("mark:"):
                x, y = patch.get_xy()
                w = patch.get_width()
                found[patch.get_gid()] = next((v for (cx, cy), v in corner.items()
                                               if x <= cx < x + w and y <= cy < y + 0.5), "")
    return found


def assert_colour_and_tag_name_the_source(fig: Figure, x: torch.Tensor, dim: int, index: torch.Tensor):
    """Every index and out cell looks exactly like the input cell it reads (colour and link
    number), and no two different read input cells look alike."""
    found, tag = cells(fig), tags(fig)
    look = {g: (found[g][0], tag[g]) for g in found}
    read = set()
    for pos in np.ndindex(*index.shape):
        src = list(pos)
        src[dim] = int(index[pos])
        source = gid("input", tuple(src))
        read.add(source)
        assert look[gid("index", pos)] == look[gid("out", pos)] == look[source], (pos, source)
    looks = [look[g] for g in read]
    assert len(set(looks)) == len(looks), "two different source cells share colour and number"


def test_more_selected_cells_than_colours_get_link_numbers():
    x = torch.arange(20).reshape(2, 10)
    index = torch.arange(10).repeat(2, 1)
    input_ids, _ = draw._link_ids((2, 10), 1, index)
    assert input_ids.max() == 19
    fig = draw_gather(x, 1, index)
    found, tag = cells(fig), tags(fig)
    n = len(draw._PALETTE)
    assert found[gid("input", (0, 0))][0] == found[gid("input", divmod(n, 10))][0]  # colours repeat
    assert tag[gid("input", (0, 0))] == "0" and tag[gid("input", divmod(n, 10))] == str(n)
    assert_colour_and_tag_name_the_source(fig, x, 1, index)


def test_the_3d_dim0_picture_of_chapter_1_names_every_source():
    """Chapter 1's dim=0 example reads 12 input cells, more than the 9 colours."""
    a = torch.arange(24).reshape(2, 3, 4)
    idx_d0 = torch.tensor([[[0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]]])
    fig = draw_gather(a, 0, idx_d0)
    assert_colour_and_tag_name_the_source(fig, a, 0, idx_d0)
    faces = [cells(fig)[gid("index", p)][0] for p in np.ndindex(1, 3, 4)]
    assert len(set(faces)) < 12  # colour alone would not do


@pytest.mark.parametrize("xshape, dim, ishape, n_axes", SHAPES)
def test_every_picture_links_by_colour_and_numbers_only_when_needed(xshape, dim, ishape, n_axes):
    x = torch.arange(int(np.prod(xshape)) or 1).reshape(xshape) * 10
    index = random_index(x, dim, ishape)
    fig = draw_gather(x, dim, index)
    if x.ndim and index.ndim:  # (0-d pairs are covered by the test above)
        assert_colour_and_tag_name_the_source(fig, x, dim % x.ndim, index)
    read = len(set(draw._link_ids(tuple(x.shape), dim % max(x.ndim, 1), index)[1].reshape(-1).tolist()))
    assert any(tags(fig).values()) == (read > len(draw._PALETTE))


def test_unread_cells_are_quiet_but_legible():
    from gatherbook import style

    fig = draw_gather(torch.arange(12).reshape(3, 4), 1, torch.tensor([[0], [1], [2]]))
    ax = fig.axes[0]
    unread = [p for p in ax.patches if p.get_gid() == "input[0,3]"][0]
    text = [t for t in ax.texts if t.get_position() == (3.5, 0.5)][0]
    assert style.contrast_ratio(text.get_color(), unread.get_facecolor()) >= 3.0
    assert style.contrast_ratio(text.get_color(), unread.get_facecolor()) < style.contrast_ratio(
        style.INK, style.PAPER)  # still quieter than the values that are read


def test_gather_labels_are_code_identifiers():
    x = torch.randn(3, 4)
    fig = draw_gather(x, 1, torch.tensor([[0, 2], [1, 3], [3, 3]]))
    texts = all_text(fig)
    for label in ("input  (3, 4)", "index  (3, 2)", "out = input.gather(1, index)  (3, 2)", "dim=1"):
        assert label in texts
    for ax, (rows, cols) in zip(fig.axes, [(3, 4), (3, 2), (3, 2)]):  # row and column numbers
        assert [t.get_text() for t in ax.texts if t.get_gid() == "col"] == [str(j) for j in range(cols)]
        assert [t.get_text() for t in ax.texts if t.get_gid() == "row"] == [str(i) for i in range(rows)]
    assert all(text.isascii() for text in texts)
    assert to_rgba(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)


def test_gather_3d_labels_every_slice_and_keeps_dim_as_written():
    x = torch.arange(24).reshape(2, 3, 4)
    fig = draw_gather(x, -1, torch.zeros(2, 3, 2, dtype=torch.long), title="ex 3")
    texts = all_text(fig)
    for label in ("input[0]", "input[1]", "index[1]", "out[0]", "out[1]", "dim=-1", "ex 3",
                  "out = input.gather(-1, index)  (2, 3, 2)"):
        assert label in texts


def test_floats_get_two_decimals_ints_stay_ints():
    x = torch.tensor([[1.0, -0.125, 2.5]])
    found = cells(draw_gather(x, 1, torch.tensor([[2, 0]], dtype=torch.int32)))
    assert [found[gid("input", (0, j))][1] for j in range(3)] == ["1.00", "-0.12", "2.50"]
    assert [found[gid("index", (0, j))][1] for j in range(2)] == ["2", "0"]
    assert [found[gid("out", (0, j))][1] for j in range(2)] == ["2.50", "1.00"]


def test_int32_index_draws_like_int64_and_grad_tensors_are_fine():
    x = torch.randn(2, 3, requires_grad=True)
    index = torch.tensor([[2, 0], [1, 1]])
    assert cells(draw_gather(x, 1, index)) == cells(draw_gather(x, 1, index.int()))


def test_empty_index_draws_placeholders():
    fig = draw_gather(torch.arange(12).reshape(3, 4), 1, torch.zeros(3, 0, dtype=torch.long))
    assert len(fig.axes) == 3
    assert all_text(fig).count("empty") == 2


def test_same_tensors_give_the_same_png_bytes():
    x = torch.arange(24.0).reshape(2, 3, 4) / 7
    index = torch.tensor([[[0, 3], [1, 1], [2, 0]]])
    assert png(draw_gather(x, 2, index)) == png(draw_gather(x.clone(), 2, index.clone()))
    t = {"a": torch.tensor([[1, 2], [3, 4]]), "b": torch.tensor(True)}
    assert png(draw_tensors(t, mark={"a": t["a"] > 2})) == png(draw_tensors(t, mark={"a": t["a"] > 2}))


X = torch.arange(12.0).reshape(3, 4)
I = torch.tensor([[0, 1], [2, 3], [1, 1]])

BAD_GATHER = [
    # (input, dim, index, error, the key facts the message must name)
    ([[1, 2]], 1, I, TypeError, r"input must be a torch\.Tensor, got list"),
    (X, 1, [[0, 1]], TypeError, r"index must be a torch\.Tensor, got list"),
    (X, 1.0, I, TypeError, r"dim must be an int, got float"),
    (X, True, I, TypeError, r"dim must be an int, got bool"),
    (X, 1, torch.tensor([0, 1]), ValueError,
     r"index has 1 dimension\(s\), shape \(2,\), but input has 2, shape \(3, 4\); gather needs the same number"),
    (X, 2, I, ValueError, r"dim=2 is out of range for input with 2 dimension\(s\).*-2 \.\. 1"),
    (X, -3, I, ValueError, r"dim=-3 is out of range.*-2 \.\. 1"),
    (X, 1, torch.zeros(4, 2, dtype=torch.long), ValueError,
     r"index\.size\(0\) is 4 but input\.size\(0\) is 3.*other than dim=1"),
    (X, 1, I.float(), ValueError, r"index has dtype torch\.float32; gather needs .*torch\.int64.*index\.long\(\)"),
    (X, 1, I > 0, ValueError, r"index has dtype torch\.bool.*index\.long\(\).*bool mask is not an index"),
    (X, 1, I.to(torch.int16), ValueError, r"dtype torch\.int16.*torch\.int32 works too"),
    (X, 1, torch.tensor([[0, 1], [2, -1]]), ValueError,
     r"index\[1, 1\] is -1, but gather takes no negative indices.*must lie in 0 \.\. 3"),
    (X, 1, torch.tensor([[0, 4], [5, 1]]), ValueError,
     r"index\[0, 1\] is 4, out of range: input \(shape \(3, 4\)\) has size 4 along dim=1, so the index "
     r"values must lie in 0 \.\. 3\. 1 more"),
    (X, -2, torch.tensor([[3, 0]]), ValueError, r"index\[0, 0\] is 3.*dim=-2 \(= dim 0\).*0 \.\. 2"),
    (torch.zeros(3, 0), 1, torch.zeros(3, 1, dtype=torch.long), ValueError, r"no index value is valid"),
]


@pytest.mark.parametrize("input, dim, index, error, match", BAD_GATHER)
def test_bad_gather_arguments_raise_readable_errors(input, dim, index, error, match):
    with pytest.raises(error, match=match):
        draw_gather(input, dim, index)


@pytest.mark.parametrize("input, dim, index, error, match", BAD_GATHER)
def test_torch_gather_rejects_the_same_arguments(input, dim, index, error, match):
    with pytest.raises((TypeError, RuntimeError, IndexError)):
        torch.gather(input, dim, index)


ODD_BUT_VALID = [  # torch.gather accepts these, so the pictures do too
    (torch.tensor(5.0), 0, torch.tensor([0, 0])),  # 0-d input pairs with a 1-d index
    (torch.arange(4), 0, torch.tensor(3)),  # and a 0-d index with a 1-d input
    (X, 1, I.int()),  # int32 index
    (X, 1, torch.zeros(7, 0, dtype=torch.long)),  # an empty index skips the size check,
    (X, 1, torch.zeros(3, 0, 2, dtype=torch.long)),  # the number of dims,
    (X, 1, torch.zeros(5, 0)),  # and the dtype
    (X, 1, torch.zeros(3, 9, dtype=torch.long)),  # index may be larger along dim
    (X, np.int64(1), I),  # any int-like dim
]


@pytest.mark.parametrize("input, dim, index", ODD_BUT_VALID)
def test_what_torch_accepts_is_drawn(input, dim, index):
    torch.gather(input, dim, index)
    assert isinstance(draw_gather(input, dim, index), Figure)


@pytest.mark.parametrize(
    "shape, match",
    [
        ((3, 11), r"input has shape \(3, 11\): input\.size\(1\) is 11, too big.*at most 10 columns.*input\[:, :10\]"),
        ((9, 4), r"input\.size\(0\) is 9.*8 rows.*input\[:8\]"),
        ((5, 2, 2), r"input\.size\(0\) is 5.*4 slices.*\(4, 8, 10\)"),
        ((1, 1, 1, 2), r"input has 4 dimensions.*0 to 3 dimensions"),
    ],
)
def test_big_tensors_are_refused_with_the_limit(shape, match):
    x = torch.zeros(shape)
    with pytest.raises(ValueError, match=match):
        draw_gather(x, 0, torch.zeros((1,) * x.ndim, dtype=torch.long))
    with pytest.raises(ValueError, match=match.replace("input", "x").replace("draw_gather", "draw_tensors")):
        draw_tensors({"x": x})


def test_largest_allowed_picture_is_drawn():
    x = torch.randn(8, 10)
    fig = draw_gather(x, 1, random_index(x, 1, (8, 10)))
    assert len(fig.axes) == 3
    draw._check_small("input", torch.zeros(4, 8, 10), "draw_gather")  # the biggest 3-d one passes too


def test_titles_must_be_drawable_code():
    with pytest.raises(ValueError, match=r"title '按行取' contains '按'.*caption"):
        draw_gather(X, 1, I, title="按行取")
    with pytest.raises(ValueError, match=r"contains '\\n'"):
        draw_tensors({"x": X}, title="two\nlines")
    with pytest.raises(TypeError, match="title must be a str"):
        draw_gather(X, 1, I, title=3)


def test_draw_tensors_mixed_shapes_and_dtypes():
    tensors = {
        "scalar": torch.tensor(7),
        "flag": torch.tensor([True, False]),
        "p": torch.tensor([[0.5, 0.25], [1.0, 0.0], [2.0, 3.0]]),
        "t3": torch.arange(12).reshape(3, 2, 2),
        "none": torch.zeros(0, 4),
    }
    fig = draw_tensors(tensors, title="mixed")
    assert len(fig.axes) == 1 + 1 + 1 + 3 + 1
    texts = all_text(fig)
    for label in ("scalar  ()", "flag  (2,)", "p  (3, 2)", "t3  (3, 2, 2)", "t3[2]", "none  (0, 4)", "empty", "mixed"):
        assert label in texts
    found = cells(fig)
    assert found["scalar[]"][1] == "7"
    assert [found[gid("flag", (j,))][1] for j in range(2)] == ["True", "False"]
    assert found[gid("p", (0, 1))][1] == "0.25"
    assert found[gid("t3", (2, 1, 0))][1] == "10"
    assert {face for face, _ in found.values()} == {to_rgba(draw._PLAIN_FACE)}


def test_draw_tensors_outlines_marked_cells_in_red():
    expected = torch.tensor([[1, 2], [3, 4]])
    got = torch.tensor([[1, 2], [4, 4]])
    fig = draw_tensors({"expected": expected, "got": got}, mark={"got": got != expected})
    outlines = [p for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith("mark:")]
    assert [p.get_gid() for p in outlines] == ["mark:got[1,0]"]
    assert to_rgba(outlines[0].get_edgecolor()) == to_rgba(draw._MARK)
    assert outlines[0].get_linewidth() > 2


@pytest.mark.parametrize(
    "tensors, mark, error, match",
    [
        ([torch.zeros(2)], None, TypeError, r"tensors must be a mapping.*got list"),
        ({}, None, ValueError, r"tensors is empty"),
        ({"a": [1, 2]}, None, TypeError, r"tensors\['a'\] must be a torch\.Tensor, got list"),
        ({1: torch.zeros(2)}, None, TypeError, r"a key of tensors must be a str, got int 1"),
        ({"a": torch.zeros(3, 2)}, {"a": torch.zeros(3, dtype=torch.bool)}, ValueError,
         r"mark\['a'\] has shape \(3,\) but tensors\['a'\] has shape \(3, 2\)"),
        ({"a": torch.zeros(2)}, {"b": torch.zeros(2, dtype=torch.bool)}, ValueError,
         r"mark has the key 'b', but tensors has no such entry; the keys of tensors are 'a'"),
        ({"a": torch.zeros(2)}, {"a": torch.zeros(2)}, ValueError,
         r"mark\['a'\] has dtype torch\.float32.*torch\.bool"),
        ({"a": torch.zeros(2)}, {"a": [True, False]}, TypeError, r"mark\['a'\] must be a torch\.Tensor"),
        ({"a": torch.zeros(2)}, [True], TypeError, r"mark must be a mapping"),
    ],
)
def test_bad_draw_tensors_arguments(tensors, mark, error, match):
    with pytest.raises(error, match=match):
        draw_tensors(tensors, mark=mark)
