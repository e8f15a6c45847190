"""Peers over git: an identity, a roster with trust, and messages on mail refs.

``peer send`` records the message in this memory (one commit, tagged ``to/<peer>``) and puts it
on ``refs/elfmem/mail/<recipient>/<sender>`` as a signed commit, pushed to the peer's remote.
``peer inbox`` fetches ``refs/elfmem/mail/<me>/*`` from every remote the roster names, checks
each message's signature against the key its sender's ``did:key`` names, and with ``--import``
commits the new ones from known peers, quarantined: tagged ``peer/<name>``, with ``from``,
``via`` (the mail commit) and ``signature`` kept in the block's frontmatter. The SELF frame
renders ``peer/*`` blocks in their own attributed section, never as this agent's principles.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from elfmem.block.model import Block, is_valid_tag, new_block_id, now_iso
from elfmem.block.parse import parse_bytes
from elfmem.block.render import render_file
from elfmem.block.secrets import block_fields, scan_fields
from elfmem.block.text import preview
from elfmem.errors import BlockFormatError, InvalidInput, NotFound, RemoteError
from elfmem.identity.writes import add_active
from elfmem.index import queries
from elfmem.rhythms.capture import check_tags, check_text
from elfmem.rhythms.core import Core
from elfmem.sharing import roster as roster_mod
from elfmem.sharing.did import check_id, did_from_ed25519, ed25519_from_did, ref_name
from elfmem.sharing.intake import Incoming, birth, commit_incoming
from elfmem.sharing.results import (
    InboxMessage,
    InboxResult,
    InboxStatus,
    PeerChange,
    PeerIdentity,
    PeerInfo,
    PeerList,
    SendResult,
)
from elfmem.sharing.roster import Peer, Roster
from elfmem.store import MemoryView, Plan, anchor_for_block, mail, transport
from elfmem.store.mail import BAD, MAIL_PREFIX, Signer

INBOX_PREFIX = "refs/elfmem/inbox"
"""Where fetched mail for this memory is mirrored, one folder per remote."""
MAIL_FORMAT = "elfmem-mail/1"


def load(core: Core) -> Roster:
    return roster_mod.read(core.store.view())


def _write_roster(core: Core, op: str, subject: str, change: object) -> str | None:
    """One commit rewriting the roster with ``change(roster) -> roster``; None if unchanged."""

    def build(view: MemoryView) -> Plan | None:
        old = roster_mod.read(view)
        new = change(old)  # type: ignore[operator]
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

    git's own signing key wins: SSH when its did:key is this memory's id, OpenPGP/X.509 always
    (git signs with them; the recipient's keyring checks them). Otherwise elfmem's key in the
    git dir, when it is the key the id names. A clone without either sends unsigned.
    """
    user = mail.configured_signer(core.store.repo)
    if user is not None and (
        user.format != "ssh" or _key_did(mail.ssh_public_key(user)) == self_id
    ):
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
    commit = _write_roster(core, "peer-add", f"peer add: {name}", lambda r: r.with_peer(peer))
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


# ---- mail ----------------------------------------------------------------------------------


def _git_dir(core: Core) -> Path:
    return Path(core.store.repo.path)


def _remote(core: Core, peer: Peer) -> str:
    return transport.remote_or_default(_git_dir(core), peer.remote or None)


def send(core: Core, to: str, message: str, tags: Sequence[str] = ()) -> SendResult:
    """Record the message here (one commit), put it on the mail ref, push that ref."""
    me = init(core).id
    peer = load(core).find(to)
    remote = _remote(core, peer)
    text = check_text(message, "", core.config.memory.max_content_bytes, False)
    clean = check_tags(tags, "message")
    wire = Block(id=new_block_id(), content=text, cls="message", tags=clean, created=now_iso())
    own = wire.with_changes(tags=(*clean, f"to/{peer.name}"), extra=(("to", peer.id),))
    kept = add_active(core, [own], "peer-send", f"peer send to {peer.name}: {preview(text)}")
    envelope = {"format": MAIL_FORMAT, "from": me, "to": peer.id, "block": wire.id}
    envelope["sent"] = wire.created
    ref = f"{MAIL_PREFIX}/{ref_name(peer.id)}/{ref_name(me)}"
    signer, _ = signer_for(core, me)
    repo = core.store.repo
    files = {
        "message.md": render_file([wire]).encode(),
        "envelope.json": (json.dumps(envelope, sort_keys=True) + "\n").encode(),
    }
    author = (core.agent, f"{ref_name(me)}@elfmem.invalid")
    try:
        _adopt_remote(core, remote, ref)
        offline = None
    except RemoteError as exc:  # queue it here all the same; the next send carries it
        offline = exc
    commit = mail.write_mail(repo, ref, files, f"elfmem mail to {peer.name}\n", author, signer)
    queued = (
        f"The message is kept in this memory and queued on {ref}; it goes out with the next "
        f"`elfmem peer send` to {peer.name}, or now with `git push {remote} {ref}`."
    )
    if offline is not None:
        raise RemoteError(offline.message, queued)
    report = transport.push(_git_dir(core), remote, [f"{ref}:{ref}"])
    if report.rejected:
        raise RemoteError(f"{remote} refused {ref}: {report.rejected[0].summary}.", queued)
    signed = signer.format if signer else "unsigned"
    return SendResult(wire.id, peer.name, ref, commit, kept.commit_id, signed, remote)


