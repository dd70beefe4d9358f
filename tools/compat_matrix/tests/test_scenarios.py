"""Scenarios: fitting, unfitting, upgrades that drag others along, vendor exclusivity, disagreeing
sources. Each asserts the resolution and the key sentences of its explanation."""

from __future__ import annotations

import pytest
from conftest import chosen, ctx_for, pins, profile_ctx, reqs

from paddlectl.compat_matrix.errors import UsageError
from paddlectl.compat_matrix.explain import compress, explain
from paddlectl.compat_matrix.plan import check, plan, why
from paddlectl.compat_matrix.resolver import Unsatisfiable


def failure(ctx, roots):
    with pytest.raises(Unsatisfiable) as info:
        ctx.resolve(roots)
    return explain(ctx, info.value, roots)


def labels(nodes) -> list[str]:
    return [line for n in nodes for line in [n.label, *labels(n.children)]]


def text_of(explanation) -> str:
    return "\n".join(labels(explanation.tree) + explanation.sentences + explanation.fixes + explanation.notes)


# -- the toy matrix: behaviour independent of the curated data ---------------------------------------


def test_newest_fitting_versions_are_chosen(toy):
    solution = ctx_for(toy).resolve(reqs("suite"))
    assert chosen(solution) == {"suite": "suite==2.2", "helper": "helper==3.0", "fw": "fw==2.1.0"}


def test_python_too_old_for_the_newest_suite_falls_back(toy):
    solution = ctx_for(toy, python="3.10").resolve(reqs("suite"))
    # helper 3.0 needs Python 3.11, so suite 2.2 (helper>=3) gives way to suite 2.1 with helper 2.5
    assert chosen(solution)["suite"] == "suite==2.1" and chosen(solution)["helper"] == "helper==2.5"


def test_two_ranges_that_cannot_meet(toy):
    explanation = failure(ctx_for(toy), reqs("suite==1.2", "fw==2.0.0"))
    joined = text_of(explanation)
    assert "Because fw 2.0.0 provides module core and suite<2.0 requires module core<2,>=1.0" in joined
    assert "you asked for fw==2.0.0" in joined and "you asked for suite==1.2" in joined
    assert "keep fw<2.0.0 instead of fw==2.0.0" in explanation.fixes
    assert "use suite>=2.0,<2.2 instead of suite==1.2" in explanation.fixes


def test_platform_conflict_names_the_fact_and_its_value(toy):
    explanation = failure(ctx_for(toy, driver="535.104.05"), reqs("fw-gpu[cu126]==2.1.0"))
    sentence = explanation.sentences[0]
    assert "requires __driver>=560.28.03" in sentence and "has __driver 535.104.05" in sentence
    assert "use the cu118 build: fw-gpu[cu118]==2.1.0" in explanation.fixes


def test_missing_fact_is_said_plainly(toy):
    explanation = failure(ctx_for(toy), reqs("fw-gpu[cu118]"))
    assert "the target has no __driver (NVIDIA driver version)" in explanation.sentences[0]
    assert any("NVIDIA driver version >=520.61.05 needed" in fix for fix in explanation.fixes)


def test_disagreeing_sources_are_both_kept_and_shown(toy):
    explanation = failure(ctx_for(toy, driver="550.54.14"), reqs("fw-gpu[cu126]==2.1.0"))
    note = explanation.notes[0]
    assert "sources disagree" in note and "__driver>=560.28.03" in note and "__driver>=525.60.13" in note
    assert "Toy driver notes" in note and "Toy install guide" in note
    assert any("--policy lenient" in fix for fix in explanation.fixes)


def test_lenient_policy_accepts_either_disagreeing_claim(toy):
    solution = ctx_for(toy, policy="lenient", driver="550.54.14").resolve(reqs("fw-gpu[cu126]==2.1.0"))
    assert chosen(solution)["fw-gpu"] == "fw-gpu[cu126]==2.1.0"


