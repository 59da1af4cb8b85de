# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""gpu_validate report (pure, plus writing the files): per-node entries, JSON, JUnit XML, Markdown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import xml.etree.ElementTree as ET

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.checks import (
    allocatable_gpus,
    check_node_ready,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    FAIL,
    GFD_PRODUCT,
    NODE_CHECK,
    PASS,
    SKIP,
    UNREACHABLE,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.resources import expected_gpus, node_labels
from ansible_collections.gpuops.cluster.plugins.module_utils.reports import write_atomic


def node_report(node, results, checks, validation=None):
    """One node's entry: every requested check (plus node_ready), failures, GPU numbers.

    ``validation`` (incremental mode): the node's step of the plan - whether its workload checks ran again,
    why, and when they last passed.
    """
    entry_checks = {NODE_CHECK: results.get(NODE_CHECK) or check_node_ready(node)}
    for check in checks:
        entry_checks[check] = results.get(check) or {"status": SKIP, "message": "not evaluated"}
    failures = [
        entry_checks[c]["message"]
        for c in [NODE_CHECK] + list(checks)
        if entry_checks[c]["status"] in (FAIL, UNREACHABLE)
    ]
    alloc = entry_checks.get("allocatable") or {}
    entry = {
        "node": node["metadata"]["name"],
        "passed": not failures,
        "product": node_labels(node).get(GFD_PRODUCT),
        "allocatable_gpus": alloc.get("allocatable", allocatable_gpus(node)),
        "expected_gpus": alloc.get("expected") if "allocatable" in entry_checks else expected_gpus(node)[0],
        "checks": entry_checks,
        "failures": failures,
    }
    if validation is not None:
        entry["validation"] = {
            "revalidated": bool(validation.get("run")),
            "reason": validation.get("reason"),
            "last_validated": validation.get("last_validated"),
        }
    return entry


def workload_text(node):
    """'re-validated (kernel a -> b)', 'unchanged since <time>' or '' (not incremental)."""
    val = node.get("validation")
    if not val:
        return ""
    if val["revalidated"]:
        return "re-validated ({0})".format(val.get("reason") or "changed")
    if val.get("reason") == "unchanged":
        return "skipped, unchanged since {0}".format(val.get("last_validated") or "an earlier run")
    return "skipped ({0})".format(val.get("reason"))


def build_report(node_reports, checks, started=None, duration=None, meta=None):
    failed = [n for n in node_reports if not n["passed"]]
    summary = {
        "result": "passed" if not failed else "failed",
        "nodes": len(node_reports),
        "passed": len(node_reports) - len(failed),
        "failed": len(failed),
        "checks": list(checks),
        "started": started,
        "duration": duration,
    }
    summary.update(meta or {})
    return {
        "summary": summary,
        "nodes": node_reports,
        "failures": ["{0}: {1}".format(n["node"], "; ".join(n["failures"])) for n in failed],
    }


def failure_message(report):
    """'GPU validation failed on 1 of 3 GPU nodes: ip-10-0-138-78: allocatable nvidia.com/gpu 0, expected 1; ...'"""
    summary = report["summary"]
    return "GPU validation failed on {0} of {1} GPU node(s) (checks: {2}): {3}".format(
        summary["failed"], summary["nodes"], ", ".join(summary["checks"]), " | ".join(report["failures"])
    )


def report_json(report):
    return json.dumps(report, indent=2, sort_keys=True) + "\n"


def _junit_case(suite, node, check, res):
    case = ET.SubElement(
        suite,
        "testcase",
        {
            "classname": "gpu_validate.{0}".format(node["node"]),
            "name": check,
            "time": "{0:.3f}".format(res.get("duration") or 0),
        },
    )
    if res["status"] == FAIL:
        ET.SubElement(case, "failure", {"message": res["message"], "type": check}).text = res["message"]
    elif res["status"] == UNREACHABLE:
        ET.SubElement(case, "error", {"message": res["message"], "type": "unreachable"}).text = res["message"]
    elif res["status"] == SKIP:
        ET.SubElement(case, "skipped", {"message": res["message"]})
    else:
        ET.SubElement(case, "system-out").text = res.get("message") or ""


def report_junit(report, suite_name="gpuops.cluster.gpu_validate"):
    """JUnit XML: one testcase per node and check (classname = node), for AWX/CI."""
    summary = report["summary"]
    cases = [
        (n, c, n["checks"][c])
        for n in report["nodes"]
        for c in [NODE_CHECK] + list(summary["checks"])
        if c in n["checks"]
    ]
    attrs = {
        "name": suite_name,
        "tests": str(len(cases)),
        "failures": str(sum(1 for _n, _c, r in cases if r["status"] == FAIL)),
        "errors": str(sum(1 for _n, _c, r in cases if r["status"] == UNREACHABLE)),
        "skipped": str(sum(1 for _n, _c, r in cases if r["status"] == SKIP)),
        "time": "{0:.3f}".format(summary.get("duration") or 0),
    }
    root = ET.Element("testsuites", attrs)
    suite = ET.SubElement(root, "testsuite", dict(attrs, timestamp=summary.get("started") or ""))
    for node, check, res in cases:
        _junit_case(suite, node, check, res)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + to_text(ET.tostring(root, encoding="unicode")) + "\n"


def _md(text):
    return to_text(text if text is not None else "").replace("|", "\\|").replace("\n", " ")


def _incremental(report):
    return any(n.get("validation") for n in report["nodes"])


def report_markdown(report):
    summary = report["summary"]
    checks = [NODE_CHECK] + list(summary["checks"])
    marks = {PASS: "pass", FAIL: "**FAIL**", SKIP: "skipped", UNREACHABLE: "**unreachable**"}
    incremental = _incremental(report)
    lines = [
        "## GPU validation: {0} ({1}/{2} nodes passed)".format(
            summary["result"].upper(), summary["passed"], summary["nodes"]
        ),
        "",
        "| Node | Product | GPUs (allocatable/expected) | {0} | Result |{1}".format(
            " | ".join(checks), " Workload checks |" if incremental else ""
        ),
        "|" + "---|" * (len(checks) + 4 + (1 if incremental else 0)),
    ]
    for node in report["nodes"]:
        cells = [marks.get(node["checks"][c]["status"], node["checks"][c]["status"]) for c in checks]
        expected = node.get("expected_gpus")
        lines.append(
            "| {0} | {1} | {2}/{3} | {4} | {5} |{6}".format(
                _md(node["node"]),
                _md(node.get("product") or "-"),
                node.get("allocatable_gpus"),
                expected if expected else ">=1",
                " | ".join(cells),
                "PASS" if node["passed"] else "**FAIL**",
                " {0} |".format(_md(workload_text(node))) if incremental else "",
            )
        )
    if report["failures"]:
        lines += ["", "### Failures", ""]
        lines += ["- {0}".format(_md(f)) for f in report["failures"]]
    lines += ["", "_checks: {0}; duration {1}s_".format(", ".join(summary["checks"]), summary.get("duration"))]
    return "\n".join(lines) + "\n"


def report_table(report):
    """The report as plain-text lines (a fixed-width table) for the end of a run."""
    summary = report["summary"]
    checks = [NODE_CHECK] + list(summary["checks"])
    incremental = _incremental(report)
    header = ["node", "product", "gpus"] + checks + ["result"] + (["workload checks"] if incremental else [])
    rows = [header]
    for node in report["nodes"]:
        expected = node.get("expected_gpus")
        row = [
            node["node"],
            node.get("product") or "-",
            "{0}/{1}".format(node.get("allocatable_gpus"), expected if expected else ">=1"),
        ]
        row += [node["checks"][c]["status"] for c in checks]
        row.append("PASS" if node["passed"] else "FAIL")
        if incremental:
            row.append(workload_text(node))
        rows.append([to_text(c) for c in row])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "GPU validation: {0} ({1}/{2} nodes passed; checks: {3})".format(
            summary["result"].upper(), summary["passed"], summary["nodes"], ", ".join(summary["checks"])
        )
    ]
    for i, row in enumerate(rows):
        lines.append(" | ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            lines.append("-+-".join("-" * w for w in widths))
    lines += ["failure: " + f for f in report["failures"]]
    return lines


RENDERERS = {"json": report_json, "junit": report_junit, "markdown": report_markdown}


def write_reports(report, paths):
    return {fmt: write_atomic(path, RENDERERS[fmt](report)) for fmt, path in sorted(paths.items())}
