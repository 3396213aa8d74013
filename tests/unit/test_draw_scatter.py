"""Unit tests of gatherbook.draw_scatter: what the pictures show, and clear errors on bad input."""
import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from gatherbook.draw_scatter import draw_images, draw_scatter  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def cells(fig):
    """gid ("out[1,2]") -> (facecolor, text) of every cell; and the set of red-outlined gids."""
    found, marked = {}, set()
    for ax in fig.axes:
        texts = {(round(t.get_position()[0], 3), round(t.get_position()[1], 3)): t.get_text() for t in ax.texts}
        for p in ax.patches:
            gid = p.get_gid() or ""
            if gid.startswith("mark:"):
                marked.add(gid[5:])
            elif isinstance(p, Rectangle) and gid:
                x, y = p.get_xy()
                found[gid] = (tuple(p.get_facecolor()), texts[(round(x + 0.5, 3), round(y + 0.5, 3))])
    return found, marked


SELF = torch.zeros(3, 5, dtype=torch.long)
SRC = torch.tensor([[10, 11], [12, 13], [14, 15]])
IDX = torch.tensor([[4, 0], [1, 1], [2, 3]])


def test_out_shows_what_scatter_writes_and_colour_links_src_to_out():
    found, marked = cells(draw_scatter(SELF, 1, IDX, SRC))
    out = SELF.scatter(1, IDX, SRC)
    for i in range(3):
        for j in range(5):
            assert found[f"out[{i},{j}]"][1] == str(int(out[i, j]))
    for i in range(3):
        for j in range(2):
            target = found[f"out[{i},{int(IDX[i, j])}]"][0]
            assert found[f"src[{i},{j}]"][0] == target == found[f"index[{i},{j}]"][0]
    # unwritten cells are grey, all alike; written cells differ from them
    assert found["out[0,1]"][0] == found["out[2,4]"][0] != found["out[0,4]"][0]
    assert marked == {"out[1,1]"}  # the one collision: row 1 writes column 1 twice


def test_reductions_and_include_self():
    s, i, v = torch.zeros(4), torch.tensor([1, 1, 3]), torch.tensor([2.0, 4.0, 3.0])
    found, marked = cells(draw_scatter(s, 0, i, v, reduce="mean"))
    assert [found[f"out[{j}]"][1] for j in range(4)] == ["0.00", "2.00", "0.00", "1.50"]
    found, _ = cells(draw_scatter(s, 0, i, v, reduce="mean", include_self=False))
    assert [found[f"out[{j}]"][1] for j in range(4)] == ["0.00", "3.00", "0.00", "3.00"]
    found, _ = cells(draw_scatter(s, 0, i, v, reduce="add"))
    assert found["out[1]"][1] == "6.00" and marked == {"out[1]"}
    texts = [t.get_text() for t in draw_scatter(s, 0, i, v, reduce="amax", include_self=False).texts]
    assert "out = self.scatter_reduce(\n      0, index, src, 'amax',\n      include_self=False)" in texts


PHONE_PX = 358  # a 390 px phone's text column; the book shows a figure at 1 px per CSS px