def test_upgrade_drags_the_chain_along(toy):
    ctx = ctx_for(toy)
    installed = pins(toy, "app==1.0", "mid==1.0", "base==1.0")
    result = plan(ctx, installed, reqs("app==2.0"))
    rows = {c.name: (c.old.pin(), c.new.pin(), c.reason) for c in result.changes}
    assert rows["app"][1] == "app==2.0" and rows["app"][2] == "requested"
    assert rows["mid"][1] == "mid==2.0" and "requires mid>=2" in rows["mid"][2]
    assert rows["base"][1] == "base==2.0" and "requires base>=2" in rows["base"][2]  # the smallest step up


def test_plan_changes_nothing_it_does_not_have_to(toy):
    ctx = ctx_for(toy)
    installed = pins(toy, "lib==1.0", "base==1.0", "helper==1.0")
    result = plan(ctx, installed, reqs("ocr==3.6"))
    assert [(c.name, c.old, c.new.pin()) for c in result.changes] == [("ocr", None, "ocr==3.6")]


def test_upgrade_that_cannot_keep_an_installed_package(toy):
    ctx = ctx_for(toy)
    installed = pins(toy, "fw==1.1.0", "legacy==1.0")
    result = plan(ctx, installed, reqs("fw==2.1.0"))
    assert not result.fits
    joined = text_of(result.explanation)
    assert "every legacy requires module core<2" in joined
    assert "you asked for fw==2.1.0" in joined


def test_keep_below_the_version_that_needs_a_newer_python(toy):
    explanation = failure(ctx_for(toy), reqs("ocr==3.7"))
    assert "ocr==3.7 requires __python>=3.12" in explanation.sentences[0]
    assert "keep ocr<3.7 instead of ocr==3.7" in explanation.fixes
    assert any("Python version >=3.12 needed" in fix for fix in explanation.fixes)


def test_providers_of_one_module_exclude_each_other(toy):
    explanation = failure(ctx_for(toy, driver="560.35.03"), reqs("fw==2.1.0", "fw-gpu[cu126]==2.1.0"))
    assert (
        "Because fw and fw-gpu both provide the core module, they cannot be installed together."
        in explanation.sentences
    )


def test_installing_the_other_provider_replaces_the_first(toy):
    ctx = ctx_for(toy, driver="560.35.03")
    installed = pins(toy, "fw==2.1.0", "suite==2.1", "helper==2.5")
    result = plan(ctx, installed, reqs("fw-gpu[cu126]==2.1.0"))
    rows = {c.name: c for c in result.changes}
    assert rows["fw"].new is None and "provides the core module" in rows["fw"].reason
    assert rows["fw-gpu"].new.pin() == "fw-gpu[cu126]==2.1.0"
    assert "suite" not in rows and "helper" not in rows


def test_known_breakage_is_avoided(toy):
    solution = ctx_for(toy).resolve(reqs("helper==3.0", "fw"))
    assert chosen(solution)["fw"] == "fw==2.1.0"


def test_known_breakage_is_explained_with_its_source(toy):
    explanation = failure(ctx_for(toy), reqs("helper==3.0", "fw==2.0.0"))
    sentence = next(s for s in explanation.sentences if "known not to work together" in s)
    assert "helper>=3 and fw<2.1" in sentence and "crashes on import" in sentence
    assert "reported: Toy forum thread (2025-03-01)" in sentence
    assert any("--kinds declared" in fix for fix in explanation.fixes)


def test_reported_claims_can_be_left_out(toy):
    solution = ctx_for(toy, kinds=("declared",)).resolve(reqs("helper==3.0", "fw==2.0.0"))
    assert chosen(solution)["fw"] == "fw==2.0.0"


def test_check_finds_a_version_mismatch_and_the_fix(toy):
    ctx = ctx_for(toy)
    result = check(ctx, pins(toy, "app==2.0", "mid==1.0", "base==1.0"))
    assert not result.fits
    assert "Because app 2.0 requires mid>=2 and the installed mid is 1.0, app 2.0 cannot work." in result.problems
    fix = {c.name: c.new.pin() for c in result.fix.changes}
    assert fix == {"mid": "mid==2.0", "base": "base==2.0"}  # what app 2.0 needs, in the smallest steps


