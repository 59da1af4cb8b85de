# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Secrets of the tests (an entitlement PEM, a pull secret) and the forms in which they must never be shown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import datetime
import json
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID


def make_pem(days_valid=365, days_ago=1, cert=True, key=True, other_key=False):
    now = datetime.datetime.now(datetime.timezone.utc)
    k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpuops-test-entitlement")])
    start = now - datetime.timedelta(days=days_ago)
    c = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(k.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=days_valid))
        .sign(k, hashes.SHA256())
    )
    if other_key:
        k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    text = ""
    if cert:
        text += c.public_bytes(serialization.Encoding.PEM).decode()
    if key:
        text += k.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
    return text


def secret_forms(pem):
    """Strings that must never reach the output: body lines of the PEM and its base64 (as in the MachineConfigs)."""
    body = [line for line in pem.splitlines() if line and not line.startswith("-----")]
    b64 = base64.b64encode((pem.strip() + "\n").encode()).decode()
    return [body[1], body[-2], b64[100:160], b64[-120:-60]]


def pull_secret():
    """A pull secret of its own (the auth of one registry is unique to this run): (Secret data, forms never shown)."""
    auth = base64.b64encode(("gpuops-pull:" + os.urandom(12).hex()).encode()).decode()
    config = json.dumps({"auths": {"registry.redhat.io": {"auth": auth}, "quay.io": {"auth": auth}}})
    encoded = base64.b64encode(config.encode()).decode()
    return {".dockerconfigjson": encoded}, [auth, base64.b64decode(auth).decode(), encoded[20:80]]
