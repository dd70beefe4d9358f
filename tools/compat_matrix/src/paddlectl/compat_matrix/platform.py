"""Platform facts as virtual packages (``__python``, ``__os``, ``__driver`` ...).

They come from probing the running machine or from a target profile describing another one,
and they are the only candidates the resolver has for those names: a requirement on a fact the
platform lacks (no NVIDIA driver, no CANN) cannot be met.
"""

from __future__ import annotations

import ctypes
import os
import platform as _platform
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import MatrixError
from .model import ZERO, Candidate, parse_version

FACTS = {
    "python": "Python version",
    "os": "operating system (linux, windows, macos)",
    "arch": "CPU architecture (x86_64, aarch64)",
    "cpu": "CPU features (avx, avx2, avx512f, fma, ...)",
    "glibc": "glibc version",
    "driver": "NVIDIA driver version",
    "cuda": "highest CUDA version the NVIDIA driver supports",
    "cudnn": "system cuDNN version",
    "cann": "Ascend CANN toolkit version",
    "xre": "Kunlun XPU runtime (XRE) version",
    "dtk": "Hygon DCU toolkit (DTK) version",
}
TAG_FACTS = ("os", "arch", "cpu")
OS_NAMES = ("linux", "windows", "macos")
ARCHES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
CPU_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "amx_tile", "asimd", "sve")
REQUIRED = ("python", "os", "arch")

_MARKERS = {
    "linux": ("linux", "Linux", "posix"),
    "windows": ("win32", "Windows", "nt"),
    "macos": ("darwin", "Darwin", "posix"),
}


@dataclass(frozen=True)
class Platform:
    """The facts of one machine, real or described, as candidates keyed by ``__name``."""

    facts: Mapping[str, Candidate]
    origin: str  # "this machine" or "target <profile>"

    def get(self, name: str) -> Candidate | None:
        return self.facts.get(name)

    def values(self) -> dict[str, str | list[str]]:
        """Fact name -> value, as a profile writes it."""
        out: dict[str, str | list[str]] = {}
        for name, cand in self.facts.items():
            key = name[2:]
            out[key] = sorted(cand.tags) if key == "cpu" else cand.shown_version
        return out

    def marker_env(self) -> dict[str, str]:
        """The PEP 508 marker environment of this platform, so markers follow the target."""
        python = self.facts["__python"].label or str(self.facts["__python"].version)
        os_name = next(iter(self.facts["__os"].tags))
        arch = next(iter(self.facts["__arch"].tags))
        sys_platform, system, os_kind = _MARKERS[os_name]
        machine = {"windows": {"x86_64": "AMD64", "aarch64": "ARM64"}, "macos": {"aarch64": "arm64"}}
        release = self.facts["__python"].version.release
        return {
            "python_version": ".".join(map(str, (release + (0,))[:2])),
            "python_full_version": python,
            "implementation_name": "cpython",
            "implementation_version": python,
            "platform_python_implementation": "CPython",
            "sys_platform": sys_platform,
            "platform_system": system,
            "os_name": os_kind,
            "platform_machine": machine.get(os_name, {}).get(arch, arch),
            "platform_release": "",
            "platform_version": "",
            "extra": "",
        }

    def with_overrides(self, overrides: Mapping[str, object], where: str = "--fact") -> Platform:
        """The same platform with some facts replaced (``{"driver": "560.35.03"}``) or removed (``None``)."""
        values: dict[str, object] = dict(self.values())
        values.update(overrides)
        return make_platform({k: v for k, v in values.items() if v is not None}, self.origin, where)

    def describe(self, name: str) -> str:
        """``this machine has __driver 535.104.05`` or ``... has no __cann (Ascend CANN toolkit version)``."""
        cand = self.facts.get(name)
        if cand is None:
            return f"{self.origin} has no {name} ({FACTS.get(name[2:], 'unknown fact')})"
        return f"{self.origin} has {name} {cand.shown_version}"


def make_platform(
    values: Mapping[str, object], origin: str, where: str, lines: Mapping[str, int] | None = None
) -> Platform:
    """Validate raw fact values (from a profile, a probe or ``--fact``) into a Platform."""
    lines = lines or {}
    facts: dict[str, Candidate] = {}
    for key, value in values.items():
        line = lines.get(key)
        if key not in FACTS:
            raise MatrixError(where, line, f"unknown platform fact {key!r}", f"use one of {', '.join(FACTS)}")
        facts[f"__{key}"] = _fact(key, value, where, line)
    missing = [k for k in REQUIRED if f"__{k}" not in facts]
    if missing:
        raise MatrixError(where, None, f"the platform lacks {', '.join(missing)}", "say at least python, os and arch")
    return Platform(facts, origin)


