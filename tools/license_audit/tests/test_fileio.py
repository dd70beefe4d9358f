import pytest

from paddlectl.license_audit.fileio import atomic_write, write_text


def test_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "report.json"
    write_text(path, "old")
    with pytest.raises(RuntimeError), atomic_write(path) as handle:
        handle.write("half")
        raise RuntimeError("interrupted")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_creates_parent_folders_and_refuses_read_modes(tmp_path):
    write_text(tmp_path / "a" / "b.txt", "x")
    assert (tmp_path / "a" / "b.txt").read_text() == "x"
    with pytest.raises(ValueError, match="writing only"), atomic_write(tmp_path / "c", "r"):
        pass
