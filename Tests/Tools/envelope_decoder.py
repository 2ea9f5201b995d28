#!/usr/bin/env python3
"""An independent reader of CipherSync key envelopes, written from Keys/FORMAT.md only.

Reads the envelope path from argv[1] and the slot id from argv[2] (default `passphrase`), the
slot's secret from standard input (one line: the passphrase or recovery code; for the `tpm` slot
the 32-byte secret the TPM unseals, as hex, e.g. from `tpm2_unseal`), and prints the data key as
hex (and the pending key, if a rotation is in progress, on a second line).

`envelope_decoder.py attachment FILE` reads an encrypted attachment file (FORMAT.md §11) with
the attachment key given as hex on standard input, checks every segment's tag and prints the
content's length and SHA-256 (hex) on one line. Uses the `cryptography` package; no CipherSync
code.
"""
import base64, hashlib, hmac, json, sys, unicodedata

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from cryptography.hazmat.primitives.keywrap import aes_key_unwrap_with_padding


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def hkdf(ikm, salt, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt or None, info=info).derive(ikm)


def attachment(path, key):
    data = open(path, "rb").read()
    header = data[:16]
    assert header[:4] == b"CSAT" and header[4] == 1 and header[7] == 0 and header[15] == 0, "header"
    segment, granularity = 1 << header[5], 1 << header[6]
    body = data[16:]
    sealed = [body[i:i + segment + 16] for i in range(0, len(body), segment + 16)]
    padded = b""
    for index, chunk in enumerate(sealed):
        final = index == len(sealed) - 1
        nonce = header[8:15] + index.to_bytes(4, "big") + (b"\x01" if final else b"\x00")
        padded += AESGCM(key).decrypt(nonce, chunk, header)
    assert len(padded) % granularity == 0, "padding"
    length = int.from_bytes(padded[-8:], "big")
    assert (length + 8 + granularity - 1) // granularity * granularity == len(padded), "length"
    assert padded[length:-8] == bytes(len(padded) - 8 - length), "padding"
    content = padded[:length]
    print(len(content), hashlib.sha256(content).hexdigest())


def main():
    if sys.argv[1] == "attachment":
        return attachment(sys.argv[2], bytes.fromhex(sys.stdin.readline().strip()))
    envelope = json.load(open(sys.argv[1]))
    assert envelope["format"] == "ciphersync-key-envelope" and envelope["version"] == 1
    body = {k: v for k, v in envelope.items() if k not in ("digest", "mac")}
    assert hashlib.sha256(canonical(body)).hexdigest() == envelope["digest"], "digest"
    slot_id = sys.argv[2] if len(sys.argv) > 2 else "passphrase"
    passphrase = unicodedata.normalize("NFC", sys.stdin.readline().rstrip("\n")).encode()
    slot = next(s for s in envelope["slots"] if s["id"] == slot_id)
    kdf = slot["kdf"]
    salt = base64.b64decode(kdf["salt"])
    if kdf["algorithm"] == "tpm2-sealed":
        kek = bytes.fromhex(passphrase.decode())
        assert len(kek) == 32 and len(salt) >= 16 and "tpm" in slot, "tpm slot"
    elif kdf["algorithm"] == "scrypt":
        kek = Scrypt(salt=salt, length=32, n=kdf["n"], r=kdf["r"], p=kdf["p"]).derive(passphrase)
    elif kdf["algorithm"] == "pbkdf2-sha512":
        kek = PBKDF2HMAC(algorithm=hashes.SHA512(), length=32, salt=salt, iterations=kdf["iterations"]).derive(passphrase)
    else:
        raise SystemExit("unknown kdf")
    header_fields = {"id": slot["id"], "kdf": kdf, "wrap": slot["wrap"]}
    if "tpm" in slot:
        header_fields["tpm"] = slot["tpm"]
    header = canonical(header_fields)
    wrapping_key = hkdf(kek, salt, b"ciphersync/v1/slot-wrap\x00" + header)
    envelope_key = aes_key_unwrap_with_padding(wrapping_key, base64.b64decode(slot["wrappedKey"]))
    mac_key = hkdf(envelope_key, b"", b"ciphersync/v1/envelope-mac")
    expected = hmac.new(mac_key, canonical(body), hashlib.sha256).digest()
    assert hmac.compare_digest(expected, base64.b64decode(envelope["mac"])), "mac"
    data_wrapping_key = hkdf(envelope_key, b"", b"ciphersync/v1/data-key-wrap")
    print(aes_key_unwrap_with_padding(data_wrapping_key, base64.b64decode(envelope["wrappedDataKey"])).hex())
    if envelope.get("pendingWrappedDataKey"):
        print(aes_key_unwrap_with_padding(data_wrapping_key, base64.b64decode(envelope["pendingWrappedDataKey"])).hex())


if __name__ == "__main__":
    main()