def _fact(key: str, value: object, where: str, line: int | None) -> Candidate:
    name = f"__{key}"
    if key == "cpu":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise MatrixError(where, line, "cpu must be a list of feature names", "write cpu: [avx, avx2, fma]")
        return Candidate(name, ZERO, tags=frozenset(v.lower() for v in value))
    if key == "os":
        text = str(value).lower()
        if text not in OS_NAMES:
            raise MatrixError(where, line, f"os must be one of {', '.join(OS_NAMES)}, got {value!r}")
        return Candidate(name, ZERO, tags=frozenset({text}))
    if key == "arch":
        arch = ARCHES.get(str(value).lower())
        if arch is None:
            raise MatrixError(where, line, f"arch must be one of {', '.join(ARCHES)}, got {value!r}")
        return Candidate(name, ZERO, tags=frozenset({arch}))
    try:
        version = parse_version(value)
    except ValueError as exc:
        raise MatrixError(where, line, f"{key}: {exc}") from None
    return Candidate(name, version, label=str(value))


# -- probing the running machine ------------------------------------------------------------------


def probe(root: Path = Path("/")) -> tuple[Platform, list[str]]:
    """Facts of the machine this runs on, and notes on what could not be read.

    ``root`` relocates the files read (/proc, /usr/local/Ascend, /opt/dtk) so tests can fake them;
    libraries (libcuda, libcudnn) and nvidia-smi are only asked on the real root.
    """
    notes: list[str] = []
    values: dict[str, object] = {
        "python": _platform.python_version(),
        "os": {"win32": "windows", "darwin": "macos"}.get(sys.platform, "linux"),
        "arch": ARCHES.get(_platform.machine().lower(), _platform.machine().lower()),
    }
    real = root == Path("/")
    readers = {
        "cpu": lambda: _cpu_flags(root),
        "glibc": lambda: (_platform.libc_ver()[1] or None) if real else None,
        "driver": lambda: _driver(root, real),
        "cuda": lambda: _cuda_from_libcuda() if real else None,
        "cudnn": lambda: _cudnn_from_lib() if real else None,
        "cann": lambda: _cann(root),
        "dtk": lambda: _dtk(root),
    }
    for key, reader in readers.items():
        try:
            value = reader()
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            notes.append(f"{key}: could not be read ({exc})")
            continue
        if value:
            values[key] = value
        else:
            notes.append(f"{key}: not found ({FACTS[key]})")
    notes.append("xre: not probed (no stable file to read); give it with --fact xre=VERSION or a profile")
    if values["arch"] not in ARCHES.values():
        notes.append(f"arch: {values['arch']} is not one the matrix knows")
        values["arch"] = "x86_64"
    return make_platform(values, "this machine", "probe"), notes


def _cpu_flags(root: Path) -> list[str] | None:
    cpuinfo = root / "proc/cpuinfo"
    if not cpuinfo.exists():
        return None
    found: set[str] = set()
    for line in cpuinfo.read_text(errors="replace").splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            found.update(value.split())
    return sorted(f for f in found if f in CPU_FLAGS)


def _driver(root: Path, real: bool) -> str | None:
    version_file = root / "proc/driver/nvidia/version"
    if version_file.exists():
        match = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+(?:\.\d+)+)", version_file.read_text())
        if match:
            return match.group(1)
    if real and shutil.which("nvidia-smi"):
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.split()
        return out[0] if out else None
    return None


def _load_library(names: tuple[str, ...]) -> ctypes.CDLL | None:
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def _cuda_from_libcuda() -> str | None:
    lib = _load_library(("libcuda.so.1", "libcuda.so", "nvcuda.dll"))
    if lib is None:
        return None
    version = ctypes.c_int()
    if lib.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def _cudnn_from_lib() -> str | None:
    lib = _load_library(("libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"))
    if lib is None:
        return None
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    raw = int(lib.cudnnGetVersion())
    if raw >= 90000:  # cuDNN 9 encodes major*10000 + minor*100 + patch
        return f"{raw // 10000}.{raw % 10000 // 100}.{raw % 100}"
    return f"{raw // 1000}.{raw % 1000 // 100}.{raw % 100}"


def _cann(root: Path) -> str | None:
    home = os.environ.get("ASCEND_TOOLKIT_HOME")
    base = Path(home) if home and root == Path("/") else root / "usr/local/Ascend/ascend-toolkit/latest"
    for info in sorted(base.glob("*/ascend_toolkit_install.info")) if base.exists() else []:
        match = re.search(r"^version=(\S+)", info.read_text(), flags=re.M)
        if match:
            return match.group(1)
    return None


def _dtk(root: Path) -> str | None:
    rocm = os.environ.get("ROCM_PATH")
    for base in ([Path(rocm)] if rocm and root == Path("/") else []) + [root / "opt/dtk"]:
        info = base / ".info/version"
        if info.exists():
            text = info.read_text().strip()
            return re.sub(r"^dtk-?", "", text, flags=re.I) or None
    return None
