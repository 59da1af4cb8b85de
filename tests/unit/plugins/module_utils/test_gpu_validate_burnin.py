# -*- coding: utf-8 -*-
"""gpu_validate's burn-in: the dcgmi diag command and its JSON read per GPU (DCGM 3.x and 4.x shapes).

Fixtures (fixtures/): dcgm3-diag-r3-all-skipped.json is DCGM 3.x output as posted in NVIDIA/DCGM#139 (the
reporter's Deployment placeholder and the cut-off tail removed); dcgm4-diag-r2-gpu1-memory-fail.json is DCGM 4.2.3's
shape reconstructed from its source (dcgmi/Diag.cpp HelperJsonBuildOutput), the warning DCGM_FR_MEMORY_MISMATCH's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.burnin import command, judge, parse

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def fixture(name):
    with open(os.path.join(HERE, name)) as handle:
        return handle.read()


DCGM3_SKIPPED = fixture("dcgm3-diag-r3-all-skipped.json")
DCGM4_FAIL = fixture("dcgm4-diag-r2-gpu1-memory-fail.json")


def passing_dcgm4():
    doc = json.loads(DCGM4_FAIL)
    for category in doc["DCGM Diagnostic"]["test_categories"]:
        for test in category["tests"]:
            for result in test["results"]:
                result["status"] = "Pass"
                result.pop("warnings", None)
    return json.dumps(doc, indent="\t")


def test_the_command_sets_the_stress_durations_only_where_they_run():
    assert command(2, 60) == ["dcgmi", "diag", "-r", "2", "-j"]
    assert command(3, 60) == [
        "dcgmi",
        "diag",
        "-r",
        "3",
        "-j",
        "-p",
        "diagnostic.test_duration=60;targeted_stress.test_duration=60;targeted_power.test_duration=60",
    ]
    assert command(1) == ["dcgmi", "diag", "-r", "1", "-j"]


def test_dcgm4_a_failed_gpu_is_named_with_its_test_and_the_warning():
    parsed = parse(DCGM4_FAIL)
    assert parsed["version"] == "4.2.3" and parsed["tests"] == ["software", "memory", "pcie"]
    ok, message, gpus = judge(DCGM4_FAIL, 2)
    assert not ok
    assert message == (
        "dcgmi diag -r 2 (DCGM 4.2.3): GPU 1 failed memory: A memory mismatch was detected on GPU 1, but no error "
        "was reported by CUDA or NVML. Run a field diagnostic on the GPU."
    )
    assert [(g["gpu"], g["result"]) for g in gpus] == [("0", "pass"), ("1", "fail")]
    assert gpus[0]["passed"] == ["memory", "pcie", "software"] and gpus[1]["failed"][0]["category"] == "Hardware"


def test_dcgm4_every_gpu_passing_passes():
    ok, message, gpus = judge(passing_dcgm4(), 2)
    assert ok and message == "dcgmi diag -r 2 (DCGM 4.2.3): 2 GPU(s) passed software, memory, pcie"
    assert all(g["result"] == "pass" for g in gpus)


def test_dcgm3_a_gpu_on_which_every_test_was_skipped_is_not_burned_in():
    ok, message, gpus = judge(DCGM3_SKIPPED, 3)
    assert not ok and message == "dcgmi diag -r 3: GPU 0 ran no test (every test skipped)"
    assert gpus == [{"gpu": "0", "result": "skipped", "passed": [], "failed": []}]


def test_dcgm3_gpu_ids_and_a_failed_deployment_check_without_a_gpu():
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {
                    "category": "Deployment",
                    "tests": [
                        {"name": "Denylist", "results": [{"status": "Pass"}]},
                        {
                            "name": "Persistence Mode",
                            "results": [
                                {
                                    "status": "Fail",
                                    "warnings": [{"warnings": "Persistence mode for GPU 0 is disabled."}],
                                }
                            ],
                        },
                    ],
                },
                {
                    "category": "Hardware",
                    "tests": [{"name": "GPU Memory", "results": [{"gpu_id": "0", "status": "Pass"}]}],
                },
            ]
        },
        "version": "3.3.8",
    }
    ok, message, gpus = judge("Running diag...\n" + json.dumps(doc), 1)
    assert not ok and gpus[0]["result"] == "fail"
    assert (
        message
        == "dcgmi diag -r 1 (DCGM 3.3.8): GPU 0 failed Persistence Mode: Persistence mode for GPU 0 is disabled."
    )


def test_output_that_is_not_a_diagnostic_is_said_so():
    assert judge("Error: Unable to start an embedded host engine.", 1)[:2] == (
        False,
        "dcgmi diag -r 1 gave no diagnostic JSON (no JSON in the output)",
    )
    error = json.dumps(
        {"DCGM Diagnostic": {"runtime_error": "GPU 2's MIG configuration is incompatible", "version": "4.2.3"}}
    )
    assert judge(error, 2)[1] == "dcgmi diag -r 2 (DCGM 4.2.3) could not run: GPU 2's MIG configuration is incompatible"
    assert judge('{"other": 1}', 1)[1].startswith("dcgmi diag -r 1 gave no diagnostic JSON (no 'DCGM Diagnostic'")


def test_lines_around_the_json_do_not_hide_it():
    text = "Running the diagnostic...\n" + DCGM4_FAIL + "Error: Unable to complete diagnostic for group 2147483647.\n"
    assert judge(text, 2)[1].startswith("dcgmi diag -r 2 (DCGM 4.2.3): GPU 1 failed memory")
    assert judge("{not json} " + passing_dcgm4(), 2)[0]


def test_dcgm3_level_1_passes_on_deployment_checks_that_name_no_gpu():
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {
                    "category": "Deployment",
                    "tests": [
                        {"name": "Denylist", "results": [{"status": "Pass"}]},
                        {"name": "NVML Library", "results": [{"status": "Pass"}]},
                    ],
                }
            ]
        },
        "version": "3.3.8",
    }
    assert judge(json.dumps(doc), 1)[:2] == (True, "dcgmi diag -r 1 (DCGM 3.3.8): passed Denylist, NVML Library")


def test_a_log_that_could_not_be_read_is_named_when_the_termination_message_is_all_there_is():
    """The termination message holds only the output's last lines (the kubelet's 2,048 bytes / 80 lines; the
    simulator's 20 lines): no diagnostic JSON in it, and the verdict says the log was not read, and why."""
    from ansible_collections.gpuops.cluster.plugins.module_utils.gpu_validate.checks import check_workload

    tail = "\n".join(DCGM4_FAIL.splitlines()[-20:])
    pod = {
        "status": {
            "phase": "Failed",
            "containerStatuses": [{"state": {"terminated": {"exitCode": 205, "message": tail}}}],
        }
    }
    res = check_workload("burnin", pod, None, burnin_level=2, log_error="(500) Internal Server Error: timeout")
    assert res["status"] == "fail" and res["message"].startswith("burn-in: dcgmi diag -r 2 gave no diagnostic JSON")
    assert res["message"].endswith(
        " (its log could not be read: (500) Internal Server Error: timeout; judged on the termination message)"
    )
    # Read: judged on the whole output, no word about the termination message.
    res = check_workload("burnin", pod, DCGM4_FAIL, burnin_level=2, log_error=None)
    assert "GPU 1 failed memory" in res["message"] and "termination" not in res["message"]
