"""Peer mail: ``peer send`` and ``peer inbox`` over the refs ``store/mail.py`` writes.

``send`` records the message in this memory (one commit, tagged ``to/<peer>``) and puts it on
``refs/elfmem/mail/<recipient>/<sender>`` as a signed commit, pushed to the peer's remote; when
the remote is away the message waits on that ref and goes out with the next send. ``inbox``
fetches ``refs/elfmem/mail/<me>/*`` from every remote the roster names, checks each message's
signature against the key its sender's ``did:key`` names, and with ``do_import`` commits the new
ones from known peers, quarantined: tagged ``peer/<name>``, with ``from``, ``via`` (the mail
commit) and ``signature`` kept in the block's frontmatter (docs/peers.md). Mail from a peer whose
id names a key is taken only when signed with that key; mail from a peer whose id names none is
kept as unverified (``peer/unverified``, ``claimed-from``), never as written by that peer. The id
a message takes here is derived from its sender (``import_id``), so no other message can take
it first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from elfmem.block.model import Block, new_block_id, now_iso
from elfmem.block.parse import parse_bytes
from elfmem.block.render import render_file
from elfmem.block.secrets import block_fields, scan_fields
from elfmem.block.text import preview
from elfmem.errors import BlockFormatError, NotFound, RemoteError
from elfmem.identity.writes import add_active
from elfmem.index import queries
from elfmem.rhythms.capture import check_tags, check_text
from elfmem.rhythms.core import Core
from elfmem.sharing.did import ed25519_from_did, ref_name
from elfmem.sharing.intake import Incoming, birth, commit_incoming
from elfmem.sharing.peers import init, load, signer_for
from elfmem.sharing.results import InboxMessage, InboxResult, InboxStatus, SendResult
from elfmem.sharing.roster import Peer, Roster
from elfmem.store import mail, transport
from elfmem.store.mail import BAD, MAIL_PREFIX, VERIFIED

INBOX_PREFIX = "refs/elfmem/inbox"
"""Where fetched mail for this memory is mirrored, one folder per remote."""
MAIL_FORMAT = "elfmem-mail/1"


def _git_dir(core: Core) -> Path:
    return Path(core.store.repo.path)


def _remote(core: Core, peer: Peer) -> str:
    return transport.remote_or_default(_git_dir(core), peer.remote or None)


def send(core: Core, to: str, message: str, tags: Sequence[str] = ()) -> SendResult:
    """Record the message here (one commit), put it on the mail ref, push that ref."""
    peer = load(core).find(to)
    text = check_text(message, "", core.config.memory.max_content_bytes, False)
    clean = check_tags(tags, "message")
    remote = _remote(core, peer)
    me = init(core).id  # after every check: a refused send records nothing
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
    try:
        report = transport.push(_git_dir(core), remote, [f"{ref}:{ref}"])
    except RemoteError as exc:  # the message is recorded here already: say where it waits
        raise RemoteError(exc.message, queued) from exc
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


def import_id(sender_id: str, block_id: str, commit: str = "") -> str:
    """The id a message takes here: derived from its sender (and, unverified, from its mail
    commit), so a message from someone else, or a rewrite nobody signed, can never occupy the
    id the sender's signed message takes. The same on every clone of this memory."""
    seed = "\0".join(["elfmem-mail", sender_id, block_id, commit])
    return hashlib.sha256(seed.encode()).hexdigest()[:16]


def _check(
    roster: Roster, ref: str, envelope: dict[str, object], item: mail.Mail, block: Block
) -> tuple[str, str, str]:
    """(signature, state, reason): who may be believed to have written the message."""
    sender_id = str(envelope.get("from", ""))
    peer = roster.by_id(sender_id)
    raw = ed25519_from_did(sender_id)
    line = mail.ed25519_line(raw) if raw is not None else None
    signature = mail.verify(item, line, sender_id)
    if envelope.get("to") != roster.self_id or not ref.endswith("/" + ref_name(sender_id)):
        return signature, "refused", "addressed or filed wrongly"
    if peer is None:
        return signature, "refused", "sender not in the roster (elfmem peer add)"
    if signature == BAD:
        return signature, "refused", "bad signature"
    if line is not None and signature != VERIFIED:
        return signature, "refused", f"not signed with the key {peer.name}'s id names"
    if scan_fields(block_fields(block)):
        return signature, "refused", "carries what looks like a credential"
    if line is None:
        return signature, "new", f"unverified: {peer.name}'s id names no key to check"
    return signature, "new", ""


def _message(roster: Roster, ref: str, item: mail.Mail) -> tuple[InboxMessage, Block] | None:
    try:
        envelope = json.loads(item.files["envelope.json"])
        blocks = parse_bytes(item.files["message.md"], "message.md")
    except (KeyError, ValueError, BlockFormatError):
        return None
    if len(blocks) != 1 or not isinstance(envelope, dict):
        return None
    if envelope.get("format") != MAIL_FORMAT:
        return None
    block, sender_id = blocks[0], str(envelope.get("from", ""))
    peer = roster.by_id(sender_id)
    signature, state, reason = _check(roster, ref, envelope, item, block)
    verified = ed25519_from_did(sender_id) is not None and signature == VERIFIED
    msg = InboxMessage(
        import_id(sender_id, block.id, "" if verified else item.commit_id),
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


def _quarantined(msg: InboxMessage, block: Block) -> Block:
    """The block as this memory keeps it: its own id, the sender's ``peer/*`` tags dropped (a
    message never says who wrote it), and its provenance. Unverified mail is never attributed
    to the peer it names: tagged ``peer/unverified``, with ``claimed-from`` for ``from``."""
    unverified = bool(msg.reason)
    own = [t for t in block.tags if not t.startswith("peer/")]
    tags = tuple(dict.fromkeys((*own, "peer/unverified" if unverified else f"peer/{msg.sender}")))
    who = ("claimed-from" if unverified else "from", msg.sender_id)
    extra = (who, ("via", msg.commit), ("signature", msg.signature))
    return block.with_changes(id=msg.block_id, tags=tags, extra=extra)


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
    items = [Incoming(_quarantined(msg, block)) for msg, block in found if msg.state == "new"]
    if not items:
        return InboxResult(messages)
    senders = sorted(
        {m.sender if not m.reason else "unverified" for m in messages if m.state == "new"}
    )
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
