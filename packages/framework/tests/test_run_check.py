from paddlectl.framework.utils import run_check
from paddlectl.framework.utils.run_check import check_numba, check_training


def test_numba_compiles_and_caches_here(tmp_path):
    results = check_numba(tmp_path / "cache")
    assert [r.name for r in results] == ["numba jit", "numba cache"]
    assert all(r.ok for r in results), results
    assert any((tmp_path / "cache").rglob("*.nbi"))


def test_disabled_jit_is_reported(monkeypatch):
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    (result,) = check_numba()
    assert not result.ok and "NUMBA_DISABLE_JIT" in result.detail


def test_run_check_prints_verdict(capsys):
    assert run_check() is True
    assert "paddlectl works well" in capsys.readouterr().out


def test_training_check_trains():
    result = check_training()
    assert result.ok and "->" in result.detail


def test_training_check_reports_a_loss_that_does_not_fall():
    result = check_training(steps=1)
    assert not result.ok and "did not fall" in result.detail
