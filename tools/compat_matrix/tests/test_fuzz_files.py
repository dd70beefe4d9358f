"""Hostile profile and matrix files: each is refused with a ``CompatError`` or used; nothing else may escape
(issue 29).

Hypothesis writes the files from their schemas: every key of a profile (platform facts, installed
pins, requirements) and of a matrix file (sources, packages, releases, builds, claims, extras,
breakages) is either a plausible value or a hostile one (another type, a malformed version or
specifier, a deep nesting), keys are added or left out, and the YAML text is then cut, flipped or
given an unsafe tag. Each case goes through what ``paddlectl compat check --target`` and ``lock``
do before pip-compile: load, validate, resolve, check what is installed, build the lock input.
"""

from __future__ import annotations

import os

import pytest
import yaml
from conftest import TOY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from paddlectl.compat_matrix.cli import app
from paddlectl.compat_matrix.errors import CompatError
from paddlectl.compat_matrix.lock import lock_input
from paddlectl.compat_matrix.matrix import load_matrix
from paddlectl.compat_matrix.plan import check
from paddlectl.compat_matrix.profile import installed_from_pins, load_profile
from paddlectl.compat_matrix.resolver import Context, Undecided, Unsatisfiable

FUZZ = settings(
    max_examples=int(os.environ.get("PADDLECTL_FUZZ_EXAMPLES", "100")),
    deadline=30000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**65), 2**65), st.floats(), st.text(max_size=8),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.sampled_from(["", "3.x", "1.0.0.0.0.0.0.0.0.0.0", "9" * 400, "==", ">=1,<", "a[", "@", "__python>=", "🐍"]),
)  # fmt: skip
VERSIONS = st.sampled_from(["3.11", "3.10", "3.9", "2.36", "560.35.03", "12.6", "8.0.0", "1.0", "2.1"])
NAMES = st.sampled_from(["fw", "fw-gpu", "suite", "helper", "ocr", "lib", "vision", "nope", "fresh", "new-lib"])
SPECS = st.sampled_from(["", ">=1", "==2.0.0", "<2", "!=1.1", ">=1,<3", "==1.*", "~=2.0", "===x"])
REQUIREMENT = st.builds(lambda n, s, m: n + s + m, NAMES, SPECS, st.sampled_from(["", "; python_version<'3.12'", ";;"]))  # fmt: skip


def either(good: st.SearchStrategy, one_in: int = 12) -> st.SearchStrategy:
    """Mostly the plausible value, one time in ``one_in`` a hostile one (more often, and few cases would
    get past the first check)."""
    return st.integers(1, one_in).flatmap(lambda i: HOSTILE if i == one_in else good)


def mapping(required: dict, optional: dict | None = None) -> st.SearchStrategy:
    """A mapping of these keys, each value plausible or hostile; now and then a stray key is added, a
    required one left out, or a hostile value stands in for the whole mapping."""
    keys = st.fixed_dictionaries(
        {k: either(v) for k, v in required.items()}, optional={k: either(v) for k, v in (optional or {}).items()}
    )
    odd = st.one_of(
        HOSTILE,
        st.builds(lambda d, v: {**d, "stray": v}, keys, HOSTILE),
        st.builds(lambda d, k: {x: y for x, y in d.items() if x != k}, keys, st.sampled_from(sorted(required))),
    )
    return st.integers(1, 20).flatmap(lambda i: odd if i == 20 else keys)


PLATFORM = mapping(
    {"python": VERSIONS, "os": st.sampled_from(["linux", "windows", "macos", "plan9"]),
     "arch": st.sampled_from(["x86_64", "aarch64", "arm64", "mips"])},
    {"cpu": st.lists(st.sampled_from(["avx", "avx2", "fma", "avx512f", "asimd", "zz"]), max_size=4),
     "glibc": VERSIONS, "driver": VERSIONS, "cuda": VERSIONS, "cudnn": VERSIONS, "cann": VERSIONS, "gpu": VERSIONS},
)  # fmt: skip
PROFILE = mapping(
    {"platform": PLATFORM},
    {"name": st.text(max_size=10), "description": st.text(max_size=10),
     "installed": st.lists(st.builds(lambda n, v: f"{n}=={v}", NAMES, VERSIONS), max_size=3),
     "requires": st.lists(REQUIREMENT, max_size=3)},
)  # fmt: skip
CLAIM = st.one_of(REQUIREMENT, mapping({"req": REQUIREMENT}, {"builds": st.lists(st.sampled_from(["cu118", "cu126"])), "source": st.sampled_from(["fz1", "x"])}))  # fmt: skip
RELEASE = mapping(
    {"versions": st.lists(VERSIONS, min_size=1, max_size=3), "source": st.sampled_from(["fz1", "fz2", "doc", "missing"]),
     "kind": st.sampled_from(["declared", "tested", "reported", "rumoured"])},
    {"requires": st.lists(CLAIM, max_size=3), "builds": st.dictionaries(st.sampled_from(["cu118", "cu126", ""]), st.dictionaries(st.sampled_from(["cudnn", "index", "pin"]), VERSIONS)),
     "extras": st.dictionaries(st.sampled_from(["onnx", "gpu"]), st.lists(REQUIREMENT, max_size=2))},
)  # fmt: skip
MATRIX = mapping(
    {"schema": st.just(1), "dataset": st.sampled_from(["fuzz", "upstream"]),
     "sources": st.dictionaries(st.sampled_from(["fz1", "fz2"]), mapping({"title": st.text(max_size=5), "url": st.just("https://e.invalid"), "date": st.just("2025-01-01")}), min_size=1),
     "packages": st.dictionaries(st.sampled_from(["fresh", "new-lib", "nope", "fw"]), mapping({"releases": st.lists(RELEASE, min_size=1, max_size=3)}, {"provides": st.sampled_from(["core", "x"])}), min_size=1, max_size=3)},
    {"external": st.lists(NAMES, max_size=2), "breakages": st.lists(mapping({"when": st.lists(REQUIREMENT, max_size=2), "source": st.just("fz1")}, {"symptom": st.text(max_size=5)}), max_size=2)},
)  # fmt: skip
TEXT_EDIT = st.one_of(
    st.just(("none", 0)),
    st.tuples(st.sampled_from(["cut", "flip", "tag", "deep", "tab"]), st.integers(0, 10**6)),
)


