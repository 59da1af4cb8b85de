# -*- coding: utf-8 -*-
"""The simulator's DCGM diagnostics (dcgmi diag -r N -j): DCGM 4.x's JSON as jsoncpp writes it, read back by the
collection's burn-in parser, and dcgmi's exit status."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from simopenshift import gpustack

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.burnin import judge, parse


def test_each_level_runs_its_tests_on_every_gpu():
    out, code = gpustack.dcgm_diag(2, 1)
    assert code == 0 and parse(out)["tests"] == ["software"]
    out, code = gpustack.dcgm_diag(8, 3)
    parsed = parse(out)
    assert code == 0 and set(parsed["tests"]) == {
        "software", "pcie", "memory", "diagnostic", "targeted_stress", "targeted_power", "memory_bandwidth",
    }  # fmt: skip
    assert sorted(parsed["gpus"], key=int) == [str(i) for i in range(8)] and parsed["version"] == gpustack.DCGM_VERSION
    assert judge(out, 3)[0]


def test_a_failing_gpu_fails_the_memory_test_and_dcgmi_exits_205():
    out, code = gpustack.dcgm_diag(4, 2, failing=2)
    assert code == 205
    ok, message, gpus = judge(out, 2)
    assert not ok and [g["gpu"] for g in gpus if g["result"] == "fail"] == ["2"]
    assert "GPU 2 failed memory: A memory mismatch was detected on GPU 2" in message


def test_the_json_is_written_as_jsoncpp_writes_it():
    out, dummy = gpustack.dcgm_diag(1, 2)
    lines = out.splitlines()
    assert lines[0] == "{" and lines[1] == '\t"DCGM Diagnostic" : ' and lines[2] == "\t{"
    assert '\t\t\t\t\t\t"name" : "software",' in lines
    doc = json.loads(out)
    assert list(doc) == sorted(doc) and doc["metadata"]["Driver Version Detected"] == "595.91.07"


def test_the_level_comes_from_the_command():
    pod = {"spec": {"containers": [{"command": ["dcgmi", "diag", "-r", "3", "-j"]}]}}
    assert gpustack.dcgm_command_level(pod) == 3 and gpustack.workload_kind(pod) == "dcgm-diag"
