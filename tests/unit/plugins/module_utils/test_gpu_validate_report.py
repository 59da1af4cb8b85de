# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import xml.etree.ElementTree as ET

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.checks import (
    check_allocatable,
    check_driver,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.consts import (
    FAIL,
    PASS,
    SKIP,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.metrics import (
    check_metrics,
    unreachable,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.report import (
    build_report,
    failure_message,
    node_report,
    report_json,
    report_junit,
    report_markdown,
    write_reports,
)
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.gpu_validate_fixtures import (
    METRICS,
    node,
    pod,
)

# --- reports ----------------------------------------------------------------------------------


def sample_report():
    a = node("gpu-a")
    bad = node("ip-10-0-138-78", alloc="0")
    checks = ["allocatable", "driver", "vectoradd", "metrics"]
    res_a = {
        "allocatable": check_allocatable(a),
        "driver": check_driver([pod("nvidia-driver-a")]),
        "vectoradd": {"status": PASS, "message": "vectoradd: Test PASSED", "duration": 3.5},
        "metrics": check_metrics(METRICS, 1),
    }
    res_b = {
        "allocatable": check_allocatable(
            bad,
            plugin_pods=[pod("dp", node_name="ip-10-0-138-78", ready=False, waiting="CrashLoopBackOff", restarts=4)],
            plugin_selector="x",
        ),
        "driver": check_driver([pod("nvidia-driver-b", node_name="ip-10-0-138-78")]),
        "vectoradd": {
            "status": FAIL,
            "message": "vectoradd not run: the node advertises no allocatable nvidia.com/gpu",
        },
        "metrics": unreachable("pod proxy", "connection refused"),
    }
    nodes = [node_report(a, res_a, checks), node_report(bad, res_b, checks)]
    return build_report(nodes, checks, "2026-01-10T10:00:00Z", 12.5, {"namespace": "nvidia-gpu-operator"})


def test_build_report_and_failure_message():
    report = sample_report()
    s = report["summary"]
    assert (s["result"], s["nodes"], s["passed"], s["failed"]) == ("failed", 2, 1, 1)
    assert report["nodes"][0]["passed"] and not report["nodes"][1]["passed"]
    assert report["nodes"][1]["checks"]["node_ready"]["status"] == PASS
    msg = failure_message(report)
    assert msg.startswith(
        "GPU validation failed on 1 of 2 GPU node(s) (checks: allocatable, driver, vectoradd, metrics): "
    )
    assert (
        "ip-10-0-138-78: allocatable nvidia.com/gpu 0, expected 1 (nvidia.com/gpu.count); device-plugin pod CrashLoopBackOff (restarts 4); "
        "vectoradd not run"
    ) in msg
    assert "metrics unreachable via pod proxy: connection refused" in msg
    assert "gpu-a" not in msg


def test_node_report_missing_check_is_skipped_not_passed():
    rep = node_report(node(), {}, ["allocatable"])
    assert rep["checks"]["allocatable"]["status"] == SKIP and rep["passed"]


def test_report_json_roundtrip():
    report = sample_report()
    assert json.loads(report_json(report)) == report


def test_report_junit():
    text = report_junit(sample_report())
    root = ET.fromstring(text.split("\n", 1)[1])
    suite = root.find("testsuite")
    assert (
        suite.get("tests") == "10"
        and suite.get("failures") == "2"
        and suite.get("errors") == "1"
        and suite.get("skipped") == "0"
    )
    cases = dict(((c.get("classname"), c.get("name")), c) for c in suite.findall("testcase"))
    fail = cases[("gpu_validate.ip-10-0-138-78", "allocatable")].find("failure")
    assert fail is not None and "CrashLoopBackOff" in fail.get("message")
    assert cases[("gpu_validate.ip-10-0-138-78", "metrics")].find("error").get("type") == "unreachable"
    assert cases[("gpu_validate.gpu-a", "vectoradd")].get("time") == "3.500"
    assert cases[("gpu_validate.gpu-a", "vectoradd")].find("failure") is None


def test_report_junit_escapes_markup():
    report = sample_report()
    report["nodes"][1]["checks"]["driver"] = {"status": FAIL, "message": "log <b>&\"'"}
    root = ET.fromstring(report_junit(report).split("\n", 1)[1])
    msgs = [f.get("message") for f in root.iter("failure")]
    assert "log <b>&\"'" in msgs


def test_report_markdown():
    md = report_markdown(sample_report())
    lines = md.splitlines()
    assert lines[0] == "## GPU validation: FAILED (1/2 nodes passed)"
    assert (
        lines[2]
        == "| Node | Product | GPUs (allocatable/expected) | node_ready | allocatable | driver | vectoradd | metrics | Result |"
    )
    assert lines[3].count("---") == 9
    assert "| gpu-a | Tesla-T4 | 1/1 | pass | pass | pass | pass | pass | PASS |" in lines
    assert (
        "| ip-10-0-138-78 | Tesla-T4 | 0/1 | pass | **FAIL** | pass | **FAIL** | **unreachable** | **FAIL** |" in lines
    )
    assert "### Failures" in lines
    report = sample_report()
    report["nodes"][0]["node"] = "a|b"
    assert "a\\|b" in report_markdown(report)


def test_write_reports(tmp_path):
    paths = {"json": str(tmp_path / "r.json"), "junit": str(tmp_path / "r.xml"), "markdown": str(tmp_path / "r.md")}
    written = write_reports(sample_report(), paths)
    assert written == paths
    for path in paths.values():
        assert os.path.getsize(path) > 0 and not os.path.exists(path + ".tmp")
