"""The embedded static embedder: a model2vec model shipped inside the package (the fast tier).

A static model is a lookup table of token vectors (distilled from all-MiniLM-L6-v2, see
``model/PROVENANCE.md``), so embedding is tokenise, average, normalise: no torch, no network.
The folder is read here with ``tokenizers`` and ``safetensors`` (model2vec's own dependencies)
and encoded exactly as model2vec's ``StaticModel.encode`` does, for two reasons: model2vec treats
a missing folder as a hub id and tries to download it, and importing it pulls in huggingface_hub,
which costs several times the load itself on every CLI call.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from elfmem.adapters.embedder import file_sha256, normalise_rows, text_list
from elfmem.errors import ConfigError
from elfmem.lazyload import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

    from elfmem.adapters.embedder import Matrix
else:
    np = lazy_module("numpy")

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "model"
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
_DEFAULT_NAME = "minilm-l6-m2v"
_DTYPE_TAGS = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8"}
_BATCH = 1024  # texts tokenised per call: bounds the memory held by encodings
_RECOVERY = (
    "Point `embeddings.path` in .elfmem/config.yaml at a model2vec folder holding "
    "model.safetensors, tokenizer.json and config.json, or remove it to use the embedded model "
    "(reinstall elfmem if that one is missing)."
)


class StaticEmbedder:
    """Embeds with a local model2vec folder (default: the shipped one); loads on first use."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else DEFAULT_MODEL_DIR
        self._lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None
        self._table: Matrix | None = None
        self._unk_id: int | None = None
        self._config: dict[str, object] | None = None
        self._identity: str | None = None
        self._max_length: int | None = None

    @property
    def identity(self) -> str:
        """``static:<name>-<dims>-<dtype>:<first 12 hex of the weights' sha256>``."""
        if self._identity is None:
            dtype = str(self._read_config().get("embedding_dtype", "float32"))
            name = _DEFAULT_NAME if self.path.resolve() == DEFAULT_MODEL_DIR else "m2v"
            label = f"{name}-{self.dimensions}-{_DTYPE_TAGS.get(dtype, dtype)}"
            self._identity = f"static:{label}:{file_sha256(self.path / MODEL_FILES[0])[:12]}"
        return self._identity

    @property
    def dimensions(self) -> int:
        dims = self._read_config().get("hidden_dim")
        if not isinstance(dims, int) or dims < 1:
            raise ConfigError(f"{self.path / 'config.json'} has no valid hidden_dim.", _RECOVERY)
        return dims

    def load(self) -> float:
        """Load the model now (it is otherwise loaded on first embed); returns the seconds taken."""
        start = time.perf_counter()
        self._loaded()
        return time.perf_counter() - start

    def embed(self, texts: Sequence[str]) -> Matrix:
        batch = text_list(texts)
        tokenizer, table = self._loaded()
        out = np.zeros((len(batch), table.shape[1]), dtype=np.float32)
        for start in range(0, len(batch), _BATCH):
            encodings = tokenizer.encode_batch_fast(
                batch[start : start + _BATCH], add_special_tokens=False
            )
            # Cut at max_length as the model was trained; unknown words carry no meaning, so
            # their [UNK] is dropped, as model2vec does.
            cut = self._max_length
            ids = [[i for i in enc.ids[:cut] if i != self._unk_id] for enc in encodings]
            out[start : start + len(ids)] = _mean_rows(table, ids)
        return normalise_rows(out)

    def tokens(self, text: str) -> tuple[list[str], npt.NDArray[np.int64]]:
        """``text``'s tokens as the tokenizer spells them and their ids, [UNK] dropped and not cut
        at ``max_length`` (late interaction reads the whole of a long block; ``retrieval.late``)."""
        enc = self._loaded()[0].encode(text, add_special_tokens=False)
        kept = [(t, i) for t, i in zip(enc.tokens, enc.ids, strict=True) if i != self._unk_id]
        return [t for t, _ in kept], np.array([i for _, i in kept], dtype=np.int64)

    def token_ids(self, texts: Sequence[str]) -> list[npt.NDArray[np.int64]]:
        """Each text's token ids as ``tokens`` gives them, tokenised together (one batch)."""
        tokenizer, _ = self._loaded()
        encodings = tokenizer.encode_batch_fast(text_list(texts), add_special_tokens=False)
        return [
            np.array([i for i in enc.ids if i != self._unk_id], dtype=np.int64) for enc in encodings
        ]

    def token_table(self) -> Matrix:
        """The token vectors (one float32 row per token id) that ``embed`` averages."""
        return self._loaded()[1]

    def _loaded(self) -> tuple[Tokenizer, Matrix]:
        with self._lock:
            if self._tokenizer is None or self._table is None:
                self._tokenizer, self._table = self._load()
            return self._tokenizer, self._table

    def _load(self) -> tuple[Tokenizer, Matrix]:
        config = self._read_config()
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
            tensors = load_file(self.path / "model.safetensors")
        except Exception as exc:  # safetensors and tokenizers (a bare Exception) raise their own
            raise ConfigError(
                f"Cannot load the embedding model at {self.path}: {exc}", _RECOVERY
            ) from exc
        if set(tensors) != {"embeddings"}:
            raise ConfigError(
                f"{self.path}: expected one 'embeddings' tensor, found {sorted(tensors)} "
                "(vocabulary-quantised model2vec models are not supported).",
                _RECOVERY,
            )
        # The table is held in float32: averaging float16 rows is slower; float16 saves disk only.
        table = np.ascontiguousarray(tensors["embeddings"], dtype=np.float32)
        vocab = tokenizer.get_vocab_size()
        if table.ndim != 2 or table.shape[1] != self.dimensions or table.shape[0] < vocab:
            raise ConfigError(
                f"{self.path}: weights of shape {table.shape} do not fit hidden_dim "
                f"{self.dimensions} in config.json and a vocabulary of {vocab} tokens.",
                _RECOVERY,
            )
        tokenizer.no_padding()
        # ``embed`` cuts each text at max_length itself: the same tokenizer, untruncated, gives
        # late interaction a long block's every token (one tokenizer: building a second took
        # 60-70 ms in every new process)
        tokenizer.no_truncation()
        max_length = config.get("max_length", 512)
        self._max_length = max_length if isinstance(max_length, int) else None
        unk = getattr(tokenizer.model, "unk_token", None)
        self._unk_id = tokenizer.token_to_id(unk) if isinstance(unk, str) else None
        return tokenizer, table

    def _check_folder(self) -> None:
        if not self.path.is_dir():
            raise ConfigError(f"Embedding model folder {self.path} does not exist.", _RECOVERY)
        missing = [name for name in MODEL_FILES if not (self.path / name).is_file()]
        if missing:
            raise ConfigError(
                f"Embedding model folder {self.path} lacks {', '.join(missing)}.", _RECOVERY
            )

    def _read_config(self) -> dict[str, object]:
        if self._config is None:
            self._check_folder()
            try:
                config = json.loads((self.path / "config.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ConfigError(
                    f"Cannot read {self.path / 'config.json'}: {exc}", _RECOVERY
                ) from exc
            if not isinstance(config, dict):
                raise ConfigError(f"{self.path / 'config.json'} is not a JSON object.", _RECOVERY)
            self._config = config
        return self._config


def _mean_rows(table: Matrix, ids: list[list[int]]) -> Matrix:
    """Mean token vector of each id list; an empty list gives a zero row.

    A plain loop of small gathers: measured ~50x faster here than one big gather with
    ``np.add.reduceat``, which walks rows slowly and allocates a (tokens x dims) block.
    """
    out = np.zeros((len(ids), table.shape[1]), dtype=np.float32)
    for row, token_ids in enumerate(ids):
        if token_ids:
            out[row] = table[token_ids].mean(axis=0)
    return out
