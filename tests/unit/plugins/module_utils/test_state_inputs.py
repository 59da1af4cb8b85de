# -*- coding: utf-8 -*-
"""state_inputs (module_utils of the filter): what a state is given, digested; the run's own steering does not count."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.state_inputs import collection_digest, state_inputs


def by_name(result):
    return dict((r["name"], r["inputs"]) for r in result)


def test_a_state_sees_its_own_and_the_global_variables_only():
    base = {"gpuops_expected_gpu_nodes": 2, "driver_version": "570", "device_plugin_time_slicing_replicas": 4}
    one = by_name(state_inputs(["driver", "device_plugin"], base))
    plugin = by_name(state_inputs(["driver", "device_plugin"], dict(base, device_plugin_time_slicing_replicas=2)))
    assert plugin["driver"] == one["driver"] and plugin["device_plugin"] != one["device_plugin"]
    wider = by_name(state_inputs(["driver", "device_plugin"], dict(base, gpuops_expected_gpu_nodes=3)))
    assert wider["driver"] != one["driver"] and wider["device_plugin"] != one["device_plugin"]


def test_steering_the_run_changes_no_digest():
    base = {"gpuops_expected_gpu_nodes": 2, "driver_version": "570"}
    steered = dict(base, gpuops_from_state="driver", gpuops_reports_dir="/tmp/r", gpuops_ledger=False, gpuops_marks=[1])
    assert state_inputs(["driver"], steered) == state_inputs(["driver"], base)


def test_a_state_s_patience_changes_no_digest_what_it_makes_does():
    base = {"driver_version": "570", "driver_wait_timeout": 600, "driver_upgrade_delete_after_timeout": False}
    patient = dict(base, driver_wait_timeout=1200, driver_build_timeout=3600, driver_upgrade_drain_timeout=900)
    assert state_inputs(["driver"], patient) == state_inputs(["driver"], base)
    nfd = {"nfd_wait_timeout": 120, "nfd_wait_sleep": 5, "nfd_version": "v0.19.0"}
    assert state_inputs(["nfd"], dict(nfd, nfd_wait_sleep=2)) == state_inputs(["nfd"], nfd)
    # A policy (delete what a drain leaves) and an image are what the state does: they count.
    assert state_inputs(["driver"], dict(base, driver_upgrade_delete_after_timeout=True)) != state_inputs(
        ["driver"], base
    )
    plugin = {"device_plugin_wait_image": "a:1"}
    assert state_inputs(["device_plugin"], {"device_plugin_wait_image": "a:2"}) != state_inputs(
        ["device_plugin"], plugin
    )


def test_the_collection_files_are_in_the_digest(tmp_path):
    (tmp_path / "roles" / "driver").mkdir(parents=True)
    (tmp_path / "roles" / "driver" / "defaults.yml").write_text("driver_version: '570'\n")
    (tmp_path / "plugins").mkdir()
    first = collection_digest(str(tmp_path))
    assert collection_digest(str(tmp_path)) == first
    (tmp_path / "roles" / "driver" / "defaults.yml").write_text("driver_version: '580'\n")
    assert collection_digest(str(tmp_path)) != first
    os.makedirs(str(tmp_path / "plugins" / "__pycache__"))
    second = collection_digest(str(tmp_path))
    (tmp_path / "plugins" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert collection_digest(str(tmp_path)) == second


def test_bad_input_is_refused():
    with pytest.raises(GpuopsError):
        state_inputs("driver", {})
