# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Which known failure a log line, event or condition message shows (pure; signatures.py holds the table).

A line is matched against the signatures of its source (``where``; every signature when it is not given),
first match wins in the table's order; a line that matches none is kept as evidence, so that a report can say
"no known signature" and show what it saw.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.cluster.plugins.module_utils.diagnose.signatures import SIGNATURES
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError

WHERE = (
    "kernel_log",
    "driver_log",
    "toolkit_log",
    "device_plugin_log",
    "gfd_log",
    "dcgm_log",
    "validator_log",
    "event",
    "pod_status",
    "node_condition",
)
_COMPILED = []


def compiled():
    """[(signature, compiled pattern)], compiled once per process."""
    if not _COMPILED:
        _COMPILED.extend((sig, re.compile(sig["pattern"], re.IGNORECASE)) for sig in SIGNATURES)
    return _COMPILED


def match_line(text, where=None):
    """The first signature whose pattern is found in ``text`` (of source ``where``, or any), else None."""
    if where is not None and where not in WHERE:
        raise GpuopsError("must be one of {0}, got {1!r}".format(", ".join(WHERE), where), param="where")
    for sig, pattern in compiled():
        if (where is None or sig["where"] == where) and pattern.search(text or ""):
            return sig
    return None


def finding(sig, text):
    return {
        "signature": sig["id"],
        "cause": sig["cause"],
        "fix": sig["fix"],
        "source": sig["source"],
        "evidence": text.strip(),
    }


def match_lines(lines, where=None):
    """Each known failure the lines show, once per signature (its first line as evidence), in the lines' order.

    ``lines``: strings (a log, split or not) or dicts with ``text`` and optional ``where``, for evidence of
    several sources at once.
    """
    found, seen = [], set()
    for entry in lines or []:
        text, source = (
            (entry.get("text") or "", entry.get("where", where)) if isinstance(entry, dict) else (entry, where)
        )
        for line in (text or "").splitlines():
            sig = match_line(line, source)
            if sig is not None and sig["id"] not in seen:
                seen.add(sig["id"])
                found.append(finding(sig, line))
    return found
