"""``generate --model OUT PROMPT... [--max-length N] [--strategy greedy_search|sampling] [--top-k K]
[--top-p P] [--temperature T] [--seed S] [--json FILE]``: continue prompts with an exported
``nlp.causal_lm`` model (``paddlectl export``), the settings stored in it unless given here.

A prompt is text, or ``@FILE`` for a UTF-8 file. Exit code 2, one line, for a model of another
task, an empty prompt, a prompt or generation longer than the model's positions, or a bad setting.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

USAGE_ERROR = 2


def _prompt(raw: str):
    return Path(raw[1:]) if raw.startswith("@") else raw


def generate_command(
    prompts: Annotated[list[str], typer.Argument(help="Prompt texts, or @FILE for a UTF-8 file.")],
    model: Annotated[str, typer.Option("--model", "-m", help="Directory written by `paddlectl export`.")],
    max_length: Annotated[int | None, typer.Option(help="Characters to generate at most.")] = None,
    strategy: Annotated[str | None, typer.Option(help="greedy_search or sampling.")] = None,
    top_k: Annotated[int | None, typer.Option(help="Sample among the k most probable (0: all).")] = None,
    top_p: Annotated[float | None, typer.Option(help="Sample within this probability mass (1: all).")] = None,
    temperature: Annotated[float | None, typer.Option(help="Divide the logits by this before sampling.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the sampling generator.")] = None,
    json_out: Annotated[str | None, typer.Option("--json", help="Also write the generations here.")] = None,
) -> None:
    """Continue each prompt with an exported causal language model."""
    from rich.console import Console

    from paddlectl.framework.errors import CheckpointError, PaddlectlError
    from paddlectl.framework.inference import Config
    from paddlectl.framework.inference.predictor import Predictor
    from paddlectl.framework.jit.saved_model import read_model_dir

    from .serving import generate_served
    from .task import CausalLMTask

    console = Console(soft_wrap=True)
    try:
        saved = read_model_dir(model)
        pre, post = saved.meta.get("preprocess") or {}, saved.meta.get("postprocess") or {}
        if pre.get("task") != CausalLMTask.name:
            raise CheckpointError(
                f"{model} was exported for task {pre.get('task')!r}, not {CausalLMTask.name}; pass a causal LM "
                "exported with `paddlectl export`"
            )
        run = Predictor(Config(model), saved).run
        options = {"max_length": max_length, "decode_strategy": strategy, "top_k": top_k, "top_p": top_p}
        options |= {"temperature": temperature, "seed": seed}
        results = [generate_served(run, pre, post, _prompt(p), **options) for p in prompts]
    except PaddlectlError as exc:
        Console(stderr=True, soft_wrap=True).print(f"error: {exc}", markup=False, highlight=False)
        raise typer.Exit(USAGE_ERROR) from None
    for result in results:
        unknown = f"  ([UNK]: {''.join(result['unknown'])})" if result["unknown"] else ""
        console.print(f"{result['prompt']}|{result['text']}{unknown}", markup=False, highlight=False)
    if json_out:
        Path(json_out).write_text(json.dumps({"model": model, "generations": results}, ensure_ascii=False, indent=1))


__all__ = ["generate_command"]
