"""The sharing half of ``MemorySystem``: peers, their mail and exchange bundles, as async calls.

A mixin keeps ``api.py`` a readable size; ``MemorySystem`` inherits these, so the CLI, the MCP
table and the guide see them as its own methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from elfmem.rhythms.core import Core
    from elfmem.sharing.results import (
        ExportResult,
        ImportResult,
        InboxResult,
        InboxStatus,
        PeerChange,
        PeerIdentity,
        PeerInfo,
        PeerList,
        SendResult,
    )


class ExchangeOperations:
    """Memory that travels between agents: who we are, whom we trust, what we tell each other."""

    if TYPE_CHECKING:
        _core: Core

    async def peer_init(self) -> PeerIdentity:
        """This memory's peer id (a did:key), recorded in the roster on first call."""
        from elfmem.sharing import peers

        return peers.init(self._core)

    async def peer_add(
        self, name: str, peer_id: str, remote: str = "", trust: float = 0.5
    ) -> PeerChange:
        """Register a peer by its did:key id and the remote it reads (one commit)."""
        from elfmem.sharing import peers

        return peers.add(self._core, name, peer_id, remote, trust)

    async def peer_remove(self, name: str) -> PeerChange:
        """Unregister a peer (one commit); blocks imported from it stay, still tagged."""
        from elfmem.sharing import peers

        return peers.remove(self._core, name)

    async def peer_trust(self, name: str, value: float | None = None) -> PeerChange | PeerInfo:
        """Set a peer's prior trust (one commit), or, without a value, show its folded trust."""
        from elfmem.sharing import peers

        return peers.set_trust(self._core, name, value)

    async def peer_list(self) -> PeerList:
        """Registered peers with their set and folded trust and how many blocks came from each."""
        from elfmem.sharing import peers

        return peers.listing(self._core)

    async def peer_send(self, peer: str, message: str, tags: Sequence[str] = ()) -> SendResult:
        """Send a message to a peer: kept here, committed (signed) on its mail ref, pushed."""
        from elfmem.sharing import mailbox

        return mailbox.send(self._core, peer, message, tags)

    async def peer_inbox(self, do_import: bool = False) -> InboxResult:
        """Fetch and list messages addressed to this memory; ``do_import`` imports new ones."""
        from elfmem.sharing import mailbox

        return mailbox.inbox(self._core, do_import)

    async def peer_inbox_status(self) -> InboxStatus:
        """How many messages are new, imported or refused, after a fetch."""
        from elfmem.sharing import mailbox

        return mailbox.status(self._core)

    async def export(
        self,
        share: str,
        output: str | Path,
        min_confidence: float = 0.0,
        overwrite: bool = True,
        confined: bool = False,
    ) -> ExportResult:
        """Write a bundle of shareable blocks with provenance and folded ledger state.

        ``confined`` (what the MCP server passes): ``output`` is a file inside the exports
        folder (``sharing.exports``), and ``overwrite`` must be true to replace one."""
        from elfmem.sharing import exchange, exports

        path = exports.client_path(self._core, str(output), overwrite) if confined else Path(output)
        return exchange.export(self._core, share, path, min_confidence, overwrite)

    async def import_bundle(
        self, path: str | Path, from_peer: str | None = None, self_merge: bool = False
    ) -> ImportResult:
        """Import a bundle from a peer (quarantined) or from this memory (``self_merge``)."""
        from elfmem.sharing import exchange

        return exchange.import_bundle(self._core, Path(path), from_peer, self_merge)
