# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import kube
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params as params_
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import plan, runner
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.driver_build_fixtures import (
    K416,
    info416,
    params,
)


def test_resolve_strategy():
    assert plan.resolve_strategy("auto", True) == "driver-toolkit"
    assert plan.resolve_strategy("auto", False) == "runtime-compiled"
    with pytest.raises(GpuopsError) as err:
        plan.resolve_strategy("driver-toolkit", False)
    assert err.value.param == "strategy"


def test_run_precompiled():
    cfg = params_.validate_params(params(strategy="precompiled", driver_version="550"))
    result = plan.plan_precompiled(cfg, {K416: info416()}, {"images": {}, "kernels": {}})
    assert result["images"] == {K416: "nvcr.io/nvidia/driver:550-{0}-rhcos4.16".format(K416)}
    assert result["kernels"][K416]["action"] == "precompiled"


def test_applied_is_the_server_copy_with_our_fields():
    """The diff's 'after': the object as our server-side apply leaves it (ansible-core's dict_merge)."""
    before = {
        "kind": "BuildConfig",
        "metadata": {"name": "x", "resourceVersion": "1", "annotations": {"a": "1", "other": "kept"}},
        "spec": {"v": 1},
        "status": {"s": 1},
    }
    desired = {"kind": "BuildConfig", "metadata": {"name": "x", "annotations": {"a": "2"}}, "spec": {"v": 1}}
    after = runner._applied(before, desired)
    assert "status" not in after and after["metadata"]["annotations"] == {"a": "2", "other": "kept"}
    d = kube.diff_entry("BuildConfig ns/x", before, after)
    assert d["before"]["metadata"]["annotations"]["a"] == "1" and d["after"]["metadata"]["annotations"]["a"] == "2"
    assert "status" not in d["before"] and "resourceVersion" not in d["before"]["metadata"]
    assert kube.diff_entry("BuildConfig ns/x", before, runner._applied(before, {"spec": {"v": 1}})) is None
    created = kube.diff_entry("ImageStream ns/x", None, runner._applied(None, desired))
    assert created["before"] == {} and created["after"]["metadata"]["name"] == "x"
