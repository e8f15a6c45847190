"""Peer mail: ``peer send`` and ``peer inbox`` over the refs ``store/mail.py`` writes.

``send`` records the message in this memory (one commit, tagged ``to/<peer>``) and puts it on
``refs/elfmem/mail/<recipient>/<sender>`` as a signed commit, pushed to the peer's remote; when
the remote is away the message waits on that ref and goes out with the next send. ``inbox``
fetches ``refs/elfmem/mail/<me>/*`` from every remote the roster names, checks each message's
signature against the key its sender's ``did:key`` names, and with ``do_import`` commits the new
ones from known peers, quarantined: tagged ``peer/<name>``, with ``from``, ``via`` (the mail
commit) and ``signature`` kept in the block's frontmatter (docs/peers.md).
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
from elfmem.store.mail import BAD, MAIL_PREFIX

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
