"""Output checks per task and the review queue (append-only JSON lines, no secrets)."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

from paddlectl.serving.checks import OutputCheck, ReviewQueue
from paddlectl.serving.errors import ServeConfigError

GOOD = {"class_id": 3, "label": "3", "score": 0.9, "topk": [{"class_id": 3, "label": "3", "score": 0.9}]}


def test_a_good_classification_record_passes():
    assert OutputCheck("vision.cls").problems([GOOD, GOOD]) == []


def test_schema_problems_name_record_and_field():
    bad = [{"label": "3", "score": 0.5, "topk": []}, {**GOOD, "class_id": "3"}, {**GOOD, "class_id": True}, [1]]
    assert OutputCheck("vision.cls").problems(bad) == [
        "record 0: missing field 'class_id'",
        "record 1: field 'class_id' is str, not int",
        "record 2: field 'class_id' is bool, not int",
        "record 3: expected an object, got list",
    ]


def test_scores_are_probabilities_and_numbers_finite_at_any_depth():
    record = {**GOOD, "topk": [{"class_id": 1, "label": "1", "score": 1.5}], "extra": [float("nan")]}
    assert OutputCheck("vision.cls").problems([record]) == [
        "record 0.topk[0].score: 1.5 is outside [0, 1]",
        "record 0.extra[0]: nan is not finite",
    ]


def test_configured_ranges_regex_deny_and_length_on_text():
    check = OutputCheck(
        "ocr.rec",
        {"ranges": {"score": [0.5, 1.0]}, "regex": "[0-9A-Z ]*", "deny": ["Secret"], "max_text_len": 8},
    )
    assert check.problems([{"label": "AB 12", "score": 0.7}]) == []
    assert check.problems([{"label": "top SECRET!", "score": 0.2}]) == [
        "record 0.label: text of 11 characters is over 8",
        "record 0.label: 'top SECRET!' does not match '[0-9A-Z ]*'",
        "record 0.label: contains the denied word 'secret'",
        "record 0.score: 0.2 is outside [0.5, 1]",
    ]


def test_tasks_without_a_schema_get_required_fields_from_settings():
    check = OutputCheck("nlp.causal_lm", {"require": {"text": "str"}, "text_fields": ["text"], "deny": ["x"]})
    assert check.problems([{"text": "ok"}]) == []
    assert check.problems([{}]) == ["record 0: missing field 'text'"]


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"regexp": "a"}, "unknown settings"),
        ({"regex": "("}, "not a regular expression"),
        ({"ranges": {"score": [1, 0]}}, "low <= high"),
        ({"require": {"a": "float64"}}, "is not one of"),
        ({"deny": "word"}, "list of non-empty strings"),
        ({"max_text_len": 0}, "positive integer"),
    ],
)
def test_bad_settings_are_refused(settings, match):
    with pytest.raises(ServeConfigError, match=match):
        OutputCheck("ocr.rec", settings)


def test_review_queue_appends_private_json_lines_without_secrets(tmp_path):
    queue = ReviewQueue(tmp_path / "review" / "queue.jsonl")
    queue.put("req-1", "digits", ["score out of range"], {"records": [GOOD], "headers": {"Authorization": "Bearer s3"}})
    queue.put("req-2", "digits", "denied word", {"token": "s3", "inputs": {"api_key": "s3", "x": 1}})
    assert stat.S_IMODE(os.stat(queue.path).st_mode) == 0o600
    text = queue.path.read_text()
    assert "s3" not in text
    first, second = queue.entries()
    assert (first["request_id"], first["model"], first["reasons"]) == ("req-1", "digits", ["score out of range"])
    assert first["payload"]["records"] == [GOOD]
    assert second["payload"] == {"token": "[redacted]", "inputs": {"api_key": "[redacted]", "x": 1}}


def test_review_queue_bounds_payloads_and_never_interleaves_lines(tmp_path):
    queue = ReviewQueue(tmp_path / "q.jsonl", max_bytes=1000)
    queue.put("big", "m", "r", {"data": "x" * 5000})
    assert queue.entries()[0]["payload"]["truncated"] is True

    def writer(n):
        for i in range(50):
            queue.put(f"{n}-{i}", "m", "r", {"data": "y" * 500})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = queue.path.read_text().splitlines()
    assert len(lines) == 201 and all(json.loads(line) for line in lines)
