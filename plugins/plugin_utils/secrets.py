# Copyright: contributors to hotplay.stacks
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets: values that no task output shows and the store keeps only encrypted.

A run's secret values are the values of hidden parameters (except a template's own
default, which the stored template holds anyway) and whatever resource types add
(``Resource.secret_values``, ``runtime.secrets.add``).  They are masked (``******``)
in everything a task shows, and every stored value that contains one is stored as
an **envelope**: authenticated encryption (AES-256-GCM) under a data key derived
from the user's store key (``HOTPLAY_STORE_KEY`` or the ``store_key`` option) with
scrypt and a salt.

An envelope is one line of text, self-contained but for the store key::

    $hotplay$1$<salt>$<nonce | ciphertext | tag>      (base64url, no padding)

``1`` is the format version: it fixes the cipher and the KDF's cost (``FORMATS``).
The salt travels in every envelope, so a row copied to another store opens there
with the same key.  The associated data is the id of the stack the value belongs
to: an envelope moved to another stack's row does not open.

This module holds the cryptography and the set of secret values; the store wrapper
(``store/sealed.py``) decides where envelopes go.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
import os
import shlex
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import HotplayError

ENV_VAR = "HOTPLAY_STORE_KEY"
MASK = "******"
PREFIX = "$hotplay$"
_KEY_CHECK_TEXT = b"hotplay.stacks store key check"
_TAG_BYTES = 16  # AES-GCM's authentication tag


class StoreKeyError(HotplayError):
    """The store key is missing where a secret must be stored, or it is wrong."""


def key_missing(what: str) -> StoreKeyError:
    """The one message for a secret that cannot be stored without a key."""
    return StoreKeyError(
        f"{what}; the store keeps secrets only encrypted: give a store key with the "
        f"{ENV_VAR} environment variable or the store_key option (from Ansible Vault)"
    )


def key_wrong(stack_name: str) -> StoreKeyError:
    return StoreKeyError(f"the store key does not open stack {stack_name}'s secrets")


# -- the key -------------------------------------------------------------------------


class StoreKey:
    """The user's passphrase; never shown (``repr`` masks it)."""

    __slots__ = ("_passphrase",)

    def __init__(self, passphrase: str) -> None:
        if not isinstance(passphrase, str) or not passphrase:
            raise StoreKeyError("the store key is empty: give a passphrase")
        self._passphrase = passphrase

    def __repr__(self) -> str:
        return f"StoreKey({MASK})"

    @property
    def passphrase(self) -> str:
        return self._passphrase

    @classmethod
    def from_sources(cls, option: str | None,
                     environ: Mapping[str, str] | None = None) -> StoreKey | None:
        """The task's ``store_key``, else ``$HOTPLAY_STORE_KEY``, else None."""
        environ = os.environ if environ is None else environ
        passphrase = option or environ.get(ENV_VAR) or ""
        return cls(passphrase) if passphrase else None


# -- envelopes ------------------------------------------------------------------------


@dataclass(frozen=True)
class EnvelopeFormat:
    """What a format version fixes: AES-256-GCM, and scrypt's cost parameters."""

    version: int
    scrypt_n: int
    scrypt_r: int
    scrypt_p: int
    salt_bytes: int = 16
    nonce_bytes: int = 12


# Version rules as data: a new version is a new row; old envelopes still open.
# Version 1: scrypt N=2^15, r=8, p=3 (OWASP's scrypt setting for 32 MiB of memory).
FORMATS: dict[int, EnvelopeFormat] = {1: EnvelopeFormat(1, 2**15, 8, 3)}
CURRENT = FORMATS[1]


@dataclass(frozen=True)
class DerivedKeys:
    """Subkeys of one (store key, salt): one encrypts, one fingerprints."""

    seal: bytes
    blind: bytes


def new_salt(fmt: EnvelopeFormat = CURRENT) -> str:
    return _b64(os.urandom(fmt.salt_bytes))


