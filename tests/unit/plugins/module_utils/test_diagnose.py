# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The failure signature table: every example (a line transcribed from its public report) is named by its own
signature and by no other; the table is sourced and well-formed; lines are matched per source. (The filter itself:
tests/unit/plugins/filter/test_timeline_filters.py.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.match import WHERE, match_line, match_lines
from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.signatures import SIGNATURES
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

BY_ID = dict((sig["id"], sig) for sig in SIGNATURES)


def test_the_table_is_sourced_and_well_formed():
    assert len(SIGNATURES) >= 25 and len(BY_ID) == len(SIGNATURES)  # ids unique
    for sig in SIGNATURES:
        assert set(sig) == {"id", "where", "pattern", "example", "cause", "fix", "source"}, sig["id"]
        assert re.match(r"^[a-z0-9_]+$", sig["id"]) and sig["where"] in WHERE, sig["id"]
        assert re.match(r"^https://[^\s]+$", sig["source"]), sig["id"]
        assert sig["cause"].endswith(".") and sig["fix"].endswith("."), sig["id"]


@pytest.mark.parametrize("sig", SIGNATURES, ids=[s["id"] for s in SIGNATURES])
def test_each_real_line_is_named_by_its_own_signature_and_no_other(sig):
    for line in sig["example"].splitlines():
        if re.search(sig["pattern"], line, re.IGNORECASE):
            break
    else:
        raise AssertionError("{0}: its pattern does not match its example".format(sig["id"]))
    assert match_line(line, sig["where"])["id"] == sig["id"]
    assert match_line(line)["id"] == sig["id"]  # and among every source's signatures
    others = [s["id"] for s in SIGNATURES if s is not sig and re.search(s["pattern"], sig["example"], re.IGNORECASE)]
    assert others == []


def test_a_log_names_each_known_failure_once_with_its_first_line():
    nouveau = BY_ID["nouveau_in_use"]["example"]
    log = "\n".join(["========== NVIDIA Software Installer ==========", nouveau, "random noise", nouveau])
    (found,) = match_lines([log], "driver_log")
    assert found["signature"] == "nouveau_in_use" and found["evidence"] == nouveau
    assert found["source"] == BY_ID["nouveau_in_use"]["source"]
    assert match_lines(["Starting nvidia-device-plugin", "Registered device plugin"], "device_plugin_log") == []
    # A line of another source's signature is not taken when the source is given.
    assert match_lines([nouveau], "event") == []
    mixed = [{"text": nouveau, "where": "driver_log"}, {"text": BY_ID[EVENT]["example"], "where": "event"}]
    assert [f["signature"] for f in match_lines(mixed)] == ["nouveau_in_use", EVENT]


EVENT = next(s["id"] for s in SIGNATURES if s["where"] == "event")


def test_bad_input_is_named():
    with pytest.raises(GpuopsError, match=r"^where: must be one of kernel_log"):
        match_line("x", "driver")
    # The filter: tests/unit/plugins/filter/test_timeline_filters.py (a subprocess; controller imports here would
    # break the module tests' warning capture).
