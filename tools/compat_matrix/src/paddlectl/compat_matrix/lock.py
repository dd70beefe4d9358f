"""Locks: a resolution for one (Python, OS, accelerator) profile, pinned by pip-tools' pip-compile.

The resolver picks the versions and builds that fit the profile's platform; pip-compile then pins
them with everything they pull in (and hashes on request). pip-compile resolves for the
interpreter it runs on, so a profile for another Python or OS is refused rather than mislocked.
"""

from __future__ import annotations

import platform as _platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import LockError, UsageError
from .fileio import write_text_atomic
from .model import Candidate
from .platform import ARCHES
from .profile import Profile
from .resolver import Context, Solution

PIP_COMPILE = [sys.executable, "-m", "piptools", "compile"]
NO_MACHINE_INDEXES = ["--no-emit-index-url", "--no-emit-find-links", "--no-emit-trusted-host"]
"""pip-compile would copy every index it used into the lock, this machine's pip config and --find-links
included; a lock carries only the indexes its builds come from (the matrix's), written by us."""


@dataclass(frozen=True)
class LockInput:
    """The pip-compile input for one profile: the index lines of the chosen builds, one exact pin per package."""

    indexes: list[str]
    pins: list[str]

    def text(self, profile: Profile) -> str:
        header = [
            f"# Input for the {profile.name} lock, written by `paddlectl compat lock --profile {profile.name}`.",
            f"# {profile.description}".rstrip(),
            "# The compat resolver chose these pins for the profile's platform; pip-compile adds the rest.",
        ]
        return "\n".join(header + self.indexes + self.pins) + "\n"


def lock_input(solution: Solution) -> LockInput:
    """Pins for every package of the solution, with the indexes their builds come from."""
    indexes, pins = [], []
    for cand in sorted(solution.packages().values(), key=lambda c: c.name):
        info = dict(cand.info)
        if "index" in info:
            indexes.append(f"--extra-index-url {info['index']}")
        if "find_links" in info:
            indexes.append(f"--find-links {info['find_links']}")
        pins.append(f"{cand.name}=={_pip_version(cand)}")
    return LockInput(list(dict.fromkeys(indexes)), pins)


def _pip_version(cand: Candidate) -> str:
    template = dict(cand.info).get("pin", "{version}")
    return template.format(version=cand.label or cand.version)


def check_interpreter(profile: Profile) -> None:
    """pip-compile locks for its own interpreter: the profile must describe this one."""
    facts = profile.platform.values()
    here_os = {"win32": "windows", "darwin": "macos"}.get(sys.platform, "linux")
    here_arch = ARCHES.get(_platform.machine().lower(), _platform.machine().lower())
    here_py = ".".join(_platform.python_version_tuple()[:2])
    want_py = ".".join(str(facts["python"]).split(".")[:2])
    if (want_py, facts["os"], facts["arch"]) != (here_py, here_os, here_arch):
        raise UsageError(
            f"profile {profile.name} is for Python {want_py} on {facts['os']}/{facts['arch']}, but pip-compile runs on "
            f"Python {here_py} on {here_os}/{here_arch}; run this command with a matching interpreter "
            "(pip-compile resolves for the interpreter it runs on)"
        )


def write_lock(
    ctx: Context,
    profile: Profile,
    output: Path,
    generate_hashes: bool = False,
    find_links: list[str] | None = None,
    no_index: bool = False,
) -> tuple[Path, Path]:
    """Resolve the profile, write ``output`` with a ``.in`` beside it, and compile the lock atomically.

    Raises Unsatisfiable when the profile does not fit, LockError when pip-compile fails.
    """
    if not profile.requires:
        raise UsageError(f"profile {profile.name} has no requires: list, so there is nothing to lock")
    check_interpreter(profile)
    solution = ctx.resolve(list(profile.requires))
    wanted = lock_input(solution)
    source = write_text_atomic(output.with_suffix(".in"), wanted.text(profile))
    tmp = output.with_name(f".{output.name}.compiling")
    if output.exists():
        shutil.copyfile(output, tmp)  # pip-compile keeps the pins of an existing output stable
    command = [*PIP_COMPILE, "--quiet", "--strip-extras", "--allow-unsafe", "--no-header", *NO_MACHINE_INDEXES]
    command += ["-o", str(tmp), str(source)]
    if generate_hashes:
        command.append("--generate-hashes")
    if no_index:
        command.append("--no-index")
    for link in find_links or []:
        command += ["--find-links", link]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
            raise LockError(f"pip-compile failed for profile {profile.name} (exit {proc.returncode}):\n{tail}")
        header = f"# Lock for profile {profile.name}: pip-compile of {source.name}; regenerate with\n"
        header += (
            f"#   paddlectl compat lock --profile {profile.name} -o {output}"
            + (" --generate-hashes" if generate_hashes else "")
            + "\n"
        )
        indexes = "".join(f"{line}\n" for line in wanted.indexes) + ("\n" if wanted.indexes else "")
        write_text_atomic(output, header + indexes + tmp.read_text(encoding="utf-8"))
    finally:
        tmp.unlink(missing_ok=True)
    return output, source
