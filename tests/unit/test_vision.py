"""gatherbook.vision and gatherbook.draw_vision: the sample image, patches, and their pictures."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from gatherbook.draw_vision import draw_patch_rows, draw_patches  # noqa: E402
from gatherbook.vision import patchify, sample_image, unpatchify  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --- sample_image ------------------------------------------------------------------------------

def test_sample_image_is_the_shipped_photo_shrunk_to_a_square():
    img = sample_image(32)
    assert img.shape == (3, 32, 32) and img.dtype == torch.float32 and img.device.type == "cpu"
    assert 0.0 <= float(img.min()) and float(img.max()) <= 1.0
    assert float(img.std()) > 0.1  # a photograph, not a flat fill
    assert torch.equal(sample_image(32), img)  # deterministic


def test_sample_image_is_an_area_average_of_the_full_photo():
    full = sample_image(512)
    small = sample_image(64)
    assert torch.allclose(F.avg_pool2d(full.unsqueeze(0), 8)[0], small, atol=1e-5)


@pytest.mark.parametrize("size,error", [(7, ValueError), (513, ValueError), (0, ValueError),
                                        (32.0, TypeError), (True, TypeError), ("96", TypeError)])
def test_sample_image_rejects_bad_sizes(size, error):
    with pytest.raises(error, match="size"):
        sample_image(size)


# --- patchify / unpatchify ---------------------------------------------------------------------

def test_patchify_matches_maes_layout_and_unfold():
    imgs = torch.rand(2, 3, 8, 12)
    x = patchify(imgs, 4)
    assert x.shape == (2, 6, 48)
    # patch n = 1 is row 0, column 1; its features are ordered (row, column, channel)
    assert torch.equal(x[1, 1].reshape(4, 4, 3), imgs[1, :, 0:4, 4:8].permute(1, 2, 0))
    u = F.unfold(imgs, kernel_size=4, stride=4).transpose(1, 2)
    assert torch.equal(u.reshape(2, 6, 3, 4, 4).permute(0, 1, 3, 4, 2).reshape(2, 6, 48), x)


def test_unpatchify_inverts_patchify():
    imgs = torch.rand(3, 1, 6, 9)
    assert torch.equal(unpatchify(patchify(imgs, 3), (2, 3), channels=1), imgs)


def test_patchify_rejects_bad_input():
    with pytest.raises(TypeError, match="images must be a torch.Tensor"):
        patchify([[1.0]], 2)
    with pytest.raises(ValueError, match=r"images must have 4 dims, got shape \(3, 8, 8\)"):
        patchify(torch.rand(3, 8, 8), 2)
    with pytest.raises(ValueError, match="floating-point"):
        patchify(torch.zeros(1, 3, 8, 8, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="patch=3 must divide the height and width"):
        patchify(torch.rand(1, 3, 8, 8), 3)
    with pytest.raises(TypeError, match="patch must be an int"):
        patchify(torch.rand(1, 3, 8, 8), 2.0)
    with pytest.raises(ValueError, match="patch must be at least 1"):
        patchify(torch.rand(1, 3, 8, 8), 0)


def test_unpatchify_rejects_sizes_that_do_not_fit():
    x = torch.rand(1, 4, 12)
    with pytest.raises(ValueError, match=r"grid=\(3, 2\) holds 6 patches, but patches has N=4"):
        unpatchify(x, (3, 2))
    with pytest.raises(ValueError, match="D=12 features is not P \\* P \\* channels for channels=1"):
        unpatchify(x, (2, 2), channels=1)
    with pytest.raises(TypeError, match="grid must be a tuple"):
        unpatchify(x, [2, 2])
    with pytest.raises(ValueError, match="must have 3 dims"):
        unpatchify(x[0], (2, 2))


# --- draw_patches ------------------------------------------------------------------------------

def _image_patches():
    return patchify(sample_image(24).unsqueeze(0), 6)[0]  # (16, 108): a 4 x 4 grid


def _pixels(fig):
    fig.canvas.draw()
    return [ax.get_images()[0].get_array() for ax in fig.axes]


def test_draw_patches_puts_the_image_back_together_and_greys_the_dropped():
    x = _image_patches()
    fig = draw_patches({"x": x, "kept": x}, (4, 4), keep={"kept": torch.tensor([0, 5])},
                       labels={"x": torch.arange(16), "kept": torch.tensor([5, 0])})
    full, kept = _pixels(fig)
    img = unpatchify(x.unsqueeze(0), (4, 4))[0].permute(1, 2, 0).numpy()
    assert full.shape == (24, 24, 3) and (abs(full - img) < 1e-6).all()
    assert (abs(kept[0:6, 0:6] - img[0:6, 0:6]) < 1e-6).all()          # patch 0 kept
    assert (abs(kept[6:12, 6:12] - img[6:12, 6:12]) < 1e-6).all()      # patch 5 kept
    grey = kept[0:6, 6:12]                                             # patch 1 dropped
    assert (abs(grey[..., 0] - grey[..., 1]) < 1e-6).all() and grey.min() >= 0.6
    texts = [[t.get_text() for t in ax.texts] for ax in fig.axes]
    assert texts[0] == [str(n) for n in range(16)] and texts[1] == ["0", "1"]
    assert [ax.get_title() for ax in fig.axes] == ["x", "kept"]


def test_draw_patches_stacks_panels_vertically():
    x = _image_patches()
    fig = draw_patches({"a": x, "b": x, "c": x}, (4, 4))
    lefts = {round(ax.get_position().x0, 3) for ax in fig.axes}
    tops = [ax.get_position().y1 for ax in fig.axes]
    assert len(lefts) == 1 and tops == sorted(tops, reverse=True)
    assert fig.get_figwidth() <= 4


def test_draw_patches_rejects_bad_input():
    x = _image_patches()
    with pytest.raises(TypeError, match="panels must be a mapping"):
        draw_patches(x, (4, 4))
    with pytest.raises(ValueError, match="panels is empty"):
        draw_patches({}, (4, 4))
    with pytest.raises(ValueError, match=r"has N=16 patches but grid=\(4, 3\) holds 12"):
        draw_patches({"x": x}, (4, 3))
    with pytest.raises(ValueError, match="must be a 2-d floating-point tensor"):
        draw_patches({"x": x.unsqueeze(0)}, (4, 4))
    with pytest.raises(ValueError, match="patch numbers from 0 to 16; they must be in \\[0, 16\\)"):
        draw_patches({"x": x}, (4, 4), keep={"x": torch.tensor([0, 16])})
    with pytest.raises(ValueError, match="keep has the key 'y', which is not a panel"):
        draw_patches({"x": x}, (4, 4), keep={"y": torch.tensor([0])})
    with pytest.raises(ValueError, match="1-d integer tensor of patch numbers"):
        draw_patches({"x": x}, (4, 4), labels={"x": torch.tensor([0.0])})
    with pytest.raises(TypeError, match="grid must be a tuple"):
        draw_patches({"x": x}, 4)
    with pytest.raises(ValueError, match="channels must be 1 or 3"):
        draw_patches({"x": x}, (4, 4), channels=2)
    with pytest.raises(TypeError, match="a key of panels must be a non-empty ASCII str"):
        draw_patches({"图": x}, (4, 4))


# --- draw_patch_rows ---------------------------------------------------------------------------

def test_draw_patch_rows_lays_out_the_sequence_in_its_order():
    x = _image_patches()
    idx = torch.tensor([9, 2, 14])
    fig = draw_patch_rows({"kept": x[idx], "one": x[:1]}, ids={"kept": idx}, per_row=2)
    seq, one = _pixels(fig)
    assert seq.shape == (6 + 1 + 6, 6 + 1 + 6, 3)   # 2 lines of 2 tiles, gaps of 1 pixel
    tiles = [seq[0:6, 0:6], seq[0:6, 7:13], seq[7:13, 0:6]]
    for tile, n in zip(tiles, idx.tolist()):
        ref = unpatchify(x[n].reshape(1, 1, -1), (1, 1))[0].permute(1, 2, 0).numpy()
        assert (abs(tile - ref) < 1e-6).all()
    assert (seq[7:13, 7:13] == 1).all()             # the unused slot stays white
    assert [t.get_text() for t in fig.axes[0].texts] == ["9", "2", "14"]
    assert [t.get_text() for t in fig.axes[1].texts] == ["0"]
    assert fig.axes[0].get_title() == "kept  (3, 108)"


def test_draw_patch_rows_rejects_bad_input():
    x = _image_patches()
    with pytest.raises(ValueError, match="ids\\['x'\\] has 2 entries but its patches have 3"):
        draw_patch_rows({"x": x[:3]}, ids={"x": torch.tensor([1, 2])})
    with pytest.raises(ValueError, match="has D=27 but the first entry has D=108"):
        draw_patch_rows({"x": x[:3], "y": torch.rand(2, 27)})
    with pytest.raises(ValueError, match="per_row must be at least 1"):
        draw_patch_rows({"x": x}, per_row=0)
    with pytest.raises(TypeError, match="per_row must be an int"):
        draw_patch_rows({"x": x}, per_row="8")
    with pytest.raises(ValueError, match="rows is empty"):
        draw_patch_rows({})
    with pytest.raises(ValueError, match="has no patches"):
        draw_patch_rows({"x": x[:0]})
    with pytest.raises(TypeError, match="rows\\['x'\\] must be a torch.Tensor"):
        draw_patch_rows({"x": [1.0]})