def test_check_finds_a_missing_dependency(toy):
    result = check(ctx_for(toy), pins(toy, "suite==2.1", "fw==2.1.0"))
    assert "Because suite 2.1 requires helper>=2 and helper is not installed, suite 2.1 cannot work." in result.problems


def test_check_finds_two_providers(toy):
    result = check(ctx_for(toy, driver="560.35.03"), pins(toy, "fw==2.1.0", "fw-gpu[cu126]==2.1.0"))
    assert any("both provide the core module" in p for p in result.problems)
    assert not result.fix.fits and any("uninstall" in fix for fix in result.fix.explanation.fixes)


def test_an_extra_is_met_by_its_package_and_the_extras_requirements(toy):
    installed = pins(toy, "viewer==1.0", "vision==1.0", "lib==2.0")
    assert check(ctx_for(toy), installed, outside={"onnx": "1.16.0"}).fits
    assert chosen(ctx_for(toy).resolve(reqs("viewer")))["vision"] == "vision==1.0"


@pytest.mark.parametrize(
    ("outside", "lib", "gap"),
    [
        ({}, "2.0", "whose onnx extra requires onnx>=1.15,<2, and onnx is not installed"),
        ({"onnx": "1.14.0"}, "2.0", "whose onnx extra requires onnx>=1.15,<2, and the installed onnx is 1.14.0"),
        ({"onnx": "1.16.0"}, "1.0", "whose onnx extra requires lib>=2, and the installed lib is 1.0"),
    ],
)
def test_check_names_the_requirement_of_an_extra_that_is_not_met(toy, outside, lib, gap):
    result = check(ctx_for(toy), pins(toy, "viewer==1.0", "vision==1.0", f"lib=={lib}"), outside=outside)
    assert result.problems == [f"Because viewer 1.0 requires vision[onnx]>=1.0, {gap}, viewer 1.0 cannot work."]
    if lib == "1.0":
        assert [(c.name, c.new.pin()) for c in result.fix.changes] == [("lib", "lib==2.0")]
    else:
        assert result.fix is None  # the matrix cannot move onnx: the problem names it, no "nothing to change"


def test_check_says_when_the_installed_version_lacks_the_extra(toy):
    result = check(ctx_for(toy), pins(toy, "viewer==1.0", "vision==1.1", "lib==2.0"), outside={"onnx": "1.16.0"})
    assert result.problems == [
        "Because viewer 1.0 requires vision[onnx]>=1.0 and the installed vision 1.1 defines no extra onnx, "
        "viewer 1.0 cannot work."
    ]
    assert [(c.name, c.new.pin()) for c in result.fix.changes] == [("vision", "vision==1.0")]


def test_check_of_a_profile_leaves_an_extras_third_party_requirements_unchecked(toy):
    assert check(ctx_for(toy), pins(toy, "viewer==1.0", "vision==1.0", "lib==2.0")).fits


def test_why_shows_the_chain_of_requirers(toy):
    node = why(ctx_for(toy), pins(toy, "app==2.0", "mid==2.0", "base==3.0"), "base")
    assert node.label == "base 3.0"
    assert node.children[0].label == "mid 2.0 requires base>=2  ok"
    assert node.children[0].children[0].label == "app 2.0 requires mid>=2  ok"


def test_version_ranges_are_compressed():
    from packaging.version import Version

    known = [Version(v) for v in ("1.0", "1.1", "1.2", "2.0", "2.1")]
    assert compress(known, {known[0], known[1], known[2]}) == ["<2.0"]
    assert compress(known, {known[3], known[4]}) == [">=2.0"]
    assert compress(known, {known[1], known[2]}) == [">=1.1,<2.0"]
    assert compress(known, set(known)) == [""]
    assert compress(known, {known[0], known[4]}) == ["==1.0", "==2.1"]


def test_unknown_package_is_a_usage_error_with_a_suggestion(toy):
    with pytest.raises(UsageError, match="unknown package 'suit'; did you mean suite"):
        plan(ctx_for(toy), {}, reqs("suit==1.0"))


# -- the curated upstream data ---------------------------------------------------------------------------


