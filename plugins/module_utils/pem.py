# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""What a PEM bundle holds (certificates, private keys, expiry), never the PEM itself.

The logic of the ``gpuops.cluster.pem_info`` filter. Pure Python plus the
``cryptography`` library (a dependency of ansible-core); no controller imports,
so it is unit-tested on its own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from datetime import datetime, timezone

from ansible.module_utils.common.text.converters import to_bytes, to_text

try:
    from cryptography import x509
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.x509.oid import NameOID

    HAS_CRYPTOGRAPHY = True
    CRYPTOGRAPHY_ERROR = None
except ImportError as exc:  # pragma: no cover - cryptography is a dependency of ansible-core
    HAS_CRYPTOGRAPHY = False
    CRYPTOGRAPHY_ERROR = exc


class PemError(ValueError):
    """A usage error (bad reference time, cryptography missing); never carries PEM content."""


BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)
KEY_TYPES = ("PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY")
CERT_TYPES = ("CERTIFICATE", "TRUSTED CERTIFICATE")
# Blocks an entitlement bundle may carry that are neither (accepted, not counted).
IGNORED_TYPES = ("ENTITLEMENT DATA", "RSA SIGNATURE", "PUBLIC KEY", "X509 CRL")


def _utc(value):
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _not_after(cert):
    if hasattr(cert, "not_valid_after_utc"):
        return cert.not_valid_after_utc
    return _utc(cert.not_valid_after)  # cryptography < 42


def _not_before(cert):
    if hasattr(cert, "not_valid_before_utc"):
        return cert.not_valid_before_utc
    return _utc(cert.not_valid_before)


def _parse_now(now):
    if not now:
        return datetime.now(timezone.utc)
    text = str(now).strip().replace("Z", "+00:00")
    try:
        return _utc(datetime.fromisoformat(text))
    except ValueError:
        raise PemError("pem_info: now must be an ISO 8601 time such as 2026-01-01T00:00:00Z")


def _public_bytes(key):
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _common_name(cert):
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return to_text(names[0].value) if names else ""


def _load(kind, data, certs, keys, errors):
    try:
        if kind in CERT_TYPES:
            certs.append(x509.load_pem_x509_certificate(data))
        else:
            keys.append(serialization.load_pem_private_key(data, password=None))
    except TypeError:
        errors.append("%s: encrypted (a passphrase is needed); give the unencrypted key" % kind)
    except (ValueError, UnsupportedAlgorithm) as exc:
        errors.append("%s: does not parse (%s)" % (kind, type(exc).__name__))


def pem_info(text, now=None):
    """Counts and expiry of the certificates and keys in ``text``; never returns key material."""
    if not HAS_CRYPTOGRAPHY:
        raise PemError(
            "pem_info needs the Python library cryptography on the controller (pip install cryptography): %s"
            % CRYPTOGRAPHY_ERROR
        )
    moment = _parse_now(now)
    text = to_text(text or "", errors="surrogate_or_strict") if not isinstance(text, (dict, list)) else ""
    certs, keys, errors = [], [], []
    for match in BLOCK.finditer(text):
        kind = match.group(1).strip()
        if kind in IGNORED_TYPES:
            continue
        if kind not in CERT_TYPES + KEY_TYPES:
            errors.append("%s: unknown PEM block type" % kind)
            continue
        _load(kind, to_bytes(match.group(0)), certs, keys, errors)
    if "-----BEGIN" in text and len(re.findall(r"-----BEGIN ", text)) != len(re.findall(r"-----END ", text)):
        errors.append("unterminated PEM block (a BEGIN line without its END line)")
    result = {
        "certificates": len(certs),
        "private_keys": len(keys),
        "invalid_blocks": len(errors),
        "errors": errors,
        "subject_cn": "",
        "not_after": "",
        "days_left": None,
        "expired": False,
        "key_matches_certificate": False,
    }
    if certs:
        first = min(certs, key=_not_after)
        not_after = _not_after(first)
        result["subject_cn"] = _common_name(first)
        result["not_after"] = not_after.strftime("%Y-%m-%dT%H:%M:%SZ")
        result["days_left"] = int((not_after - moment).total_seconds() // 86400)
        result["expired"] = any(_not_after(c) <= moment or _not_before(c) > moment for c in certs)
        cert_keys = set(_public_bytes(c.public_key()) for c in certs)
        result["key_matches_certificate"] = any(_public_bytes(k.public_key()) in cert_keys for k in keys)
    return result
