"""Peer ids as ``did:key`` DIDs: the public half of an ed25519 key, written as a W3C did:key.

The id is the key itself (multicodec ``ed25519-pub`` 0xed01, base58btc, ``z`` prefix), so a peer's
id is all another memory needs to check that peer's signed commits: no key exchange, no server.
"""

from __future__ import annotations

from elfmem.errors import InvalidInput

_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_ED25519 = b"\xed\x01"
PREFIX = "did:key:z"


def _b58encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    out = ""
    while number:
        number, rest = divmod(number, 58)
        out = _ALPHABET[rest] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def _b58decode(text: str) -> bytes:
    number = 0
    for ch in text:
        at = _ALPHABET.find(ch)
        if at < 0:
            raise ValueError(ch)
        number = number * 58 + at
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return b"\0" * (len(text) - len(text.lstrip("1"))) + body


def did_from_ed25519(raw: bytes) -> str:
    """``did:key:z6Mk…`` for 32 raw ed25519 public key bytes."""
    return PREFIX + _b58encode(_ED25519 + raw)


def ed25519_from_did(did: str) -> bytes | None:
    """The 32 key bytes a ``did:key`` names, or None when it names no ed25519 key."""
    if not did.startswith(PREFIX):
        return None
    try:
        data = _b58decode(did[len(PREFIX) :])
    except ValueError:
        return None
    if len(data) != 34 or not data.startswith(_ED25519):
        return None
    return data[2:]


def check_id(peer_id: str) -> str:
    """A peer id as given, or a clear refusal: a ``did:key`` of an ed25519 key, or any other
    ``did:`` (kept, but its signatures cannot be checked here)."""
    clean = peer_id.strip()
    if clean.startswith(PREFIX) and ed25519_from_did(clean) is None:
        raise InvalidInput(
            f"{peer_id!r} is not a did:key of an ed25519 key.",
            "Copy the id exactly as the peer's `elfmem peer init` printed it (did:key:z6Mk…).",
        )
    if not clean.startswith("did:") or any(ch.isspace() for ch in clean) or len(clean) > 200:
        raise InvalidInput(
            f"{peer_id!r} is not a peer id.",
            "Ask the peer for the id `elfmem peer init` printed (did:key:z6Mk…).",
        )
    return clean


def ref_name(peer_id: str) -> str:
    """The id as one ref path component: ``:`` is allowed in refs, but not everywhere users
    type them, so it becomes ``-``."""
    return peer_id.replace(":", "-")