def test_cpu_profile_resolves_to_the_newest_stack(bundled):
    ctx, _, profile = profile_ctx(bundled, "linux-py311-cpu")
    got = chosen(ctx.resolve(list(profile.requires)))
    assert got["paddlepaddle"] == "paddlepaddle==3.3.1" and got["paddleocr"] == "paddleocr==3.7.0"
    assert got["paddlex"] == "paddlex==3.7.2" and got["numpy"] in ("numpy==2.2.6", "numpy==2.3.0")


def test_cu118_profile_is_consistent_as_installed(bundled):
    ctx, installed, _ = profile_ctx(bundled, "linux-py310-cu118")
    assert check(ctx, installed).fits


def test_paddleocr_upgrade_drags_paddlex_but_not_numpy(bundled):
    ctx, installed, _ = profile_ctx(bundled, "linux-py310-cu118")
    result = plan(ctx, installed, reqs("paddleocr==3.4.0"))
    rows = {c.name: c for c in result.changes}
    assert set(rows) == {"paddleocr", "paddlex"}
    assert rows["paddlex"].new.pin() == "paddlex==3.4.0" and "paddlex>=3.4.0,<3.5.0" in rows["paddlex"].reason


def test_cu126_on_a_535_driver_does_not_fit_and_says_what_would(bundled):
    ctx, installed, _ = profile_ctx(bundled, "linux-py310-cu118")
    result = plan(ctx, installed, reqs("paddlepaddle-gpu[cu126]==3.1.0"))
    assert not result.fits
    joined = text_of(result.explanation)
    assert "requires __driver>=560.28.03 and target linux-py310-cu118 has __driver 535.104.05" in joined
    assert "use the cu118 build: paddlepaddle-gpu[cu118]==3.1.0" in result.explanation.fixes
    assert "NVIDIA driver version >=560.28.03 needed" in joined
    assert "sources disagree" in joined


def test_cu126_fits_once_the_driver_is_new_enough(bundled):
    ctx, installed, _ = profile_ctx(bundled, "linux-py310-cu118", driver="560.35.03", cuda="12.6")
    result = plan(ctx, installed, reqs("paddlepaddle-gpu[cu126]==3.1.0"))
    assert result.fits
    assert {c.name for c in result.changes} == {"paddlepaddle-gpu"}


def test_every_blocking_platform_fact_is_listed_with_what_would_fit(bundled):
    ctx = ctx_for(bundled, python="3.8.18", driver="440.33", cuda="10.2")
    installed = pins(bundled, "paddlepaddle-gpu[cu118]==2.6.2")
    explanation = plan(ctx, installed, reqs("paddlepaddle-gpu==3.3.0")).explanation
    python, driver = explanation.blockers
    assert python.startswith("Python version >=3.9 (the target has __python 3.8.18): ")
    assert driver.startswith(
        "NVIDIA driver version >=520.61.05 for the cu118 build, >=560.28.03 for the cu126 build, "
        ">=575.51.03 for the cu129 build (the target has __driver 440.33): "
    )
    fix = "change all of these, then it fits: Python version >=3.9, NVIDIA driver version >=520.61.05"
    assert explanation.fixes[0] == fix
    moved = ctx_for(bundled, python="3.9", driver="520.61.05", cuda="10.2")
    assert chosen(plan(moved, installed, reqs("paddlepaddle-gpu==3.3.0")).solution) == {
        "paddlepaddle-gpu": "paddlepaddle-gpu[cu118]==3.3.0"
    }


def test_a_missing_cpu_feature_is_listed_beside_python(bundled):
    explanation = failure(ctx_for(bundled, python="3.8", cpu=["sse4_2"]), reqs("paddlepaddle==3.3.0"))
    assert [b.split(" (")[0] for b in explanation.blockers] == ["Python version >=3.9", "CPU features one of avx"]
    assert explanation.fixes[0].endswith("Python version >=3.9, CPU features one of avx")


