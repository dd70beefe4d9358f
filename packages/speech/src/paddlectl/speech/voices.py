"""The speakers of the synthetic corpus and the two programs that voice them.

espeak-ng is a formant synthesiser: every English voice x variant gives ~800 speakers, all of them
machine-made. flite's voices are built from recordings of real people (awb, rms, slt, kal16; kal is the
same speaker at 8 kHz, a telephone-band channel of its own), so they bring human timbre and fricatives
that espeak-ng lacks: the shipped espeak-only model got 40 of their 50 spoken digits. Speakers are named
``VOICE+VARIANT`` (espeak-ng, e.g. ``en-gb+f3``) or ``flite:NAME``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .errors import SynthError

ESPEAK = "espeak-ng"
FLITE = "flite"
INSTALL_HINT = "install espeak-ng: apt-get install -y espeak-ng (Debian/Ubuntu)"
FLITE_HINT = "install flite: apt-get install -y flite (Debian/Ubuntu), or choose espeak-ng voices with --voice"
FLITE_PREFIX = "flite:"
FLITE_LIMITED_DOMAIN = ("awb_time",)
"""flite voices that speak only their own domain (awb_time says the time), not arbitrary text."""
ESPEAK_DEFAULT_RATE = 175
"""espeak-ng's words per minute at its normal speed, flite's ``duration_stretch`` 1."""


def _tool(name: str, hint: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise SynthError(f"`{name}` was not found on PATH: {hint}")
    return found


def _espeak_listing(kind: str) -> list[list[str]]:
    command = [_tool(ESPEAK, INSTALL_HINT), f"--voices={kind}"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SynthError(f"`{ESPEAK} --voices={kind}` failed: {result.stderr.strip()}; reinstall it ({INSTALL_HINT})")
    return [line.split() for line in result.stdout.splitlines()[1:] if line.strip()]


def english_voices() -> list[str]:
    """espeak-ng's own English voices (language codes such as ``en-gb-scotland``), MBROLA ones left out."""
    rows = [row for row in _espeak_listing("en") if len(row) >= 5]
    return sorted({row[1] for row in rows if not row[4].startswith(("mb/", "!v/"))})


def variants() -> list[str]:
    """The voice variants (``m3``, ``f2``, ``klatt``, ``Storm``, ...) that ``VOICE+VARIANT`` applies."""
    return sorted(row[4].removeprefix("!v/") for row in _espeak_listing("variant") if len(row) >= 5)


def flite_voices() -> list[str]:
    """flite's built-in voices that read any text, as ``flite:NAME`` speakers."""
    result = subprocess.run([_tool(FLITE, FLITE_HINT), "-lv"], capture_output=True, text=True, check=False)
    if result.returncode != 0 or ":" not in result.stdout:
        raise SynthError(f"`{FLITE} -lv` failed: {result.stderr.strip() or result.stdout.strip()}; {FLITE_HINT}")
    names = result.stdout.split(":", 1)[1].split()
    return sorted(FLITE_PREFIX + name for name in names if name not in FLITE_LIMITED_DOMAIN)


def is_flite(speaker: str) -> bool:
    return speaker.startswith(FLITE_PREFIX)


def speakers(chosen: list[str] | None) -> list[str]:
    """The speakers to draw from: every one of both programs, or the ``--voice`` choices (a bare
    espeak-ng voice stands for all its variants), each checked against what is installed."""
    wanted = chosen or []
    need_espeak = not wanted or any(not is_flite(v) for v in wanted)
    known, kinds = (english_voices(), variants()) if need_espeak else ([], [])
    if need_espeak and not known:
        raise SynthError(f"espeak-ng lists no English voice: {INSTALL_HINT} (with its espeak-ng-data)")
    every_espeak = [f"{v}+{k}" for v in known for k in kinds] or known
    if not wanted:
        return every_espeak + flite_voices()
    flite = flite_voices() if any(is_flite(v) for v in wanted) else []
    found = []
    for spec in wanted:
        if is_flite(spec):
            if spec not in flite:
                raise SynthError(f"unknown flite voice {spec!r}: choose from {', '.join(flite)}")
            found.append(spec)
            continue
        base = spec.split("+", 1)[0]
        if base not in known:
            raise SynthError(f"unknown English voice {base!r}: choose from {', '.join(known)} or {FLITE_PREFIX}NAME")
        if "+" in spec and spec.split("+", 1)[1] not in kinds:
            raise SynthError(f"unknown voice variant in {spec!r}: choose from `espeak-ng --voices=variant`")
        found += [spec] if "+" in spec else [f"{base}+{k}" for k in kinds]
    return found


def command(speaker: str, text: str, rate: int, pitch: int, wav: Path) -> list[str]:
    """The command line that speaks ``text`` into ``wav``: ``rate`` in espeak-ng's words per minute,
    ``pitch`` on espeak-ng's 0-99 scale or, for flite, a mean F0 in Hz (the rms voice keeps its own)."""
    if is_flite(speaker):
        stretch = ESPEAK_DEFAULT_RATE / rate
        settings = ["--setf", f"duration_stretch={stretch:.4f}", "--setf", f"int_f0_target_mean={pitch}"]
        voice = speaker.removeprefix(FLITE_PREFIX)
        return [_tool(FLITE, FLITE_HINT), "-voice", voice, *settings, "-o", str(wav), "-t", text]
    return [_tool(ESPEAK, INSTALL_HINT), "-v", speaker, "-s", str(rate), "-p", str(pitch), "-w", str(wav), text]


def synthesiser_cards(drawn: list[str]) -> list[dict[str, str]]:
    """The programs that spoke a corpus, with their versions and licences (the audio is not theirs)."""
    cards = []
    if any(not is_flite(s) for s in drawn):
        cards.append({"name": ESPEAK, "version": _version(ESPEAK, INSTALL_HINT), "license": "GPL-3.0-or-later"})
    if any(is_flite(s) for s in drawn):
        license = "LicenseRef-CMU-Flite (BSD-style; Carnegie Mellon University)"
        cards.append({"name": FLITE, "version": _version(FLITE, FLITE_HINT), "license": license})
    return cards


def _version(program: str, hint: str) -> str:
    """The first dotted number the program prints about itself."""
    result = subprocess.run([_tool(program, hint), "--version"], capture_output=True, text=True, check=False)
    words = (result.stdout + result.stderr).replace(":", " ").replace("-", " ").split()
    return next((w.rstrip(",") for w in words if w[:1].isdigit() and "." in w), "unknown")
