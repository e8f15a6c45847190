"""``MemorySystem``: the one facade. Async, as the seed specifies, over one synchronous core.

Every interface (CLI, MCP server, git hooks) calls these methods and renders their results; no
behaviour lives anywhere else. The operations are grouped by the layer that runs them, one mixin
each (``rhythms/operations.py``, ``identity/operations.py``, ``sharing/*ing.py``,
``care/operations.py``); this module opens a memory, keeps its sessions and puts them together.
Each method imports the layer it runs, and the result types are imported for type checking only,
so a command loads what it uses and nothing else: hooks and scripts start elfmem all day
(docs/startup.md).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elfmem.care.operations import CareOperations
from elfmem.config import ElfmemConfig
from elfmem.encodable import checked
from elfmem.identity.operations import IdentityOperations
from elfmem.index.damage import healing
from elfmem.rhythms.operations import RhythmOperations
from elfmem.sharing.archiving import ArchiveOperations
from elfmem.sharing.exchanging import ExchangeOperations
from elfmem.sharing.merging import MergingOperations
from elfmem.sharing.operations import SyncOperations

if TYPE_CHECKING:
    from elfmem.adapters.llm import LLM
    from elfmem.clock import Clock
    from elfmem.identity.setup import InitResult
    from elfmem.rhythms.core import Core
    from elfmem.store import Store

READS = (
    *("ls", "inbox", "show", "block_history", "ledger", "history", "frame", "recall", "status"),
    *("index_check", "index_status", "index_parity", "doctor_frames", "doctor", "visualise"),
    *("rescue", "migrate_status", "migrate_plan"),
)
"""Methods that only read the memory: safe to run again after the index heals."""

ConfigLike = ElfmemConfig | str | Path | Mapping[str, Any] | None


def _resolve_config(store: Store, config: ConfigLike) -> ElfmemConfig:
    from elfmem import config as config_mod

    if isinstance(config, ElfmemConfig):
        return config
    if isinstance(config, Mapping):
        return config_mod.from_mapping(config)
    if isinstance(config, (str, Path)):
        return config_mod.load(Path(config))
    return _stored_config(store) or ElfmemConfig()


def _stored_config(store: Store) -> ElfmemConfig | None:
    """The memory's own ``.elfmem/config.yaml``: on disk in a work tree, else (a bare
    repository, or ref mode) as the memory ref's tip commits it; None when there is none."""
    from elfmem import config as config_mod
    from elfmem.config import CONFIG_CACHE, CONFIG_PATH

    cache = store.state_dir / CONFIG_CACHE
    if store.memory_workdir is not None:
        path = store.memory_workdir / CONFIG_PATH
        return config_mod.load(path, cache) if path.exists() else None
    data = store.committed_file(CONFIG_PATH)
    if data is None:
        return None
    return config_mod.loads(data.decode("utf-8", "replace"), f"HEAD:{CONFIG_PATH}", cache)