@functools.lru_cache(maxsize=16)
def derive_keys(passphrase: str, salt: str, version: int = CURRENT.version) -> DerivedKeys:
    """scrypt (slow on purpose) once per key and salt, then HKDF for the subkeys."""
    # Imported here: a run without secrets never needs cryptography.
    from cryptography.hazmat.primitives import hashes  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt  # pylint: disable=import-outside-toplevel

    fmt = FORMATS[version]
    master = Scrypt(salt=_unb64(salt), length=32, n=fmt.scrypt_n, r=fmt.scrypt_r,
                    p=fmt.scrypt_p).derive(passphrase.encode())

    def subkey(purpose: bytes) -> bytes:
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(master)

    return DerivedKeys(seal=subkey(b"hotplay.stacks seal v1"), blind=subkey(b"hotplay.stacks blind v1"))


def seal(key: StoreKey, salt: str, plaintext: bytes, context: str) -> str:
    """An envelope of ``plaintext``, bound to ``context`` (a stack id)."""
    keys = derive_keys(key.passphrase, salt, CURRENT.version)
    nonce = os.urandom(CURRENT.nonce_bytes)
    sealed = _cipher(keys.seal).encrypt(nonce, plaintext, _associated(CURRENT.version, context))
    return f"{PREFIX}{CURRENT.version}${salt}${_b64(nonce + sealed)}"


def open_envelope(key: StoreKey, envelope: str, context: str) -> bytes:
    """The plaintext of an envelope; ``WrongKey`` when the key (or the context) does
    not open it, ``StoreKeyError`` when it is not an envelope this version knows."""
    from cryptography.exceptions import InvalidTag  # pylint: disable=import-outside-toplevel

    fmt, salt, body = parse_envelope(envelope)
    keys = derive_keys(key.passphrase, salt, fmt.version)
    nonce, sealed = body[:fmt.nonce_bytes], body[fmt.nonce_bytes:]
    try:
        opened: bytes = _cipher(keys.seal).decrypt(nonce, sealed, _associated(fmt.version, context))
        return opened
    except InvalidTag:
        raise WrongKey() from None