def write(path, doc, edit) -> None:
    """The document as YAML, then one raw edit a mapping cannot express."""
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    kind, at = edit
    if kind == "cut":
        text = text[: at % (len(text) + 1)]
    elif kind == "flip" and text:
        text = text[: at % len(text)] + chr(at % 0x2FF + 1) + text[at % len(text) + 1 :]
    elif kind == "tag":
        text = "!!python/object/apply:os.system ['true']\n" + text
    elif kind == "deep":
        text += "extra: " + "[" * 5000 + "]" * 5000 + "\n"
    elif kind == "tab":
        text = text.replace("  ", "\t", 1)
    path.write_text(text, encoding="utf-8")


def use(matrix_files, profile_path) -> None:
    """``compat check --target`` and ``compat lock`` up to pip-compile; CompatError is the only allowed failure
    (Unsatisfiable and Undecided are answers, not errors: the CLI prints them)."""
    try:
        matrix = load_matrix(matrix_files)
        profile = load_profile(profile_path)
        ctx = Context(matrix, profile.platform)
        check(ctx, installed_from_pins(matrix, profile.installed))
        lock_input(ctx.resolve(list(profile.requires)))
    except (CompatError, Unsatisfiable, Undecided):
        pass


@FUZZ
@given(doc=PROFILE, edit=TEXT_EDIT)
def test_hostile_profiles(tmp_path_factory, doc, edit):
    folder = tmp_path_factory.mktemp("profile")
    write(folder / "target.yml", doc, edit)
    (folder / "toy.yaml").write_text(TOY, encoding="utf-8")
    use([folder / "toy.yaml"], folder / "target.yml")


@FUZZ
@given(doc=MATRIX, profile=PROFILE, edit=TEXT_EDIT)
def test_hostile_matrix_files(tmp_path_factory, doc, profile, edit):
    folder = tmp_path_factory.mktemp("matrix")
    write(folder / "m.yaml", doc, edit)
    write(folder / "p.yml", profile, ("none", 0))
    (folder / "toy.yaml").write_text(TOY, encoding="utf-8")
    use([folder / "toy.yaml", folder / "m.yaml"], folder / "p.yml")


@pytest.mark.parametrize(
    ("option", "text"),
    [
        ("--target", "platform: {python: '3.11', os: linux, arch: x86_64}\ninstalled: [fw==1.0.0.0.0.0.0.0.0.0.0]\n"),
        ("--target", "platform: " + "[" * 3000 + "]" * 3000 + "\n"),
        ("--target", "platform: {python: [3, 11], os: linux, arch: x86_64}\n"),
        ("--matrix", "schema: 1\ndataset: x\nsources: {}\npackages: {p: {releases: [{versions: 3}]}}\n"),
        ("--matrix", "schema: 1\n\tdataset: x\n"),
    ],
)
def test_the_cli_names_a_hostile_file_in_one_line(tmp_path, option, text):
    path = tmp_path / "hostile.yml"
    path.write_text(text, encoding="utf-8")
    args = ["check", option, str(path)] + (["--target", "linux-py311-cpu"] if option == "--matrix" else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ("{versions: ['1.0'], source: fz1, kind: declared, requires: [{req: 'lib>=1', builds: 2.5}]}", "builds must be a list"),
        ("{versions: ['1.0'], source: [fz1], kind: declared}", "unknown source"),
        ("{versions: ['1.0'], source: fz1, kind: declared, requires: [{req: 'lib>=1', source: {a: 1}}]}", "unknown source"),
    ],
)  # fmt: skip
def test_a_wrongly_typed_claim_field_is_a_matrix_error(tmp_path, release, expected):
    """They raised TypeError: set() of a float, a list looked up in the sources."""
    path = tmp_path / "m.yaml"
    path.write_text(
        "schema: 1\ndataset: fuzz\nsources: {fz1: {title: t, url: https://e.invalid, date: '2025-01-01'}}\n"
        f"packages:\n  fresh:\n    releases:\n      - {release}\n",
        encoding="utf-8",
    )
    with pytest.raises(CompatError, match=expected):
        load_matrix([path])