@checked  # text UTF-8 cannot encode is InvalidInput at the door, before any read or write
@healing(lambda system: system._core.db(), READS)  # a damaged index page heals, then reads again
class MemorySystem(
    RhythmOperations,
    IdentityOperations,
    CareOperations,
    MergingOperations,
    SyncOperations,
    ArchiveOperations,
    ExchangeOperations,
):
    """An agent's memory in a git repository. Open with ``from_config`` (or ``managed``)."""

    def __init__(self, core: Core) -> None:

        self._core = core
        self._llm: LLM | None = None
        self._llm_resolved = False

    @property
    def llm(self) -> LLM | None:
        """The configured model (None when ``llm.model`` is empty); built on first use."""
        from elfmem.adapters.llm import make_llm

        if not self._llm_resolved:
            self._llm = make_llm(self._core.config.llm, self._core.store.root)
            self._llm_resolved = True
        return self._llm

    @llm.setter
    def llm(self, value: LLM | None) -> None:
        """Use this model instead (a ``ScriptedLLM`` in tests, any object with ``complete``)."""
        self._llm = value
        self._llm_resolved = True

    # ---- opening ------------------------------------------------------------------------------

    @classmethod
    async def from_config(
        cls,
        path: str | Path | None = None,
        config: ConfigLike = None,
        *,
        clock: Clock | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> MemorySystem:
        """Open the memory in the repository containing ``path`` (default: the current directory).

        ``config`` may be an ElfmemConfig, a YAML path, a dict, or None to read
        ``.elfmem/config.yaml`` from the repository. ``clock`` (default: the wall clock) is what
        decay, sessions and stamps read, and ``new_id`` makes block ids (default: random); a
        simulation passes both to make a run repeatable (elfmem/clock.py).
        """
        from elfmem.adapters.embedding import make_embedder
        from elfmem.rhythms.core import Core
        from elfmem.sharing import plaingit
        from elfmem.sharing.backup import adopt_origin_notes
        from elfmem.sharing.merging import attach
        from elfmem.store import Store

        store = Store.open(Path(path) if path else None, "elf")
        plaingit.on_open(store)  # adopt a cloned memory ref, merge notes plain git fetched
        cfg = _resolve_config(store, config)
        store = Store(store.repo, cfg.project.agent_name)
        core = attach(Core(store, cfg, make_embedder(cfg.embeddings), clock, new_id))
        adopt_origin_notes(core)  # a clone of a backup bundle: its ledger comes in here
        branch = store.memory_elsewhere()
        if branch is not None:  # an empty clone: said on every command, before anyone inits
            core.warnings[
                f"this checkout holds no memory, but branch {branch} does: run "
                f"`git switch {branch}` (not `elfmem init`, which would start a second memory)"
            ] = None
        advice = store.pull_advice()
        if advice is not None:  # a pull stopped on memory files: said on every command
            core.warnings[advice] = None
        return cls(core)

    @classmethod
    async def from_env(cls, path: str | Path | None = None) -> MemorySystem:
        """Configuration from ``ELFMEM_<SECTION>__<KEY>`` variables; ``ELFMEM_PATH`` names the
        repo."""
        from elfmem import config as config_mod

        cfg = config_mod.from_env()
        return await cls.from_config(path or os.environ.get("ELFMEM_PATH"), cfg)

    @classmethod
    @asynccontextmanager
    async def managed(
        cls, path: str | Path | None = None, config: ConfigLike = None
    ) -> AsyncIterator[MemorySystem]:
        """Open, start a session, yield, end the session and close: right for scripts."""
        system = await cls.from_config(path, config)
        try:
            async with system.session():
                yield system
        finally:
            await system.close()

    @classmethod
    async def init(
        cls,
        path: str | Path | None = None,
        *,
        name: str | None = None,
        seed: bool = False,
        self_text: str | None = None,
        template: str | None = None,
        ref: str | None = None,
        clock: Clock | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> tuple[MemorySystem, InitResult]:
        """Scaffold a memory (creating the repository if there is none) or refresh one.

        ``ref`` puts memory on its own ref (e.g. ``elfmem`` → refs/heads/elfmem) instead of the
        checked-out branch; on an existing branch-mode memory it moves it there. ``clock`` and
        ``new_id`` are as for ``from_config``."""
        from elfmem.adapters.embedding import make_embedder
        from elfmem.identity import setup
        from elfmem.rhythms.core import Core
        from elfmem.sharing import driver as merge_driver
        from elfmem.sharing import mode as mode_mod
        from elfmem.sharing import plaingit
        from elfmem.sharing.merging import attach
        from elfmem.store import Store

        root = Path(path or Path.cwd()).resolve()
        store, created = Store.open_or_init(root, name or "elf")
        plaingit.on_open(store)
        if ref is not None:
            boot = Store(store.repo, name or "elf")
            cfg0, _ = setup.config_for(_stored_config(boot), name)
            mode_mod.to_ref(Core(boot, cfg0, make_embedder(cfg0.embeddings)), ref)
        existing = _stored_config(store)
        cfg, write_config = setup.config_for(existing, name)
        old_name = existing.project.agent_name if existing is not None else None
        renamed_from = old_name if name and old_name and old_name != name else None
        store = Store(store.repo, cfg.project.agent_name)
        core = Core(store, cfg, make_embedder(cfg.embeddings), clock, new_id)
        result = setup.init(
            core,
            created,
            write_config=write_config,
            seed=seed,
            self_text=self_text,
            template=template,
            renamed_from=renamed_from,
        )
        merge_driver.register(core.store.root, attributes=False)
        plaingit.setup(store.repo)
        return cls(attach(core)), result

    async def setup(
        self, name: str | None = None, seed: bool = False, template: str | None = None
    ) -> InitResult:
        """State-aware setup of the memory this system has open (``init`` on its repository).

        Idempotent: on an established memory it only refreshes — a new ``name``, the seed or a
        template's blocks for roles no live block fills yet. The system then carries on with the
        refreshed config, in a new session if one was open; its model stays as it was set."""
        had_session = self._core.ledger.open_session is not None
        fresh, result = await MemorySystem.init(self.root, name=name, seed=seed, template=template)
        await self.end_session()
        self._core.close()
        self._core = fresh._core
        if had_session:
            await self.begin_session()
        return result

    @staticmethod
    def templates() -> dict[str, str]:
        """Profession templates for ``init --template``: name → description."""
        from elfmem.identity.templates import TEMPLATES

        return {name: desc for name, (desc, _) in TEMPLATES.items()}

    @property
    def config(self) -> ElfmemConfig:
        return self._core.config

    @property
    def root(self) -> Path:
        return self._core.store.root

    # ---- sessions -----------------------------------------------------------------------------

    @asynccontextmanager
    async def session(self) -> AsyncIterator[MemorySystem]:
        """Decay advances only inside sessions; nested calls join the open one."""
        if self._core.ledger.open_session is not None:
            yield self
            return
        await self.begin_session()
        try:
            yield self
        finally:
            await self.end_session()

    async def begin_session(self) -> str:
        """Start the decay clock (a no-op returning the open id if one is running)."""
        from elfmem.rhythms import sessions

        if self._core.ledger.open_session is None:
            return sessions.begin(self._core)
        return self._core.ledger.open_session[0]

    async def end_session(self) -> None:
        """Stop the decay clock and flush the ledger spool."""
        from elfmem.rhythms import sessions

        sessions.end(self._core)

    async def close(self) -> None:
        """End any open session and flush the ledger spool."""
        await self.end_session()
        self._core.close()

    def take_warnings(self) -> list[str]:
        """Problems in memory files seen since the last call (``file:line: what``, each once):
        a conflicted or unparsable bucket whose readable blocks were served, a block id in two
        files. Interfaces show them once per command (the CLI on stderr and as ``warnings``)."""
        taken = list(self._core.warnings)
        self._core.warnings.clear()
        return taken

    async def guide(self, operation: str | None = None) -> str:
        """How to use an operation (or all of them); never raises."""
        from elfmem import guide as guide_mod

        return guide_mod.guide(operation)
