# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""pem_info: certificates and keys generated here (never a real secret)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import datetime
import os
import subprocess
import sys

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from ansible_collections.gpuops.cluster.plugins.module_utils.pem import PemError, pem_info

BUILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), *([os.pardir] * 4), ".build")
NOW = datetime.datetime(2026, 6, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
NOW_TEXT = "2026-06-01T12:00:00Z"


def make_key(kind="rsa"):
    if kind == "ec":
        return ec.generate_private_key(ec.SECP256R1())
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def make_cert(key, cn="4f1e2a3b-entitlement", not_before=None, days=365):
    not_before = not_before or NOW - datetime.timedelta(days=1)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_before + datetime.timedelta(days=days))
        .sign(key, hashes.SHA256())
    )


def cert_pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM).decode("ascii")


def key_pem(key, fmt=serialization.PrivateFormat.PKCS8, password=None):
    algo = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    return key.private_bytes(serialization.Encoding.PEM, fmt, algo).decode("ascii")


@pytest.fixture(scope="module")
def key():
    return make_key()


def bundle(key, **cert_kwargs):
    return cert_pem(make_cert(key, **cert_kwargs)) + key_pem(key)


def test_valid_bundle(key):
    info = pem_info(bundle(key), now=NOW_TEXT)
    assert info["certificates"] == 1 and info["private_keys"] == 1 and info["invalid_blocks"] == 0
    assert info["subject_cn"] == "4f1e2a3b-entitlement"
    assert not info["expired"] and info["key_matches_certificate"]
    assert info["days_left"] == 364
    assert info["not_after"] == "2027-05-31T12:00:00Z"


def test_result_never_carries_the_pem(key):
    text = bundle(key)
    body = "".join(line for line in text.splitlines() if not line.startswith("-----"))
    dumped = repr(pem_info(text, now=NOW_TEXT))
    assert body[:40] not in dumped and base64.b64encode(text.encode()).decode()[:40] not in dumped
    assert "BEGIN" not in dumped


def test_expiring_in_ten_days(key):
    info = pem_info(bundle(key, not_before=NOW - datetime.timedelta(days=355), days=365), now=NOW_TEXT)
    assert not info["expired"] and info["days_left"] == 10


def test_expired(key):
    info = pem_info(bundle(key, not_before=NOW - datetime.timedelta(days=400), days=365), now=NOW_TEXT)
    assert info["expired"] and info["days_left"] == -35


def test_not_yet_valid_counts_as_expired(key):
    assert pem_info(bundle(key, not_before=NOW + datetime.timedelta(days=2)), now=NOW_TEXT)["expired"]


def test_the_first_to_expire_is_reported(key):
    text = cert_pem(make_cert(key, cn="long", days=900)) + cert_pem(make_cert(key, cn="short", days=40))
    info = pem_info(text + key_pem(key), now=NOW_TEXT)
    assert info["certificates"] == 2 and info["subject_cn"] == "short" and info["days_left"] == 39


def test_key_only(key):
    info = pem_info(key_pem(key), now=NOW_TEXT)
    assert info["certificates"] == 0 and info["private_keys"] == 1
    assert info["days_left"] is None and info["not_after"] == "" and not info["key_matches_certificate"]


def test_cert_only(key):
    info = pem_info(cert_pem(make_cert(key)), now=NOW_TEXT)
    assert info["certificates"] == 1 and info["private_keys"] == 0 and not info["key_matches_certificate"]


def test_traditional_and_ec_keys():
    ec_key = make_key("ec")
    text = cert_pem(make_cert(ec_key)) + key_pem(ec_key, serialization.PrivateFormat.TraditionalOpenSSL)
    info = pem_info(text, now=NOW_TEXT)
    assert info["private_keys"] == 1 and info["key_matches_certificate"]


def test_key_of_another_certificate(key):
    info = pem_info(cert_pem(make_cert(key)) + key_pem(make_key("ec")), now=NOW_TEXT)
    assert info["certificates"] == 1 and info["private_keys"] == 1 and not info["key_matches_certificate"]


@pytest.mark.parametrize("text", ["", None, "garbage", "not a pem\nat all\n", {"a": 1}])
def test_garbage(text):
    info = pem_info(text, now=NOW_TEXT)
    assert info["certificates"] == 0 and info["private_keys"] == 0 and not info["expired"]


def test_damaged_blocks_are_counted(key):
    good = bundle(key)
    damaged = good.replace(good.splitlines()[3], "A" * 10, 1)
    info = pem_info(damaged, now=NOW_TEXT)
    assert info["invalid_blocks"] == 1 and info["certificates"] == 0
    assert info["errors"] == ["CERTIFICATE: does not parse (ValueError)"]


def test_encrypted_key_and_unknown_block(key):
    text = cert_pem(make_cert(key)) + key_pem(key, password=b"s3cret")
    text = text.replace("ENCRYPTED PRIVATE KEY", "PRIVATE KEY")
    text += "-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n"
    info = pem_info(text, now=NOW_TEXT)
    assert info["private_keys"] == 0 and info["invalid_blocks"] == 2
    assert any("FOO: unknown" in e for e in info["errors"])


def test_truncated_pem(key):
    text = bundle(key)
    info = pem_info(text[: len(text) - 40], now=NOW_TEXT)
    assert info["invalid_blocks"] >= 1 and info["private_keys"] == 0


def test_entitlement_data_blocks_are_accepted(key):
    text = bundle(key) + "-----BEGIN ENTITLEMENT DATA-----\neJzT\n-----END ENTITLEMENT DATA-----\n"
    info = pem_info(text, now=NOW_TEXT)
    assert info["invalid_blocks"] == 0 and info["certificates"] == 1


def test_bad_now(key):
    with pytest.raises(PemError, match="now must be"):
        pem_info(bundle(key), now="yesterday")


def test_default_now_is_the_current_time(key):
    info = pem_info(cert_pem(make_cert(key, not_before=datetime.datetime.now(datetime.timezone.utc), days=30)))
    assert info["days_left"] in (29, 30) and not info["expired"]


def test_the_filter_plugin_wraps_it(tmp_path):
    """Through ansible's own templating, in a child process: controller imports stay out of this one."""
    pem = tmp_path / "bundle.pem"
    key = make_key()
    pem.write_text(bundle(key))
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.debug:\n"
        "        msg: \"{{ lookup('ansible.builtin.file', '%s') | gpuops.cluster.pem_info(now='%s') | to_json }}\"\n"
        "    - ansible.builtin.debug:\n        msg: \"{{ 'x' | gpuops.cluster.pem_info(now='never') }}\"\n"
        % (pem, NOW_TEXT)
    )
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=BUILD, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
    proc = subprocess.run(
        [
            os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            str(play),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
    )
    out = proc.stdout.decode()
    assert '\\"certificates\\": 1' in out and '\\"days_left\\": 364' in out, out
    assert "now must be an ISO 8601 time" in out and proc.returncode != 0, out
