# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate's burn-in (pure): the DCGM diagnostics command, and its JSON answer read per GPU.

The pod runs ``dcgmi diag -r <level> -j`` (NVIDIA/DCGM ``dcgmi/Diag.cpp``; without ``--host`` dcgmi starts an
embedded host engine, so no nv-hostengine is needed in the pod). Its JSON comes in two shapes:

* DCGM 3.x: top key ``"DCGM GPU Diagnostic"``, each result's GPU in ``gpu_id`` (a string; the Deployment
  checks have none unless they fail), warnings' text under ``warning`` (or ``warnings``);
* DCGM 4.x: top key ``"DCGM Diagnostic"``, the GPU in ``entity_id`` (with ``entity_group: GPU``), version under
  ``metadata`` (``nvvs/include/NvvsJsonStrings.h``; facebookresearch/gcm#38 reads both).

``dcgmi`` exits 226 (DCGM_ST_NVVS_ERROR) when a test failed and 205 when the failure asks to isolate the GPU,
with the full JSON either way (NVIDIA/DCGM#158): the verdict is read from the output, not the exit code.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

TOP_KEYS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")
# The per-test duration parameters (nvvs/include/PluginStrings.h) of the tests that run from level 3 on; level 1
# and 2 run only the short deployment, PCIe and memory checks.
DURATION_TESTS = ("diagnostic", "targeted_stress", "targeted_power")
ALL_GPUS = "all"


def seconds(level, duration):
    """About how long a burn-in takes: levels 1 and 2 take seconds to about two minutes (DCGM's help); 3 and 4 run
    the diagnostic, targeted stress and power tests ``duration`` each, after about 15 minutes (3) or an hour (4) of
    DCGM's own tests."""
    if level <= 2:
        return {1: 60, 2: 180}[level]
    return 3 * int(duration) + (900 if level == 3 else 3600)


def command(level, duration=None):
    """The container's command: ``dcgmi diag -r <level> -j`` and, from level 3, each stress test's duration."""
    cmd = ["dcgmi", "diag", "-r", str(int(level)), "-j"]
    if duration and int(level) >= 3:
        cmd += ["-p", ";".join("{0}.test_duration={1}".format(t, int(duration)) for t in DURATION_TESTS)]
    return cmd


def _json_of(text):
    """The first JSON object in ``text`` with a diagnostic key; the log may hold other lines before or after it
    (stderr's ``Error: ...`` when dcgmi exits non-zero, anything a wrapper prints)."""
    text = text or ""
    decoder, start, first = json.JSONDecoder(), text.find("{"), None
    if start < 0:
        raise ValueError("no JSON in the output")
    while start >= 0:
        try:
            doc, dummy = decoder.raw_decode(text, start)
        except ValueError as exc:
            first = first or exc
        else:
            if isinstance(doc, dict) and any(k in doc for k in TOP_KEYS):
                return doc
            first = first or ValueError("no {0} key in the JSON".format(" or ".join(repr(k) for k in TOP_KEYS)))
        start = text.find("{", start + 1)
    raise first


def _warnings(result):
    out = []
    for warning in result.get("warnings") or []:
        if isinstance(warning, dict):
            text = warning.get("warning") or warning.get("warnings")
            out.append(" ".join(str(text).split()))
        elif warning:
            out.append(" ".join(str(warning).split()))
    return [w for w in out if w]


def _gpu_of(result):
    if "entity_id" in result and result.get("entity_group", "GPU") == "GPU":
        return str(result["entity_id"])
    if result.get("gpu_id") is not None:
        return str(result["gpu_id"])
    return ALL_GPUS


def parse(text):
    """{'version', 'error', 'tests': [names], 'gpus': {gpu: {'failed': [{test, category, why}], 'passed': [tests],
    'skipped': [tests]}}} from ``dcgmi diag -j`` output; ValueError when it is not that output."""
    doc = _json_of(text)
    top = doc[next(k for k in TOP_KEYS if k in doc)] or {}
    version = (doc.get("metadata") or {}).get("version") or doc.get("version") or top.get("version")
    out = {"version": version, "error": top.get("runtime_error"), "tests": [], "gpus": {}}
    for category in top.get("test_categories") or []:
        for test in category.get("tests") or []:
            name = test.get("name") or "?"
            out["tests"].append(name)
            for result in test.get("results") or []:
                gpu = out["gpus"].setdefault(_gpu_of(result), {"failed": [], "passed": [], "skipped": []})
                status = (result.get("status") or "").lower()
                if status == "fail":
                    why = "; ".join(_warnings(result)) or "failed"
                    gpu["failed"].append({"test": name, "category": category.get("category"), "why": why})
                elif status in ("pass", "warn"):
                    gpu["passed"].append(name)
                elif status:
                    gpu["skipped"].append(name)
    return out


def judge(text, level):
    """(ok, message, per-GPU results) for one node's burn-in output."""
    try:
        parsed = parse(text)
    except ValueError as exc:
        return False, "dcgmi diag -r {0} gave no diagnostic JSON ({1})".format(level, exc), []
    what = "dcgmi diag -r {0}{1}".format(level, " (DCGM {0})".format(parsed["version"]) if parsed["version"] else "")
    if parsed["error"]:
        return False, "{0} could not run: {1}".format(what, " ".join(str(parsed["error"]).split())), []
    shared = parsed["gpus"].pop(ALL_GPUS, None)
    gpus = []
    for gpu in sorted(parsed["gpus"], key=lambda g: (len(g), g)):
        entry = parsed["gpus"][gpu]
        failed = entry["failed"] + (shared or {}).get("failed", [])
        # A GPU on which every test was skipped (DCGM skips what the GPU or its setup does not support) was not
        # burned in: that is not a pass.
        result = "fail" if failed else ("pass" if entry["passed"] else "skipped")
        gpus.append({"gpu": gpu, "result": result, "passed": sorted(set(entry["passed"])), "failed": failed})
    if not gpus and (shared or {}).get("passed") and not shared.get("failed"):
        # DCGM 3.x's level 1 runs only the deployment checks, whose results name no GPU: they hold for every GPU.
        return True, "{0}: passed {1}".format(what, ", ".join(parsed["tests"])), []
    if not gpus and not (shared or {}).get("failed"):
        return False, "{0} reported no GPU".format(what), []
    bad = [g for g in gpus if g["result"] != "pass"]
    if bad or (shared or {}).get("failed"):
        named = [
            (
                "GPU {0} failed {1}".format(
                    g["gpu"], "; ".join("{0}: {1}".format(f["test"], f["why"]) for f in g["failed"])
                )
                if g["failed"]
                else "GPU {0} ran no test (every test skipped)".format(g["gpu"])
            )
            for g in bad
        ] or ["{0}: {1}".format(f["test"], f["why"]) for f in shared["failed"]]
        return False, "{0}: {1}".format(what, " | ".join(named)), gpus
    return True, "{0}: {1} GPU(s) passed {2}".format(what, len(gpus), ", ".join(parsed["tests"])), gpus
