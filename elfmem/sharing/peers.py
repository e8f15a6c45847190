"""Peers: this memory's identity (a did:key), and the roster of peers it knows, with trust.

The id is the did:key of the ed25519 key that signs this memory's mail: git's own SSH signing
key when git has one, else a key elfmem keeps in the git dir. The roster (``roster.py``) is a
committed file; each change here is one commit, so ``undo`` takes it back. A peer's trust is the
prior set here moved by the outcomes of the blocks imported from it (docs/peers.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from elfmem.block.model import is_valid_tag, now_iso
from elfmem.errors import ConflictError, InvalidInput
from elfmem.index import queries
from elfmem.rhythms.core import Core
from elfmem.sharing import roster as roster_mod
from elfmem.sharing.did import check_id, did_from_ed25519
from elfmem.sharing.results import (
    PeerChange,
    PeerIdentity,
    PeerInfo,
    PeerList,
)
from elfmem.sharing.roster import Peer, Roster
from elfmem.store import MemoryView, Plan, anchor_for_block, mail
from elfmem.store.mail import Signer


def load(core: Core) -> Roster:
    return roster_mod.read(core.store.view())


def _write_roster(
    core: Core, op: str, subject: str, change: Callable[[Roster], Roster]
) -> str | None:
    """One commit rewriting the roster with ``change(roster) -> roster``; None if unchanged."""

    def build(view: MemoryView) -> Plan | None:
        old = roster_mod.read(view)
        new = change(old)
        if new == old:
            return None
        return Plan(op=op, subject=subject, raw={roster_mod.ROSTER_PATH: new.encode()})

    result = core.store.write(build, core.after_write)
    return result.commit_id if result is not None else None


# ---- identity ------------------------------------------------------------------------------


def _key_did(line: str | None) -> str | None:
    raw = mail.ed25519_bytes(line) if line else None
    return did_from_ed25519(raw) if raw is not None else None


def _own_line(core: Core) -> str | None:
    pub = mail.own_key_path(core.store.state_dir).with_suffix(".pub")
    return " ".join(pub.read_text().split()[:2]) if pub.is_file() else None


def signer_for(core: Core, self_id: str) -> tuple[Signer | None, str]:
    """The key that signs this memory's mail, and where it lives (``git``/``elfmem``/``none``).

    Always the key the id names, since a recipient takes mail from an id that names a key only
    when signed with it: git's own SSH signing key when its did:key is this memory's id, else
    elfmem's key in the git dir. An OpenPGP or X.509 key in git cannot be tied to the id, so it
    never signs mail. A clone without the key sends unsigned (and its peers refuse it).
    """
    user = mail.configured_signer(core.store.repo)
    if user is not None and user.format == "ssh" and _key_did(mail.ssh_public_key(user)) == self_id:
        return user, "git"
    own = mail.own_key_path(core.store.state_dir)
    if own.is_file() and _key_did(_own_line(core)) == self_id:
        return Signer("ssh", str(own), own=True), "elfmem"
    return None, "none"


def init(core: Core) -> PeerIdentity:
    """This memory's peer id, recorded in the roster once (a commit); later calls report it."""
    current = load(core).self_id
    commit_id = None
    if not current:
        user = mail.configured_signer(core.store.repo)
        derived = _key_did(mail.ssh_public_key(user)) if user is not None else None
        if derived is None:
            mail.ensure_own_key(core.store.state_dir)
            derived = _key_did(_own_line(core))
        assert derived is not None  # ssh-keygen made an ed25519 key
        current = new_id = derived
        commit_id = _write_roster(
            core,
            "peer-init",
            f"peer init: {new_id}",
            lambda r: r if r.self_id else Roster(new_id, r.peers),
        )
    signer, where = signer_for(core, current)
    return PeerIdentity(current, where, signer.format if signer else "unsigned", commit_id)


# ---- roster --------------------------------------------------------------------------------


def _check_name(name: str) -> str:
    clean = name.strip()
    if not clean or "/" in clean or "%" in clean or not is_valid_tag(f"peer/{clean}"):
        raise InvalidInput(
            f"Invalid peer name {name!r}.",
            "Name a peer with letters, digits, _ . - (no spaces or slashes), e.g. bob.",
        )
    return clean


def add(core: Core, name: str, peer_id: str, remote: str = "", trust: float = 0.5) -> PeerChange:
    name, peer_id = _check_name(name), check_id(peer_id)
    trust = roster_mod.check_trust(trust)
    peer = Peer(name, peer_id, remote.strip(), trust, now_iso())

    def change(roster: Roster) -> Roster:
        known = next((p for p in roster.peers if p.name == name), None)
        if known is not None and known.id != peer_id:
            raise ConflictError(
                f"A peer called {name!r} exists already, with id {known.id}.",
                f"Pick another name, or `elfmem peer remove {name}` first.",
            )
        if known is not None:  # the same peer again: a new remote or trust, first added kept
            return roster.with_peer(replace(peer, added=known.added))
        return roster.with_peer(peer)

    commit = _write_roster(core, "peer-add", f"peer add: {name}", change)
    return PeerChange("peer-add", name, commit, trust)


def remove(core: Core, name: str) -> PeerChange:
    peer = load(core).find(name)
    subject = f"peer remove: {peer.name}"
    commit = _write_roster(core, "peer-remove", subject, lambda r: r.without(peer.name))
    return PeerChange("peer-remove", peer.name, commit)


def set_trust(core: Core, name: str, value: float | None) -> PeerChange | PeerInfo:
    """With a value: set the prior trust (a commit). Without: the peer as ``peer list`` shows."""
    roster = load(core)
    peer = roster.find(name)
    if value is None:
        return info(core, peer)
    trust = roster_mod.check_trust(value)
    new = Peer(peer.name, peer.id, peer.remote, trust, peer.added)
    commit = _write_roster(
        core, "peer-trust", f"peer trust: {peer.name} {trust:.2f}", lambda r: r.with_peer(new)
    )
    return PeerChange("peer-trust", peer.name, commit, trust)


def _imported(core: Core, peer: Peer) -> list[str]:
    core.sync()
    rows = queries.list_blocks(core.db(), tag_pattern=f"peer/{peer.name}")
    return [r.id for r in rows if f"peer/{peer.name}" in r.tags]


def info(core: Core, peer: Peer) -> PeerInfo:
    ids = _imported(core, peer)
    fold = roster_mod.folded_trust(
        peer.trust, (core.ledger.lines(anchor_for_block(b)) for b in ids)
    )
    return PeerInfo(
        peer.name, peer.id, peer.remote, peer.trust, fold.trust, fold.outcomes, len(ids)
    )


def trust_of(core: Core, peer: Peer) -> float:
    return info(core, peer).trust


def listing(core: Core) -> PeerList:
    roster = load(core)
    return PeerList(roster.self_id, [info(core, p) for p in roster.peers])