@functools.lru_cache(maxsize=16)
def _cipher(key: bytes) -> Any:
    """AES-GCM with ``key`` (safe to share between threads: no state per call)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # pylint: disable=import-outside-toplevel

    return AESGCM(key)


class WrongKey(Exception):
    """The authentication tag did not verify: another key (or a moved envelope)."""


def parse_envelope(envelope: str) -> tuple[EnvelopeFormat, str, bytes]:
    """(format, salt, nonce + ciphertext + tag) of an envelope."""
    parts = envelope[len(PREFIX):].split("$") if is_envelope(envelope) else []
    fmt = FORMATS.get(int(parts[0])) if len(parts) == 3 and parts[0].isdigit() else None
    if fmt is None:
        raise StoreKeyError(
            "the store holds an encrypted value this version of hotplay.stacks cannot "
            f"read (format {parts[0] if parts else '?'}): upgrade the collection")
    try:
        body = _unb64(parts[2])
    except (binascii.Error, ValueError):
        body = b""
    if len(body) < fmt.nonce_bytes + _TAG_BYTES:
        raise StoreKeyError("the store holds a damaged encrypted value")
    return fmt, parts[1], body


def envelope_salt(envelope: str) -> str:
    return parse_envelope(envelope)[1]


def is_envelope(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def make_key_check(key: StoreKey, salt: str, context: str) -> str:
    """What the store keeps to tell a wrong key at once: a known text, sealed."""
    return seal(key, salt, _KEY_CHECK_TEXT, f"{context}:key-check")


def key_opens(key: StoreKey, check: str, context: str) -> bool:
    try:
        return open_envelope(key, check, f"{context}:key-check") == _KEY_CHECK_TEXT
    except WrongKey:
        return False


def keyed_digest(key: StoreKey, salt: str, parts: Iterable[bytes]) -> str:
    """HMAC-SHA256 of ``parts``: a digest of secret-holding data that cannot be
    searched for the secret without the key (a plain hash can, for weak secrets)."""
    mac = hmac.new(derive_keys(key.passphrase, salt).blind, digestmod=hashlib.sha256)
    for part in parts:
        mac.update(part)
    return mac.hexdigest()


def _associated(version: int, context: str) -> bytes:
    return f"hotplay.stacks:{version}:{context}".encode()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)


# -- the set of secret values ------------------------------------------------------------


def secret_atoms(value: Any) -> set[str]:
    """The strings a value is made of, as the set keeps them: strings and numbers
    (as text) from anywhere inside it; not booleans, None or empty strings."""
    found: set[str] = set()
    if isinstance(value, bool) or value is None:
        return found
    if isinstance(value, str):
        if value:
            found.add(value)
    elif isinstance(value, (int, float)):
        found.add(str(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            found |= secret_atoms(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            found |= secret_atoms(item)
    return found


class SecretValues:
    """The secret values a run knows; safe to share between worker threads.

    ``listener`` is told of every value new to the set (the store persists them)."""

    def __init__(self) -> None:
        self._atoms: frozenset[str] = frozenset()
        self._forms: tuple[tuple[str, str], ...] = ()  # (form to look for, atom), longest first
        self._lock = threading.Lock()
        self.listener: Callable[[frozenset[str]], None] | None = None
        # Values masked in what is shown, but not secrets to keep: a hidden
        # parameter's template default (the stored template holds it in plain text).
        self.shown_only: SecretValues | None = None

    def __bool__(self) -> bool:
        return bool(self._atoms)

    def __len__(self) -> int:
        return len(self._atoms)

    @property
    def atoms(self) -> frozenset[str]:
        return self._atoms

    def add(self, value: Any) -> frozenset[str]:
        """Keep ``value`` (and every string inside it) secret; the atoms that are new."""
        with self._lock:
            new = frozenset(secret_atoms(value) - self._atoms)
            if not new:
                return new
            self._atoms = self._atoms | new
            self._forms = tuple(sorted(
                {(form, atom) for atom in self._atoms for form in _forms(atom)},
                key=lambda pair: (-len(pair[0]), pair[0])))
            listener = self.listener
        if listener is not None:
            listener(new)
        return new

    # -- looking for secrets -------------------------------------------------------------
    def in_text(self, text: str) -> bool:
        """Whether ``text`` holds a secret, also JSON-escaped (texts of JSON documents)."""
        forms = self._forms
        return any(form in text for form, _atom in forms)

    def is_secret_scalar(self, value: Any) -> bool:
        """A string holding a secret, or a number equal to one."""
        if isinstance(value, str):
            return self.in_text(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value) in self._atoms
        return False

    def found_in(self, value: Any) -> bool:
        """Whether a secret is anywhere in ``value`` (keys of mappings included)."""
        if not self._atoms:
            return False
        if isinstance(value, str):  # the common case first
            return self.in_text(value)
        if isinstance(value, Mapping):
            return any(self.found_in(k) or self.found_in(v) for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return any(self.found_in(item) for item in value)
        return self.is_secret_scalar(value)

    # -- masking ------------------------------------------------------------------------
    def mask(self, value: Any, field_names: frozenset[str] = frozenset()) -> Any:
        """``value`` with every secret replaced by ``******`` (what Ansible does with
        no_log values), in strings, numbers and mapping keys at any depth, except
        keys that are ``field_names`` (a result's own: a hidden value "a" must not
        turn ``stack_status`` into ``st******ck_status``); the ``shown_only``
        values too."""
        masked = self._mask_own(value, field_names)
        return self.shown_only.mask(masked, field_names) if self.shown_only is not None else masked

    def _mask_own(self, value: Any, field_names: frozenset[str] = frozenset()) -> Any:
        if not self._atoms:
            return value
        if isinstance(value, Mapping):
            return {(k if k in field_names else self._mask_own(k)): self._mask_own(v, field_names)
                    for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._mask_own(item, field_names) for item in value]
        if isinstance(value, str):
            return self._mask_own_text(value)
        if self.is_secret_scalar(value):
            return MASK
        return value

    def mask_text(self, text: str) -> str:
        masked = self._mask_own_text(text)
        return self.shown_only.mask_text(masked) if self.shown_only is not None else masked

    def _mask_own_text(self, text: str) -> str:
        for form, _atom in self._forms:
            if form in text:
                text = text.replace(form, MASK)
        return text


def _forms(atom: str) -> set[str]:
    """The ways a secret can appear in text: as it is, as Python's repr and ascii
    write it inside quotes (error messages quote values so), shell-quoted, and each
    of these JSON-escaped (inside JSON documents and results)."""
    written = {atom, repr(atom)[1:-1], ascii(atom)[1:-1], shlex.quote(atom)}
    return {form for text in written
            for form in (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1])}
