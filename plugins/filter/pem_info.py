# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from datetime import datetime, timezone

from ansible.errors import AnsibleFilterError
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

DOCUMENTATION = r"""
name: pem_info
short_description: What a PEM bundle holds (certificates, private keys, expiry), never the PEM itself
version_added: 0.2.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Parses a PEM text (for example a Red Hat entitlement certificate with its key) on the controller and returns
    counts and facts about it, so that a play can check a secret before it writes it anywhere.
  - The result never contains key material or the certificate body; it is safe to print.
  - Needs the Python C(cryptography) library (a dependency of ansible-core).
options:
  _input:
    description: The PEM text. Anything else (empty, not PEM) gives zero certificates and zero keys.
    type: raw
    required: true
  now:
    description:
      - Reference time as an ISO 8601 string (C(2026-01-01T00:00:00Z)); defaults to the current UTC time.
      - For tests.
    type: str
"""

EXAMPLES = r"""
- name: Check an entitlement certificate before using it
  ansible.builtin.assert:
    that:
      - __info.certificates > 0
      - __info.private_keys > 0
      - not __info.expired
  vars:
    __info: "{{ lookup('ansible.builtin.file', 'entitlement.pem') | gpuops.cluster.pem_info }}"
  no_log: true
"""

RETURN = r"""
_value:
  description: Facts about the PEM text.
  type: dict
  contains:
    certificates:
      description: Number of X.509 certificates that parse.
      type: int
    private_keys:
      description: Number of unencrypted private keys that parse.
      type: int
    invalid_blocks:
      description: Number of C(-----BEGIN ...-----) blocks that do not parse (damaged, encrypted or unknown).
      type: int
    errors:
      description: One line per block that does not parse (block type and the reason), without its content.
      type: list
      elements: str
    subject_cn:
      description: Common name of the certificate that expires first (empty when there is none).
      type: str
    not_after:
      description: Expiry of the certificate that expires first, ISO 8601 UTC (empty when there is none).
      type: str
    days_left:
      description: Whole days from now until RV(_value.not_after) (negative once expired; null without certificate).
      type: int
    expired:
      description: True when a certificate has expired (or is not yet valid).
      type: bool
    key_matches_certificate:
      description: True when a private key belongs to a certificate of the bundle (same public key).
      type: bool
"""

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
        raise AnsibleFilterError("pem_info: now must be an ISO 8601 time such as 2026-01-01T00:00:00Z")


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
        raise AnsibleFilterError(
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


class FilterModule(object):
    def filters(self):
        return {"pem_info": pem_info}
