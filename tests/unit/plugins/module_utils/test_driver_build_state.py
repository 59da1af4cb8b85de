# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import params as params_
from ansible_collections.gpuops.cluster.plugins.module_utils.driver_build import render, state
from ansible_collections.gpuops.cluster.tests.unit.plugins.module_utils.driver_build_fixtures import (
    IS,
    K414,
    K416,
    info416,
    mk_build,
    params,
)

# --- build state / decision ----------------------------------------------------


def test_next_build_number():
    assert state.next_build_number({"status": {"lastVersion": 4}}, [mk_build(2, "Complete")]) == 5
    assert state.next_build_number(None, [mk_build(2, "Complete"), mk_build(7, "Failed")]) == 8
    assert state.next_build_number({}, []) == 1


def test_decide_missing_image_builds():
    assert state.decide(False, [], "H", "T")[0] == "build"


def test_decide_current_when_last_complete_has_hash():
    action, build, why = state.decide(True, [mk_build(1, "Complete")], "H", "T")
    assert action == "current" and build["metadata"]["name"] == "bc-1"


def test_decide_inputs_changed():
    action, _build, why = state.decide(True, [mk_build(1, "Complete", h="OLD")], "H", "T")
    assert action == "build" and "inputs changed" in why


def test_decide_waits_for_running_build_with_same_inputs():
    action, build, _why = state.decide(False, [mk_build(2, "Running"), mk_build(1, "Failed")], "H", "T")
    assert action == "wait" and build["metadata"]["name"] == "bc-2"


def test_decide_running_build_with_other_inputs_is_not_waited_for():
    assert state.decide(False, [mk_build(2, "Running", h="OLD")], "H", "T")[0] == "build"


def test_decide_retries_after_failure():
    builds = state.builds_for([mk_build(1, "Complete", h="OLD"), mk_build(2, "Failed")], "bc")
    action, _build, why = state.decide(True, builds, "H", "T")
    assert action == "build" and "retrying after bc-2 Failed" in why


def test_decide_ignores_builds_of_other_tags():
    # the newest Complete build wrote another tag (other driver version): this tag's own record counts
    builds = state.builds_for(
        [mk_build(1, "Complete", h="H", tag="T"), mk_build(2, "Complete", h="OTHER", tag="U")], "bc"
    )
    assert state.decide(True, builds, "H", "T")[0] == "current"


def test_decide_pruned_history():
    assert state.decide(True, [], "H", "T", bc_hash="H")[0] == "current"
    assert state.decide(True, [], "H", "T", bc_hash="OLD")[0] == "build"


def test_builds_for_sorts_newest_first():
    got = state.builds_for(
        [mk_build(1, "Complete"), mk_build(10, "Failed"), mk_build(2, "New"), mk_build(3, "New", bc="other")], "bc"
    )
    assert [x["metadata"]["name"] for x in got] == ["bc-10", "bc-2", "bc-1"]


# --- image stream / stale --------------------------------------------------------


def test_imagestream_tags_and_reference():
    tags = state.imagestream_tags(IS)
    assert set(tags) == {"550.90.07-{0}-rhcos4.16".format(K416), "550.90.07-{0}-rhcos4.14".format(K414)}
    cfg = params_.validate_params(params())
    ref, digest = state.image_reference(IS, cfg, "550.90.07-{0}-rhcos4.16".format(K416))
    assert ref == IS["status"]["dockerImageRepository"] + ":550.90.07-{0}-rhcos4.16".format(K416)
    assert digest.endswith("a" * 64)
    ref, digest = state.image_reference(None, cfg, "t")
    assert (
        ref == "image-registry.openshift-image-registry.svc:5000/nvidia-gpu-operator/nvidia-gpu-driver:t"
        and digest is None
    )


def test_find_stale():
    cfg = params_.validate_params(params())
    bc416 = render.render_buildconfig(cfg, K416, info416(), "driver-toolkit")
    bc414 = render.render_buildconfig(cfg, K414, info416(os_tag="rhcos4.14"), "driver-toolkit")
    stale = state.find_stale([bc416, bc414], {K416: {}}, IS)
    assert stale == [
        {"kernel": K414, "buildconfig": bc414["metadata"]["name"], "tags": ["550.90.07-{0}-rhcos4.14".format(K414)]}
    ]
    assert state.find_stale([bc416, bc414], {K416: {}, K414: {}}, IS) == []
    assert state.find_stale([{"metadata": {"name": "foreign"}}], {}, IS) == []


# --- failures / misc ---------------------------------------------------------------


def test_describe_build_failure_uses_status_and_snippet():
    build = mk_build(1, "Failed")
    build["metadata"]["annotations"][render.KERNEL_KEY] = K416
    build["status"].update(
        reason="DockerBuildFailed",
        message="Docker build strategy has failed.",
        logSnippet="line1\nerror: KERNEL_VERSION mismatch",
    )
    text = state.describe_build_failure(build)
    assert text.startswith(
        "build bc-1 (kernel {0}) Failed: DockerBuildFailed: Docker build strategy has failed.".format(K416)
    )
    assert "error: KERNEL_VERSION mismatch" in text
    build["status"].pop("logSnippet")
    assert "from pod" in state.describe_build_failure(build, "from pod")


def test_summarize_builds():
    assert (
        state.summarize_builds([mk_build(1, "Running"), mk_build(2, "Running"), mk_build(3, "Complete")])
        == "1 Complete, 2 Running"
    )
