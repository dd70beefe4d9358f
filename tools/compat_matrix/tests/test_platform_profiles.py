"""Platform facts from a probe (on faked system files) or a target profile."""

from __future__ import annotations

import platform as _platform

import pytest
from conftest import reqs, write

from paddlectl.compat_matrix.errors import MatrixError, UsageError
from paddlectl.compat_matrix.matrix import load_matrix
from paddlectl.compat_matrix.platform import make_platform, probe
from paddlectl.compat_matrix.profile import bundled_profiles, installed_from_pins, load_profile


def test_probe_reads_this_interpreter():
    platform, _ = probe()
    assert platform.get("__python").label == _platform.python_version()
    assert platform.marker_env()["python_full_version"] == _platform.python_version()


def test_probe_reads_driver_cpu_cann_and_dtk_from_system_files(tmp_path):
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
    (tmp_path / "proc/driver/nvidia/version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
    )
    (tmp_path / "proc/cpuinfo").write_text("processor : 0\nflags : fpu sse4_2 avx avx2 fma\n")
    info = tmp_path / "usr/local/Ascend/ascend-toolkit/latest/aarch64-linux"
    info.mkdir(parents=True)
    (info / "ascend_toolkit_install.info").write_text("package_name=Ascend-cann-toolkit\nversion=8.0.0\n")
    (tmp_path / "opt/dtk/.info").mkdir(parents=True)
    (tmp_path / "opt/dtk/.info/version").write_text("24.04.1\n")
    platform, notes = probe(tmp_path)
    values = platform.values()
    assert values["driver"] == "535.104.05" and values["cpu"] == ["avx", "avx2", "fma", "sse4_2"]
    assert values["cann"] == "8.0.0" and values["dtk"] == "24.04.1"
    assert any(n.startswith("xre: not probed") for n in notes)


def test_marker_environment_follows_the_target():
    env = make_platform({"python": "3.12.4", "os": "windows", "arch": "x86_64"}, "t", "test").marker_env()
    assert env["python_version"] == "3.12" and env["sys_platform"] == "win32" and env["platform_machine"] == "AMD64"


def test_fact_overrides_and_bad_facts():
    platform = make_platform({"python": "3.11", "os": "linux", "arch": "x86_64"}, "t", "test")
    assert platform.with_overrides({"driver": "560.35.03"}).get("__driver").shown_version == "560.35.03"
    with pytest.raises(MatrixError, match="unknown platform fact 'gpu'"):
        platform.with_overrides({"gpu": "1"})
    with pytest.raises(MatrixError, match="os must be one of"):
        platform.with_overrides({"os": "beos"})
    with pytest.raises(MatrixError, match="invalid version 'new'"):
        platform.with_overrides({"driver": "new"})


def test_bundled_profiles_load():
    assert set(bundled_profiles()) >= {"linux-py311-cpu", "linux-py311-cu126", "linux-py310-cu118", "linux-py310-npu"}
    profile = load_profile("linux-py310-cu118")
    assert profile.platform.values()["driver"] == "535.104.05" and len(profile.installed) == 4


def test_profile_errors_name_file_and_line(tmp_path):
    bad = write(tmp_path, "platform:\n  python: '3.11'\n  os: linux\n  arch: x86_64\n  gpu: yes\n", "p.yml")
    with pytest.raises(MatrixError) as info:
        load_profile(bad)
    assert info.value.line == 5 and "unknown platform fact 'gpu'" in str(info.value)
    loose = write(tmp_path, "platform: {python: '3.11', os: linux, arch: x86_64}\ninstalled:\n  - numpy>=1\n", "q.yml")
    with pytest.raises(MatrixError, match="q.yml:3: installed entry 'numpy>=1' is not an exact pin"):
        load_profile(loose)
    with pytest.raises(UsageError, match="unknown profile 'linux-py311-cu12'; did you mean linux-py311-cu126"):
        load_profile("linux-py311-cu12")


def test_installed_version_the_data_does_not_list_is_still_checked():
    matrix = load_matrix()
    installed = installed_from_pins(matrix, reqs("paddlex==9.9.9", origin="installed"))
    assert installed["paddlex"].where == "unlisted"
    assert installed["paddlex"] in matrix.candidates("paddlex")