def _png_width(fig) -> int:
    """Width in pixels of the PNG the notebook stores (100 dpi, tight bounding box)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    buf.seek(0)
    return matplotlib.image.imread(buf).shape[1]


@pytest.mark.parametrize("args,kw", [
    ((torch.zeros(4, 2), 0, torch.tensor([0, 0, 1, 3])[:, None].expand(-1, 2),
      torch.rand(4, 2) * 10), {"reduce": "mean", "include_self": False}),
    ((torch.zeros(1, 4), 1, torch.tensor([[1, 1, 1, 3]]), torch.rand(1, 4)), {"reduce": "add"}),
    ((torch.zeros(4), 0, torch.tensor([1, 1, 3]), torch.rand(3)), {"reduce": "mean"}),
    ((torch.zeros(4, 5), 1, torch.tensor([[2], [0], [3], [3]]), torch.ones(4, 1)), {}),
])
def test_the_chapters_pictures_fit_a_phone(args, kw):
    fig = draw_scatter(*args, **kw)
    w, h = fig.get_size_inches()
    assert h > w and _png_width(fig) <= PHONE_PX


def test_the_chapters_image_pair_fits_a_phone():
    fig = draw_images({"img": torch.rand(64, 64, 3), "restored": torch.rand(64, 64, 3)}, patch=16)
    assert _png_width(fig) <= PHONE_PX


def test_dim0_and_a_src_larger_than_index():
    src = torch.arange(12).reshape(3, 4)
    idx = torch.tensor([[2, 0, 1, 2]])
    found, _ = cells(draw_scatter(torch.zeros(3, 4, dtype=torch.long), 0, idx, src))
    assert "src[1,0]" not in found  # only the part of src that index covers is drawn
    assert found["out[2,0]"][1] == "0" and found["out[2,3]"][1] == "3"


@pytest.mark.parametrize("args,kwargs,error,words", [
    ((SELF.tolist(), 1, IDX, SRC), {}, TypeError, "self must be a torch.Tensor, got list"),
    ((SELF, 1.0, IDX, SRC), {}, TypeError, "dim must be an int, got float"),
    ((SELF, True, IDX, SRC), {}, TypeError, "dim must be an int, got bool"),
    ((SELF, 1, IDX.float(), SRC), {}, ValueError, "index has dtype torch.float32"),
    ((SELF, 1, IDX, SRC.float()), {}, ValueError, "src has dtype torch.float32 but self has dtype torch.int64"),
    ((SELF, 2, IDX, SRC), {}, ValueError, "dim=2 is out of range"),
    ((SELF, 1, IDX[:, :1].flatten(), SRC), {}, ValueError, "same number of dimensions"),
    ((SELF, 1, torch.tensor([[0, 1, 2]] * 3), SRC), {}, ValueError, "index.size(1) is 3 but src.size(1) is 2"),
    ((SELF[:2], 1, IDX, SRC), {}, ValueError, "index.size(0) is 3 but self.size(0) is 2"),
    ((SELF, 1, IDX + 1, SRC), {}, ValueError, "every value must lie in 0 .. 4"),
    ((SELF, 1, IDX, SRC), {"reduce": "max"}, ValueError, "reduce='max' is not a reduction"),
    ((SELF, 1, IDX, SRC), {"include_self": 1}, TypeError, "include_self must be a bool"),
    ((SELF, 1, IDX, SRC), {"title": "散射"}, ValueError, "not printable ASCII"),
    ((torch.zeros(2, 2, 2), 0, torch.zeros(2, 2, 2, dtype=torch.long), torch.zeros(2, 2, 2)), {},
     ValueError, "draws 1-d and 2-d tensors"),
    ((torch.zeros(3, 11), 1, torch.zeros(3, 1, dtype=torch.long), torch.zeros(3, 1)), {},
     ValueError, "too big for a picture"),
])
def test_bad_input_gets_a_clear_error(args, kwargs, error, words):
    with pytest.raises(error, match=None) as info:
        draw_scatter(*args, **kwargs)
    assert words in str(info.value)


def test_the_rules_it_checks_are_torch_rules():
    """Every case draw_scatter rejects for breaking a rule, torch.scatter rejects too."""
    for idx, src in [(IDX + 1, SRC), (torch.tensor([[0, 1, 2]] * 3), SRC)]:
        with pytest.raises(RuntimeError):
            SELF.scatter(1, idx, src)
    with pytest.raises(RuntimeError):
        SELF.scatter(1, IDX, SRC.float())


def test_draw_images_stacks_images_and_draws_a_patch_grid():
    img = torch.rand(8, 12, 3)
    fig = draw_images({"img": img, "grey": torch.rand(4, 4)}, patch=4)
    gids = [ax.get_gid() for ax in fig.axes]
    assert gids == ["image:img", "image:grey"]
    assert len(fig.axes[0].lines) == 1 + 2  # one inner horizontal and two vertical lines
    w, h = fig.get_size_inches()
    assert w <= 3.9 and h > w  # phone width, stacked vertically


@pytest.mark.parametrize("images,kwargs,error,words", [
    ([torch.rand(4, 4)], {}, TypeError, "images must be a mapping"),
    ({}, {}, ValueError, "images is empty"),
    ({"a": torch.rand(4, 4).numpy()}, {}, TypeError, "must be a torch.Tensor"),
    ({"a": torch.randint(0, 255, (4, 4))}, {}, ValueError, "needs a float image"),
    ({"a": torch.rand(3, 4, 4)}, {}, ValueError, "needs (H, W) or (H, W, 3)"),
    ({"a": torch.rand(4, 6)}, {"patch": 4}, ValueError, "patch=4 does not divide"),
    ({"a": torch.rand(4, 4)}, {"patch": 0}, ValueError, "patch must be positive"),
    ({"a": torch.rand(4, 4)}, {"patch": 2.0}, TypeError, "patch must be an int"),
    ({"a": torch.rand(4, 4)}, {"width": 20}, ValueError, "width must be a number of inches"),
])
def test_draw_images_bad_input(images, kwargs, error, words):
    with pytest.raises(error) as info:
        draw_images(images, **kwargs)
    assert words in str(info.value)
