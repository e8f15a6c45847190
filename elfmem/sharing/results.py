"""What peer and exchange operations return: typed, with ``summary`` and a stable ``to_dict()``."""

from __future__ import annotations

from dataclasses import dataclass, field

from elfmem.block.text import preview
from elfmem.rhythms.results import Result


@dataclass(frozen=True)
class PeerIdentity(Result):
    id: str
    """This memory's peer id: ``did:key:z6Mk…`` of the ed25519 key that signs its mail."""
    key: str
    """Where the key lives: ``git`` (git's own SSH signing key), ``elfmem`` (a key in the git
    dir) or ``none`` (a clone without the key: mail goes out unsigned)."""
    signing: str
    """How mail is signed: ``ssh``, ``openpgp``, ``x509`` or ``unsigned``."""
    commit_id: str | None = None
    """The commit that recorded the id (None: it was recorded already)."""

    @property
    def summary(self) -> str:
        made = " (recorded)" if self.commit_id else ""
        return f"peer id {self.id}{made}; key: {self.key}; mail signed: {self.signing}"


@dataclass(frozen=True)
class PeerInfo(Result):
    name: str
    id: str
    remote: str
    prior_trust: float
    """The trust set with ``peer add``/``peer trust``."""
    trust: float
    """Prior trust moved by the outcomes of blocks imported from this peer."""
    outcomes: int
    imported: int
    """Blocks in this memory tagged ``peer/<name>``."""

    @property
    def summary(self) -> str:
        return (
            f"{self.name}  trust {self.trust:.3f} (set {self.prior_trust:.2f}, {self.outcomes} "
            f"outcomes on {self.imported} imported)  {self.id}  {self.remote or '(default remote)'}"
        )


@dataclass(frozen=True)
class PeerList(Result):
    self_id: str
    peers: list[PeerInfo]

    @property
    def summary(self) -> str:
        head = f"this memory: {self.self_id or '(no id yet: elfmem peer init)'}"
        return "\n".join([head, *(p.summary for p in self.peers)] or [head])


@dataclass(frozen=True)
class PeerChange(Result):
    op: str
    """``peer-add``, ``peer-remove`` or ``peer-trust``."""
    name: str
    commit_id: str | None
    trust: float | None = None

    @property
    def summary(self) -> str:
        if self.commit_id is None:
            return f"{self.op}: {self.name} unchanged"
        trust = f" (trust {self.trust:.2f})" if self.trust is not None else ""
        return f"{self.op}: {self.name}{trust} in commit {self.commit_id[:12]}"


@dataclass(frozen=True)
class SendResult(Result):
    block_id: str
    peer: str
    ref: str
    """The mail ref the message is on, here and on the remote."""
    mail_commit: str
    commit_id: str
    """The commit recording the sent message in this memory."""
    signature: str
    remote: str

    @property
    def summary(self) -> str:
        text = (
            f"sent {self.block_id} to {self.peer} via {self.remote} ({self.ref}); "
            f"signature: {self.signature}"
        )
        if self.signature == "unsigned":
            text += (
                " (peers refuse unsigned mail from an id that names a key: send from the clone "
                "that holds .git/elfmem/peer/id_ed25519, or copy that key here)"
            )
        return text


@dataclass(frozen=True)
class InboxMessage(Result):
    block_id: str
    sender_id: str
    sender: str
    """The sender's roster name, or empty when the roster does not know the sender."""
    content: str
    tags: list[str]
    commit: str
    """The mail commit carrying the message: the evidence of who wrote it."""
    signature: str
    """``verified``, ``unsigned``, ``bad`` or ``unverifiable``."""
    state: str
    """``new``, ``imported`` (in this memory already) or ``refused`` (see ``reason``)."""
    reason: str = ""

    @property
    def summary(self) -> str:
        who = self.sender or self.sender_id
        why = f" ({self.reason})" if self.reason else ""
        return (
            f"[{self.state}] {self.block_id} from {who}, signature {self.signature}{why}: "
            f"{preview(self.content)}"
        )


@dataclass(frozen=True)
class InboxResult(Result):
    messages: list[InboxMessage]
    imported: list[str] = field(default_factory=list)
    """Block ids imported by this call."""
    commit_id: str | None = None

    @property
    def summary(self) -> str:
        lines = [m.summary for m in self.messages] or ["(no messages)"]
        if self.imported:
            lines.append(f"imported {len(self.imported)} in commit {str(self.commit_id)[:12]}")
        return "\n".join(lines)


@dataclass(frozen=True)
class InboxStatus(Result):
    new: int
    imported: int
    refused: int
    by_peer: dict[str, int]
    """New messages per sender (roster name, or id when unknown)."""

    @property
    def summary(self) -> str:
        per = ", ".join(f"{k}: {v}" for k, v in sorted(self.by_peer.items()))
        return f"{self.new} new, {self.imported} imported, {self.refused} refused" + (
            f" ({per})" if per else ""
        )


@dataclass(frozen=True)
class ExportResult(Result):
    path: str
    share: str
    blocks: int
    skipped_private: int
    skipped_confidence: int
    digest: str

    @property
    def summary(self) -> str:
        return (
            f"exported {self.blocks} blocks ({self.share}) to {self.path}; left out "
            f"{self.skipped_private} private/peer-level and {self.skipped_confidence} "
            "below the confidence floor"
        )


@dataclass(frozen=True)
class ImportResult(Result):
    path: str
    source: str
    """The bundle's author id; ``self`` for a self-merge."""
    trust: float
    imported: list[str]
    already: int
    """Blocks in the bundle this memory held already (re-imports add nothing)."""
    commit_id: str | None

    @property
    def summary(self) -> str:
        if self.commit_id is None:
            return f"nothing new in {self.path} ({self.already} blocks already here)"
        return (
            f"imported {len(self.imported)} blocks from {self.source} at trust {self.trust:.2f} "
            f"in commit {self.commit_id[:12]} ({self.already} already here); "
            "`elfmem undo` takes it back"
        )
