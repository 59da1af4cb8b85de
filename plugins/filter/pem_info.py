# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.plugin_utils.lazy import lazy_module

pem = lazy_module("ansible_collections.gpuops.cluster.plugins.module_utils.pem")

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


def pem_info(text, now=None):
    """Counts and expiry of the certificates and keys in ``text`` (see module_utils/pem.py)."""
    try:
        return pem.pem_info(text, now=now)
    except pem.PemError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {"pem_info": pem_info}