def test_python_313_rules_out_paddle_26(bundled):
    explanation = failure(ctx_for(bundled, python="3.13"), reqs("paddlepaddle==2.6.2"))
    assert "paddlepaddle==2.6.2 requires __python>=3.8,<3.13" in explanation.sentences[0]
    assert any(fix.startswith("use paddlepaddle>=3.0.0") or "ask for paddlepaddle" in fix for fix in explanation.fixes)


def test_linux_aarch64_gets_the_last_release_with_an_arm_wheel(bundled):
    solution = ctx_for(bundled, arch="aarch64", cpu=["asimd"]).resolve(reqs("paddlepaddle"))
    assert chosen(solution)["paddlepaddle"] == "paddlepaddle==3.2.2"


def test_cpu_without_avx_cannot_run_the_x86_wheels(bundled):
    explanation = failure(ctx_for(bundled, cpu=["sse4_2"]), reqs("paddlepaddle"))
    assert "requires __cpu[avx]" in explanation.sentences[0]
    assert any("CPU features" in fix and "avx" in fix for fix in explanation.fixes)


def test_macos_has_no_gpu_build(bundled):
    explanation = failure(ctx_for(bundled, os="macos", arch="aarch64", cpu=[]), reqs("paddlepaddle-gpu"))
    assert "the target has __os macos" in explanation.sentences[0]


def test_npu_plugin_drags_the_cpu_build_to_its_version(bundled):
    ctx, _, profile = profile_ctx(bundled, "linux-py310-npu")
    got = chosen(ctx.resolve(list(profile.requires)))
    assert got["paddle-custom-npu"] == "paddle-custom-npu[cann800]==3.0.0"
    assert got["paddlepaddle"] == "paddlepaddle==3.0.0"


def test_npu_plugin_without_cann(bundled):
    explanation = failure(ctx_for(bundled), reqs("paddle-custom-npu"))
    assert "has no __cann (Ascend CANN toolkit version)" in explanation.sentences[0]


def test_vendor_builds_exclude_each_other(bundled):
    ctx = ctx_for(bundled, python="3.10", driver="560.35.03", cann="8.0.0")
    explanation = failure(ctx, reqs("paddle-custom-npu", "paddlepaddle-gpu"))
    assert any("paddlepaddle and paddlepaddle-gpu both provide the paddle module" in s for s in explanation.sentences)


def test_switching_to_kunlun_replaces_the_gpu_build(bundled):
    ctx, installed, _ = profile_ctx(bundled, "linux-py310-cu118", xre="5.0.21.21")
    result = plan(ctx, installed, reqs("paddlepaddle-xpu"))
    rows = {c.name: c for c in result.changes}
    assert rows["paddlepaddle-gpu"].new is None and "uninstall it" in rows["paddlepaddle-gpu"].reason
    assert rows["paddlepaddle-xpu"].new.pin() == "paddlepaddle-xpu[p800]==3.0.0"
    assert "paddleocr" not in rows  # paddle>=3.0 is still provided


def test_paddlenlp_2_on_paddle_3_is_a_reported_breakage(bundled):
    explanation = failure(ctx_for(bundled), reqs("paddlenlp==2.8.1", "paddlepaddle>=3.0"))
    joined = text_of(explanation)
    assert "paddlenlp<3 and @paddle>=3.0 are known not to work together" in joined and "reported:" in joined
    assert any("--kinds declared" in fix for fix in explanation.fixes)


def test_paddlex_30_numpy_pin_follows_the_python_marker(bundled):
    on_310 = chosen(ctx_for(bundled, python="3.10").resolve(reqs("paddlex==3.0.0", "paddlepaddle")))
    on_312 = chosen(ctx_for(bundled, python="3.12").resolve(reqs("paddlex==3.0.0", "paddlepaddle")))
    assert on_310["numpy"] == "numpy==1.24.4" and on_312["numpy"] == "numpy==1.26.4"


def test_why_a_driver_is_needed(bundled):
    ctx, installed, _ = profile_ctx(bundled, "linux-py310-cu118")
    node = why(ctx, installed, "__driver")
    assert node.label == "__driver 535.104.05"
    assert "paddlepaddle-gpu 3.0.0 [cu118] requires __driver>=520.61.05  ok" in [c.label for c in node.children]