def _adopt_remote(core: Core, remote: str, ref: str) -> None:
    """Start from the remote's chain on ``ref`` (another clone of this memory may have sent)."""
    mirror = f"refs/elfmem/sent/{_remote_key(remote)}/{ref.removeprefix(MAIL_PREFIX + '/')}"
    transport.fetch(_git_dir(core), remote, [f"+{ref}:{mirror}"])
    mail.fast_forward(core.store.repo, ref, mirror)


def _remote_key(remote: str) -> str:
    return hashlib.sha1(remote.encode()).hexdigest()[:12]


def _remotes(core: Core, roster: Roster) -> list[str]:
    named = {p.remote for p in roster.peers if p.remote}
    try:
        named.add(transport.remote_or_default(_git_dir(core), None))
    except (RemoteError, NotFound):
        if not named:
            raise
    return sorted(named)


def _fetch_mail(core: Core, roster: Roster) -> list[str]:
    mine = ref_name(roster.self_id)
    prefixes = []
    for remote in _remotes(core, roster):
        local = f"{INBOX_PREFIX}/{_remote_key(remote)}/{mine}"
        transport.fetch(_git_dir(core), remote, [f"+{MAIL_PREFIX}/{mine}/*:{local}/*"])
        prefixes.append(local)
    return prefixes


def _collect(
    core: Core, roster: Roster, prefixes: Sequence[str]
) -> list[tuple[InboxMessage, Block]]:
    """Every readable message under ``prefixes``, once per block id, marked ``imported`` when
    this memory holds its block already."""
    repo = core.store.repo
    found: dict[str, tuple[InboxMessage, Block]] = {}
    for prefix in prefixes:
        for ref in mail.mail_refs(repo, prefix):
            for item in mail.read_chain(repo, ref):
                one = _message(roster, ref, item)
                if one is not None:
                    found.setdefault(one[0].block_id, one)
    core.sync()
    here = set(queries.get_blocks(core.db(), list(found)))
    return [
        (replace(msg, state="imported") if msg.block_id in here else msg, block)
        for msg, block in found.values()
    ]


def _message(roster: Roster, ref: str, item: mail.Mail) -> tuple[InboxMessage, Block] | None:
    try:
        envelope = json.loads(item.files["envelope.json"])
        blocks = parse_bytes(item.files["message.md"], "message.md")
    except (KeyError, ValueError, BlockFormatError):
        return None
    if len(blocks) != 1 or envelope.get("format") != MAIL_FORMAT:
        return None
    block, sender_id = blocks[0], str(envelope.get("from", ""))
    peer = roster.by_id(sender_id)
    raw = ed25519_from_did(sender_id)
    line = mail.ed25519_line(raw) if raw is not None else None
    signature = mail.verify(item, line, sender_id)
    state, reason = "new", ""
    if envelope.get("to") != roster.self_id or not ref.endswith("/" + ref_name(sender_id)):
        state, reason = "refused", "addressed or filed wrongly"
    elif peer is None:
        state, reason = "refused", "sender not in the roster (elfmem peer add)"
    elif signature == BAD:
        state, reason = "refused", "bad signature"
    elif scan_fields(block_fields(block)):
        state, reason = "refused", "carries what looks like a credential"
    msg = InboxMessage(
        block.id,
        sender_id,
        peer.name if peer else "",
        block.content,
        list(block.tags),
        item.commit_id,
        signature,
        state,
        reason,
    )
    return msg, block


def inbox(core: Core, do_import: bool = False) -> InboxResult:
    """Fetch, list and (``do_import``) import the messages addressed to this memory."""
    roster = load(core)
    if not roster.self_id:
        raise NotFound(
            "This memory has no peer id yet, so no message can be addressed to it.",
            "Run `elfmem peer init` and give the id it prints to your peers.",
        )
    found = _collect(core, roster, _fetch_mail(core, roster))
    messages = [msg for msg, _ in found]
    if not do_import:
        return InboxResult(messages)
    items = []
    for msg, block in found:
        if msg.state != "new":
            continue
        extra = (("from", msg.sender_id), ("via", msg.commit), ("signature", msg.signature))
        tags = tuple(dict.fromkeys((*block.tags, f"peer/{msg.sender}")))
        items.append(Incoming(block.with_changes(tags=tags, extra=extra)))
    if not items:
        return InboxResult(messages)
    senders = sorted({m.sender for m in messages if m.state == "new"})
    commit, added = commit_incoming(
        core,
        items,
        "peer-import",
        f"peer inbox: {len(items)} message(s) from {', '.join(senders)}",
        [("Elfmem-Peer", m.sender_id) for m in messages if m.state == "new"],
        lambda b, c: [birth(core, b, c)],
    )
    done = set(added)
    final = [replace(m, state="imported") if m.block_id in done else m for m in messages]
    return InboxResult(final, sorted(done), commit)


def status(core: Core) -> InboxStatus:
    messages = inbox(core).messages
    by_peer: dict[str, int] = {}
    for m in messages:
        if m.state == "new":
            by_peer[m.sender or m.sender_id] = by_peer.get(m.sender or m.sender_id, 0) + 1
    count = {s: sum(m.state == s for m in messages) for s in ("new", "imported", "refused")}
    return InboxStatus(count["new"], count["imported"], count["refused"], by_peer)
