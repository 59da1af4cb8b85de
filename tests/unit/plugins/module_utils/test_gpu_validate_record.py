# -*- coding: utf-8 -*-
"""gpu_validate's validation record: fingerprints, what changed, which nodes run again, the next record, the table."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.record import (
    config_hash,
    config_refs,
    fingerprint_changes,
    next_record,
    node_fingerprint,
    parse_record,
    plan_revalidation,
    record_data,
)
from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.report import (
    build_report,
    node_report,
    report_markdown,
    report_table,
)

NS = "nvidia-gpu-driver"
T0 = "2026-11-23T22:00:00Z"
T1 = "2026-11-23T23:00:00Z"


def node(name, kernel="5.15.0-119-generic", alloc="1", labels=None):
    return {
        "metadata": {"name": name, "labels": dict({"nvidia.com/gpu.product": "Tesla-T4"}, **(labels or {}))},
        "status": {
            "nodeInfo": {"kernelVersion": kernel},
            "allocatable": {"cpu": "8", "nvidia.com/gpu": alloc, "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(image, config_map=None, env_ref=None):
    spec = {"containers": [{"name": "c", "image": image}]}
    if config_map:
        spec["volumes"] = [{"name": "config", "configMap": {"name": config_map}}]
    if env_ref:
        spec["containers"][0]["env"] = [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": env_ref, "key": "k"}}}]
    return {"metadata": {"name": "p", "namespace": NS}, "spec": spec}


DRIVER = [pod("nvcr.io/nvidia/driver:595-5.15.0-119-generic-ubuntu22.04")]
PLUGIN = [pod("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", config_map="time-slicing")]
CMS = {(NS, "time-slicing"): {"data": {"any": "version: v1\nsharing:\n  timeSlicing: {}\n"}}}


def fp(**kw):
    return node_fingerprint(
        kw.pop("node", node("gpu-0")), kw.pop("driver", DRIVER), kw.pop("plugin", PLUGIN), kw.pop("cms", CMS)
    )


def test_fingerprint_holds_kernel_images_config_and_allocatable():
    f = fp()
    assert f["kernel"] == "5.15.0-119-generic"
    assert f["driver"] == ["nvcr.io/nvidia/driver:595-5.15.0-119-generic-ubuntu22.04"]
    assert f["device_plugin"] == ["nvcr.io/nvidia/k8s-device-plugin:v0.17.0"]
    assert f["allocatable"] == {"nvidia.com/gpu": "1"}  # cpu and pods are not GPU resources
    assert len(f["plugin_config"]) == 16 and f["plugin_config_label"] is None
    # Same content, same hash (a re-created ConfigMap with the same data is no change); other content, other hash.
    assert fp()["plugin_config"] == f["plugin_config"]
    other = {(NS, "time-slicing"): {"data": {"any": "version: v1\nsharing:\n  timeSlicing: {replicas: 4}\n"}}}
    assert fp(cms=other)["plugin_config"] != f["plugin_config"]
    assert fp(cms={})["plugin_config"] != f["plugin_config"]  # the ConfigMap is gone
    assert fp(plugin=[pod("x")])["plugin_config"] is None  # no config referenced


def test_config_refs_cover_volumes_projections_and_env():
    projected = pod("x")
    projected["spec"]["volumes"] = [{"name": "p", "projected": {"sources": [{"configMap": {"name": "proj"}}]}}]
    env_from = pod("x")
    env_from["spec"]["containers"][0]["envFrom"] = [{"configMapRef": {"name": "envfrom"}}]
    refs = config_refs([pod("x", config_map="vol"), pod("x", env_ref="env"), projected, env_from])
    assert refs == [(NS, "env"), (NS, "envfrom"), (NS, "proj"), (NS, "vol")]
    assert config_hash([], {}) is None


def test_changes_are_named():
    old = fp()
    new = fp(node=node("gpu-0", kernel="6.8.0-45-generic", alloc="4", labels={"nvidia.com/device-plugin.config": "ts"}))
    assert fingerprint_changes(old, new) == [
        "kernel 5.15.0-119-generic -> 6.8.0-45-generic",
        "label nvidia.com/device-plugin.config none -> ts",
        "allocatable nvidia.com/gpu 1 -> nvidia.com/gpu 4",
    ]
    assert fingerprint_changes(old, fp(driver=[pod("nvcr.io/nvidia/driver:595-6.8")])) == [
        "driver image nvcr.io/nvidia/driver:595-5.15.0-119-generic-ubuntu22.04 -> nvcr.io/nvidia/driver:595-6.8"
    ]
    changed = fingerprint_changes(old, fp(cms={}))
    assert len(changed) == 1 and changed[0].startswith("device plugin config changed (")
    assert fingerprint_changes(old, fp()) == []


def entry(f, checks=("vectoradd",), when=T0):
    return {"fingerprint": f, "validated": when, "checks": list(checks)}


def test_plan_runs_only_what_changed_unless_forced():
    same, moved = fp(), fp(node=node("gpu-1", kernel="6.8.0-45-generic"))
    previous = {"gpu-0": entry(same), "gpu-1": entry(fp(node=node("gpu-1"))), "gone": entry(same)}
    fingerprints = {"gpu-0": same, "gpu-1": moved, "gpu-2": same}
    plan = plan_revalidation(previous, fingerprints, ["vectoradd"])
    assert plan["gpu-0"] == {"run": False, "reason": "unchanged", "last_validated": T0}
    assert plan["gpu-1"] == {
        "run": True,
        "reason": "kernel 5.15.0-119-generic -> 6.8.0-45-generic",
        "last_validated": T0,
    }
    assert plan["gpu-2"] == {"run": True, "reason": "never validated", "last_validated": None}
    assert "gone" not in plan
    assert all(
        s["run"] and s["reason"] == "forced"
        for s in plan_revalidation(previous, fingerprints, ["vectoradd"], True).values()
    )
    # A check the record does not hold runs again; no workload check, nothing runs.
    assert plan_revalidation(previous, fingerprints, ["vectoradd", "nvidia_smi"])["gpu-0"]["reason"] == (
        "not validated with nvidia_smi yet"
    )
    assert not any(s["run"] for s in plan_revalidation(previous, fingerprints, []).values())


def passed(pod_name="p"):
    return {"status": "pass", "message": "ok", "pod": pod_name}


def test_next_record_keeps_unchanged_replaces_passed_drops_failed_and_gone():
    f0, f1, f2, f3 = fp(), fp(node=node("gpu-1", kernel="6.8")), fp(node=node("gpu-2")), fp(node=node("gpu-3"))
    previous = {"gpu-0": entry(f0), "gpu-1": entry(fp(node=node("gpu-1"))), "gpu-2": entry(f2), "gone": entry(f0)}
    fingerprints = {"gpu-0": f0, "gpu-1": f1, "gpu-2": f2, "gpu-3": f3}
    plan = {
        "gpu-0": {"run": False},
        "gpu-1": {"run": True},
        "gpu-2": {"run": True},  # forced, and failed this time
        "gpu-3": {"run": True},  # new, not run (check mode): no entry yet
    }
    results = {
        "gpu-0": {"vectoradd": {"status": "skipped", "message": "unchanged"}},
        "gpu-1": {"vectoradd": passed()},
        "gpu-2": {"vectoradd": {"status": "fail", "message": "Failed", "pod": "p"}},
        "gpu-3": {"vectoradd": {"status": "skipped", "message": "not run in check mode"}},
    }
    record = next_record(previous, fingerprints, plan, results, ["vectoradd"], T1)
    assert record == {"gpu-0": previous["gpu-0"], "gpu-1": entry(f1, when=T1)}


def test_a_burn_in_that_cannot_run_on_the_node_does_not_hold_the_record_back_and_its_level_is_recorded():
    f0 = fp()
    results = {
        "gpu-0": {
            "vectoradd": passed(),
            "burnin": {"status": "skipped", "message": "burn-in not run: MIG", "not_applicable": True},
        }
    }
    plan = {"gpu-0": {"run": True}}
    record = next_record({}, {"gpu-0": f0}, plan, results, ["vectoradd", "burnin"], T1, ["vectoradd", "burnin-r2-60s"])
    assert record["gpu-0"]["checks"] == ["vectoradd", "burnin-r2-60s"]
    # A skip for another reason (check mode, an earlier failure) still keeps the node out of the record.
    results["gpu-0"]["burnin"] = {"status": "skipped", "message": "not run in check mode"}
    assert next_record({}, {"gpu-0": f0}, plan, results, ["vectoradd", "burnin"], T1) == {}
    # A deeper burn-in than the recorded one runs again.
    previous = {"gpu-0": dict(entry(f0), checks=["vectoradd", "burnin-r2-60s"])}
    assert plan_revalidation(previous, {"gpu-0": f0}, ["vectoradd", "burnin-r3-60s"])["gpu-0"]["reason"] == (
        "not validated with burnin-r3-60s yet"
    )


def test_record_data_is_stable_and_parses_back():
    record = {"gpu-1": entry(fp()), "gpu-0": entry(fp(), when=T1)}
    data = record_data(record)
    assert list(data) == ["gpu-0", "gpu-1"]
    assert data == record_data(json.loads(json.dumps(record)))
    assert parse_record(data) == record
    assert parse_record({"bad": "{not json", "empty": "{}", "ok": data["gpu-0"]}) == {"ok": record["gpu-0"]}
    assert parse_record(None) == {}


def _report(validations):
    checks = ["allocatable", "vectoradd"]
    reports = []
    for name, validation, vec in validations:
        results = {
            "allocatable": {"status": "pass", "message": "ok", "allocatable": 1, "expected": 1},
            "vectoradd": vec,
        }
        reports.append(node_report(node(name), results, checks, validation))
    return build_report(reports, checks, T1, 1.5)


def test_table_and_markdown_say_which_nodes_ran_again():
    report = _report(
        [
            (
                "gpu-0",
                {"run": False, "reason": "unchanged", "last_validated": T0},
                {"status": "skipped", "message": "u"},
            ),
            ("gpu-1", {"run": True, "reason": "kernel a -> b", "last_validated": T0}, passed()),
        ]
    )
    table = report_table(report)
    assert table[0] == "GPU validation: PASSED (2/2 nodes passed; checks: allocatable, vectoradd)"
    assert table[1].split(" | ")[0].strip() == "node" and table[1].endswith("workload checks")
    assert set(table[2]) <= {"-", "+"}
    assert table[3].startswith("gpu-0 ") and table[3].endswith("skipped, unchanged since " + T0)
    assert table[4].endswith("re-validated (kernel a -> b)") and " | PASS " in table[4]
    # The columns line up: the separators of the header, the rule and every row are at the same places.
    bars = [i for i, c in enumerate(table[2]) if c == "+"]
    assert bars and all([i for i, c in enumerate(line) if c == "|"] == bars for line in table[1:2] + table[3:])
    md = report_markdown(report)
    assert "| Workload checks |" in md and "skipped, unchanged since " + T0 in md


def test_table_without_record_has_no_workload_column_and_lists_failures():
    report = _report([("gpu-0", None, {"status": "fail", "message": "vectoradd pod Failed"})])
    table = report_table(report)
    assert table[0].startswith("GPU validation: FAILED (0/1")
    assert "workload" not in table[1]
    assert table[-1] == "failure: gpu-0: vectoradd pod Failed"
    assert "Workload checks" not in report_markdown(report)
