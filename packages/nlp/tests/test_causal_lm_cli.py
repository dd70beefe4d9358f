"""``paddlectl train / export / predict / eval`` on a tiny nlp.causal_lm config, end to end, and the
generate command over the exported model: the export takes any sequence length and carries its
vocabulary; bad prompts are one line and exit code 2."""

import json

import numpy as np
import pytest
import typer
import yaml
from _causal_lm import tiny_config, write_corpus
from typer.testing import CliRunner

from paddlectl.cli.app import app
from paddlectl.framework.hapi.export import load_trained
from paddlectl.framework.inference import Config
from paddlectl.framework.inference.predictor import Predictor
from paddlectl.framework.jit.saved_model import MODEL_JSON, read_model_dir
from paddlectl.nlp.causal_lm.command import generate_command
from paddlectl.nlp.causal_lm.serving import generate_served
from paddlectl.nlp.causal_lm.task import CausalLMTask
from paddlectl.nlp.generation import generate

cli = CliRunner()
generate_app = typer.Typer()
generate_app.command()(generate_command)


def _invoke(*args, target=app):
    return cli.invoke(target, [str(a) for a in args])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("lm_cli")
    config = root / "lm.yml"
    config.write_text(yaml.safe_dump(tiny_config(write_corpus(root / "corpus"), root / "run"), allow_unicode=True))
    export = ("export", "-w", root / "run" / "best", "-o", root / "model", "--verify")
    for command in (("train", "-c", config, "-q"), export):
        result = _invoke(*command)
        assert result.exit_code == 0, f"{command[0]}: {result.output}"
    return root


def test_train_logs_perplexity_and_the_loss_falls(trained):
    records = [json.loads(line) for line in (trained / "run" / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in records if r["kind"] == "train"]
    evaluations = [r for r in records if r["kind"] == "eval"]
    assert len(evaluations) == 2 and {"acc", "ppl", "loss"} <= set(evaluations[-1])
    assert losses[-1] < losses[0]
    assert evaluations[-1]["ppl"] == pytest.approx(np.exp(evaluations[-1]["loss"]), rel=1e-4)


def test_the_export_has_a_symbolic_sequence_length_and_its_vocabulary(trained):
    meta = json.loads((trained / "model" / MODEL_JSON).read_text())
    assert meta["preprocess"]["vocab"][:2] == ["[PAD]", "[UNK]"] and meta["preprocess"]["max_position_embeddings"] == 24
    saved = read_model_dir(trained / "model")
    predictor = Predictor(Config(str(trained / "model")), saved)
    for length in (2, 19):
        ids = np.random.default_rng(length).integers(0, len(meta["preprocess"]["vocab"]), (2, length))
        assert predictor.run([ids])[0].shape == (2, length, len(meta["preprocess"]["vocab"]))


def test_served_generation_equals_eager_generation_with_the_cache(trained):
    config = yaml.safe_load((trained / "lm.yml").read_text())
    task = CausalLMTask()
    model = load_trained(task, config, trained / "run" / "best")
    saved = read_model_dir(trained / "model")
    pre, post = saved.meta["preprocess"], saved.meta["postprocess"]
    run = Predictor(Config(str(trained / "model")), saved).run
    served = generate_served(run, pre, post, "中共中央", max_length=8, stop_at_newline=False)
    (ids,) = task.preprocess(pre, ["中共中央"])
    eager, _ = generate(model, ids, max_length=8, use_cache=True, suppress_tokens=[0, 1])
    assert served["text"] == "".join(pre["vocab"][i] for i in eager[0])


def test_predict_gives_the_next_characters_and_refuses_an_empty_prompt(trained, tmp_path):
    for name, text in {"a.txt": "中共中央总书记\n", "b.txt": "新年", "empty.txt": ""}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    model, good, bad = trained / "model", tmp_path / "good.json", tmp_path / "bad.json"
    ok = _invoke(
        "predict", "-m", model, "-i", tmp_path / "a.txt", tmp_path / "b.txt", "--batch-size", 1, "--json", good
    )
    assert ok.exit_code == 0, ok.output
    predictions = json.loads(good.read_text())["predictions"]
    assert [len(p["topk"]) for p in predictions] == [3, 3] and all(0 < p["score"] <= 1 for p in predictions)
    empty = _invoke("predict", "-m", model, "-i", tmp_path / "empty.txt", "--json", bad)
    assert empty.exit_code == 2 and "the prompt is empty" in empty.output and not bad.exists()


def test_eval_reports_the_trainers_perplexity(trained):
    result = _invoke("eval", "-m", trained / "model", "-c", trained / "lm.yml", "--output-dir", trained / "eval")
    assert result.exit_code == 0, result.output
    (report,) = (trained / "eval").glob("runs/*/report.json")
    metrics = json.loads(report.read_text())["metrics"]
    records = [json.loads(line) for line in (trained / "run" / "metrics.jsonl").read_text().splitlines()]
    best = max((r for r in records if r["kind"] == "eval"), key=lambda r: r["acc"])
    assert metrics["ppl"] == pytest.approx(best["ppl"], rel=1e-4) and metrics["acc"] == pytest.approx(best["acc"])


def test_generate_continues_prompts_and_maps_unknown_characters(trained, tmp_path):
    (tmp_path / "p.txt").write_text("新年", encoding="utf-8")
    out = tmp_path / "gen.json"
    result = _invoke("中共", f"@{tmp_path / 'p.txt'}", "Ｘ中", "-m", trained / "model", "--json", out,
                     "--strategy", "sampling", "--top-k", "5", "--seed", "1", target=generate_app)  # fmt: skip
    assert result.exit_code == 0, result.output
    generations = json.loads(out.read_text(encoding="utf-8"))["generations"]
    assert [g["prompt"] for g in generations] == ["中共", "新年", "Ｘ中"]
    assert [g["unknown"] for g in generations] == [[], [], ["Ｘ"]]
    texts = [g["text"] for g in generations]  # each ends before its sentence's end (may be at once)
    assert all(len(t) <= 6 and not {"\n", "[UNK]", "[PAD]"} & {*t, t} for t in texts), texts


@pytest.mark.parametrize(
    "args, message",
    [
        (["", "--max-length", "3"], "the prompt is empty"),
        (["中共", "--max-length", "23"], "exceed the model's 24 positions; lower max_length to at most 22"),
        (["中" * 25], "the model attends over 24"),
        (["中共", "--top-p", "0"], "top_p must be in (0, 1]"),
    ],
)
def test_generate_refuses_bad_input_in_one_line(trained, args, message):
    result = _invoke(*args, "-m", trained / "model", target=generate_app)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
