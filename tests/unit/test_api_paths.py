"""Allowed roots: realpath containment, `..`, symlinks pointing out, files linked out of a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import ApiError
from rag_system.api.paths import AllowedRoots, PathNotAllowedError, checked_paths


@pytest.fixture()
def tree(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = tmp_path / "uploads"
    (root / "a").mkdir(parents=True)
    (root / "a" / "doc.txt").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    return AllowedRoots.of([root]), root, outside


def test_paths_inside_a_root_resolve(tree):
    roots, root, _ = tree
    assert roots.resolve(str(root / "a" / "doc.txt")) == (root / "a" / "doc.txt").resolve()
    assert roots.resolve(str(root / "a" / ".." / "a")) == (root / "a").resolve()
    assert roots.resolve_all([str(root)]) == [root.resolve()]


@pytest.mark.parametrize("make", [
    lambda root, out: str(out / "secret.txt"),
    lambda root, out: f"{root}/../outside/secret.txt",
    lambda root, out: str(root) + "-sibling",
    lambda root, out: "/",
])
def test_paths_outside_are_refused(tree, make):
    roots, root, outside = tree
    with pytest.raises(PathNotAllowedError):
        roots.resolve_all([make(root, outside)])


def test_a_root_prefix_is_not_a_root(tree, tmp_path):
    roots, _, _ = tree
    (tmp_path / "uploads2").mkdir()
    with pytest.raises(PathNotAllowedError):
        roots.resolve(str(tmp_path / "uploads2"))


def test_symlinks_pointing_out_are_refused(tree):
    roots, root, outside = tree
    (root / "dir-link").symlink_to(outside, target_is_directory=True)
    (root / "file-link.txt").symlink_to(outside / "secret.txt")
    for path in (root / "dir-link", root / "dir-link" / "secret.txt", root / "file-link.txt"):
        with pytest.raises(PathNotAllowedError):
            roots.resolve_all([str(path)])
    # A folder inside the root that contains a link out is refused as a whole.
    with pytest.raises(PathNotAllowedError, match="file-link"):
        roots.resolve_all([str(root)])


def test_links_that_stay_inside_are_fine(tree):
    roots, root, _ = tree
    (root / "inner-link.txt").symlink_to(root / "a" / "doc.txt")
    assert roots.resolve_all([str(root)]) == [root.resolve()]


def test_api_errors_are_403_and_404(tree):
    roots, root, outside = tree
    with pytest.raises(ApiError) as info:
        checked_paths(roots, [str(outside)])
    assert info.value.status == 403
    with pytest.raises(ApiError) as info:
        checked_paths(roots, [str(root / "missing.pdf")])
    assert info.value.status == 404
