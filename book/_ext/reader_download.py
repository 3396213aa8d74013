"""The "Run it yourself" download: everything a reader needs to run the book, as one zip.

Built at build time into ``_build/run/gather-book.zip`` (never committed) from the files
of the working tree, and linked from ``book/<lang>/run.md`` with ``{download}``. The zip holds one
folder, ``gather-book/``, with the notebooks of both languages, the helper package, and the files
that install and run them. Its bytes depend only on those files (fixed time stamps, sorted names).

The page also names the repository when ``_config.yml`` configures one (``repository: url:``),
through the MyST substitution ``{{ gatherbook_repository }}``.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import yaml

ZIP_NAME = "gather-book.zip"
FOLDER = "gather-book"
GENERATED = Path("_build") / "run"  # generated files stay in _build
# What the reader needs: (pattern under the source root, glob)
CONTENTS = [
    ("notebooks/en", "*.ipynb"), ("notebooks/zh", "*.ipynb"),
    ("gatherbook", "**/*.py"), ("gatherbook", "bench_results/*.json"),  # ch6 shows a recorded run
    (".", "requirements.txt"), (".", "pyproject.toml"), (".", "Makefile"), (".", "README.md"),
]
_EPOCH = (2026, 1, 1, 0, 0, 0)

REPOSITORY_TEXT = {
    "en": ("The book's source, with its tests and the tools that build this site, is at <{url}> "
           "(`git clone {url}`)."),
    "zh": "本书的源代码（含测试和构建本网站的工具）在 <{url}>（`git clone {url}`）。",
}
NO_REPOSITORY_TEXT = {
    "en": "The download holds everything the notebooks need.",
    "zh": "下载的压缩包里有运行 notebook 所需的全部文件。",
}


def files_to_ship(root: Path) -> list[Path]:
    """The files of the zip, relative to ``root``, sorted."""
    found = set()
    for folder, pattern in CONTENTS:
        for path in (root / folder).glob(pattern):
            rel = path.relative_to(root)
            if path.is_file() and "__pycache__" not in rel.parts and ".ipynb_checkpoints" not in rel.parts:
                found.add(rel)
    return sorted(found)


def write_zip(root: Path, target: Path) -> list[str]:
    """Write the reader's zip of ``root`` to ``target``; returns the names in it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    names = []
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel in files_to_ship(root):
            info = zipfile.ZipInfo(f"{FOLDER}/{rel.as_posix()}", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, (root / rel).read_bytes())
            names.append(info.filename)
    tmp.replace(target)
    return names


def repository_text(url: str, lang: str) -> str:
    url = (url or "").strip()
    texts = REPOSITORY_TEXT if url else NO_REPOSITORY_TEXT
    return texts.get(lang, texts["en"]).format(url=url)


def configured_repository(root: Path) -> str:
    """``repository: url:`` of the project's ``_config.yml`` ("" when there is none).

    (Read from the file: Jupyter Book fills in its own repository as a default otherwise.)
    """
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf8")) or {}
    return str((config.get("repository") or {}).get("url") or "")


def on_config_inited(app, config) -> None:
    url = configured_repository(Path(app.srcdir))
    subs = dict(getattr(config, "myst_substitutions", {}) or {})
    subs["gatherbook_repository"] = repository_text(url, config.gatherbook_this_language)
    config.myst_substitutions = subs


def on_builder_inited(app) -> None:
    root = Path(app.srcdir)
    write_zip(root, root / GENERATED / ZIP_NAME)


def setup(app):
    app.connect("config-inited", on_config_inited)
    app.connect("builder-inited", on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "0.1"}
