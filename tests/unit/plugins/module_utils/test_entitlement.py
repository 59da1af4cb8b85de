# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The entitlement role's decisions and checks (module_utils/entitlement.py; the filters are thin wrappers)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import entitlement as ent

OCP416 = {"openshift": True, "openshift_version": "4.16.0"}
VERSIONS = ["3.1.0", "3.2.0", "3.3.0", "3.4.0"]
GOOD_PEM = {
    "certificates": 1,
    "private_keys": 1,
    "invalid_blocks": 0,
    "errors": [],
    "subject_cn": "cn1",
    "not_after": "2027-01-01",
    "days_left": 300,
    "expired": False,
    "key_matches_certificate": True,
}


def values(**kw):
    out = {
        "entitlement_state": "present",
        "entitlement_enabled": "auto",
        "entitlement_max_unavailable": "",
        "entitlement_ignition_version": "3.2.0",
        "entitlement_rhsm_baseurl": "https://cdn.redhat.com",
        "entitlement_test_enabled": True,
        "entitlement_test_namespace": "gpuops-entitlement-test",
        "entitlement_test_image": "registry.access.redhat.com/ubi9/ubi:latest",
        "entitlement_test_command": ["/bin/sh", "-c", "true"],
        "entitlement_pem_file": "",
        "entitlement_pem": "PEM",
    }
    out.update(kw)
    return out


def problems(**kw):
    skip = kw.pop("skip", False)
    pem = kw.pop("pem", GOOD_PEM)
    return ent.problems(values(**kw), skip=skip, pem=pem, pem_read=True, ignition_versions=VERSIONS)


@pytest.mark.parametrize(
    "platform, state, enabled, mode, reason",
    [
        ({"openshift": False}, "present", True, "entitlement", "plain Kubernetes has no Machine Config Operator"),
        ({"openshift": "False"}, "absent", "auto", "auto", "plain Kubernetes"),
        (OCP416, "absent", False, "auto", ""),
        (OCP416, "present", False, "entitlement", "entitlement_enabled is false"),
        (OCP416, "present", "False", "entitlement", "entitlement_enabled is false"),
        (OCP416, "present", True, "precompiled", ""),
        (OCP416, "present", "auto", "entitlement", ""),
        (OCP416, "present", "auto", "auto", "driver build mode auto on OpenShift 4.16.0 uses the Driver Toolkit"),
        ({"openshift": True, "openshift_version": "4.8.51"}, "present", "auto", "auto", ""),
        ({"openshift": True}, "present", "auto", "auto", "on OpenShift ? uses the Driver Toolkit"),
        (OCP416, "present", "auto", "driver-toolkit", "driver build mode driver-toolkit needs no entitlement"),
    ],
)
def test_skip_reason(platform, state, enabled, mode, reason):
    got = ent.skip_reason(platform, state, enabled, mode, "4.9")
    assert (got == "") if reason == "" else (reason in got), got


def test_skip_reason_says_until_when_entitlement_is_needed():
    got = ent.skip_reason(OCP416, "present", "auto", "auto", "4.9")
    assert got.endswith("(entitlement is only needed before 4.9)"), got


def test_good_inputs_have_no_problem():
    assert problems() == []
    assert problems(entitlement_max_unavailable=3) == []
    assert problems(entitlement_max_unavailable="100%") == []
    assert problems(entitlement_enabled=True) == []


@pytest.mark.parametrize(
    "given, expected",
    [
        ({"entitlement_enabled": "maybe"}, "entitlement: entitlement_enabled must be auto, true or false (got maybe)"),
        ({"entitlement_max_unavailable": 0}, "entitlement: entitlement_max_unavailable 0 is not an integer >= 1"),
        ({"entitlement_max_unavailable": "150%"}, "entitlement: entitlement_max_unavailable 150% is not"),
        (
            {"entitlement_ignition_version": "2.2.0"},
            "entitlement: entitlement_ignition_version 2.2.0 is not one of 3.1.0",
        ),
        (
            {"entitlement_rhsm_baseurl": "cdn.redhat.com"},
            "entitlement: entitlement_rhsm_baseurl must be an http(s) URL",
        ),
        (
            {"entitlement_test_namespace": "Bad_NS"},
            "entitlement: entitlement_test_namespace Bad_NS must be a DNS-1123 label",
        ),
        ({"entitlement_test_image": "not an image"}, "entitlement: entitlement_test_image must be an image reference"),
        ({"entitlement_test_command": []}, "entitlement: entitlement_test_command must not be empty"),
    ],
)
def test_each_bad_input_is_named(given, expected):
    got = problems(**given)
    assert len(got) == 1 and got[0].startswith(expected), got


def test_a_skipped_role_checks_the_switch_only():
    assert problems(skip=True, entitlement_ignition_version="2.2.0", pem={}) == []
    assert problems(skip=True, entitlement_enabled="maybe")[0].startswith("entitlement: entitlement_enabled must be")


def test_absent_checks_neither_the_pem_nor_the_test_pod():
    assert problems(entitlement_state="absent", entitlement_pem="", entitlement_test_namespace="Bad_NS", pem={}) == []


def test_a_disabled_test_pod_is_not_checked():
    assert problems(entitlement_test_enabled=False, entitlement_test_namespace="Bad_NS") == []


@pytest.mark.parametrize(
    "given, info, read, expected",
    [
        ({"entitlement_pem_file": "/f"}, GOOD_PEM, True, "give exactly one of them (the path of the entitlement PEM"),
        ({"entitlement_pem": ""}, {}, False, "the PEM text from a vaulted variable); neither is set."),
        (
            {"entitlement_pem_file": "/x.pem", "entitlement_pem": ""},
            {},
            False,
            "entitlement_pem_file /x.pem cannot be read",
        ),
        (
            {},
            dict(GOOD_PEM, invalid_blocks=1, errors=["CERTIFICATE: bad"]),
            True,
            "entitlement_pem: malformed PEM (CERTIFICATE: bad)",
        ),
        ({}, dict(GOOD_PEM, certificates=0, private_keys=0), True, "no PEM certificate or private key in it"),
        ({}, dict(GOOD_PEM, certificates=0), True, "no certificate in it (only 1 private key(s))"),
        ({}, dict(GOOD_PEM, private_keys=0), True, "no private key in it (only 1 certificate(s))"),
        (
            {},
            dict(GOOD_PEM, key_matches_certificate=False),
            True,
            "the private key does not belong to the certificate cn1",
        ),
        (
            {},
            dict(GOOD_PEM, expired=True, days_left=-10),
            True,
            "the certificate cn1 expired on 2027-01-01 (10 days ago)",
        ),
    ],
)
def test_pem_problems(given, info, read, expected):
    got = ent.pem_problems(values(**given), info, read)
    assert len(got) == 1 and expected in got[0], got
    assert got[0].startswith("entitlement: entitlement_pem")


def test_both_sources_are_named():
    got = ent.pem_problems(values(entitlement_pem_file="/f"), GOOD_PEM, True)
    assert got[0].endswith("; both are set."), got


def test_the_pem_source_is_the_file_when_given():
    assert ent.pem_source(values(entitlement_pem_file="/f")) == "entitlement_pem_file"
    assert ent.pem_source(values()) == "entitlement_pem"


def test_an_unknown_pool_lists_the_pools():
    got = ent.problems(
        values(), pem=GOOD_PEM, pem_read=True, pool="gpu", pools=["master", "worker"], ignition_versions=VERSIONS
    )
    assert got == [
        "entitlement: entitlement_pool gpu is not a MachineConfigPool of this cluster (pools: master, worker). "
        "Give one of them, or auto."
    ]
    assert (
        ent.problems(values(), pem=GOOD_PEM, pem_read=True, pool="worker", pools=["worker"], ignition_versions=VERSIONS)
        == []
    )


# ------------------------------------------------------------------ rollout

RENDERED = "rendered-worker-abc"
WANT = {"/etc/rhsm/rhsm.conf": "UkhTTQ==", "/etc/pki/entitlement/entitlement.pem": "UEVN"}


def pool(updated="True", degraded="False", current=RENDERED, wanted=RENDERED):
    return {
        "spec": {"configuration": {"name": wanted}},
        "status": {
            "configuration": {"name": current},
            "machineCount": 3,
            "updatedMachineCount": 2,
            "conditions": [{"type": "Updated", "status": updated}, {"type": "Degraded", "status": degraded}],
        },
    }


def rendered(files=None):
    files = WANT if files is None else files
    entries = [{"path": p, "contents": {"source": ent.SOURCE_PREFIX + d}} for p, d in files.items()]
    return {"spec": {"config": {"storage": {"files": entries}}}}


def node(name, config=RENDERED, state="Done"):
    ann = {ent.CURRENT_CONFIG: config, ent.NODE_STATE: state} if config else {}
    return {"metadata": {"name": name, "annotations": ann}}


def test_a_rolled_out_pool_has_no_problem():
    assert ent.rollout_problems("worker", pool(), rendered(), [node("a"), node("b")], WANT) == []


@pytest.mark.parametrize(
    "the_pool, expected",
    [
        (
            pool(updated="False"),
            "not Updated (2/3 updated, configuration rendered-worker-abc, wanted rendered-worker-abc; Degraded False)",
        ),
        (pool(degraded="True"), "Degraded True"),
        (pool(current="rendered-worker-old"), "configuration rendered-worker-old, wanted rendered-worker-abc"),
        ({}, "not Updated (0/? updated, configuration none, wanted none; Degraded ?)"),
    ],
)
def test_a_pool_not_updated_is_the_first_problem(the_pool, expected):
    got = ent.rollout_problems("worker", the_pool, {}, [node("a", "x")], WANT)
    assert len(got) == 1 and got[0].startswith("entitlement: MachineConfigPool worker: ") and expected in got[0], got


def test_missing_or_different_files_are_named_in_order():
    files = {"/etc/pki/entitlement/entitlement.pem": "T1RIRVI="}
    got = ent.rollout_problems("worker", pool(), rendered(files), [], WANT)
    assert got == [
        "entitlement: MachineConfigPool worker: rendered config rendered-worker-abc lacks (or has other content in) "
        "/etc/rhsm/rhsm.conf, /etc/pki/entitlement/entitlement.pem."
    ]


def test_lagging_nodes_are_named():
    got = ent.rollout_problems(
        "worker", pool(), rendered(), [node("a"), node("b", "old", "Working"), node("c", None)], WANT
    )
    assert got == [
        "entitlement: node b: runs old (state Working); node c: runs no config (state ?) "
        "(wanted rendered-worker-abc with the entitlement files)."
    ]


def test_object_lines():
    objects = [
        {"kind": "MachineConfig", "name": "50-rhsm-conf", "action": "created"},
        {"kind": "Namespace", "name": "t", "action": "deleted"},
        {"kind": "MachineConfig", "name": "50-entitlement-pem", "action": "unchanged"},
    ]
    assert ent.object_lines(objects) == [
        "entitlement: MachineConfig 50-rhsm-conf: created",
        "entitlement: Namespace t: deleted",
        "entitlement: MachineConfig 50-entitlement-pem: unchanged",
    ]
    assert ent.object_lines(objects, True)[:2] == [
        "entitlement: MachineConfig 50-rhsm-conf: would be created",
        "entitlement: Namespace t: would be deleted",
    ]
    assert ent.object_lines(None) == []


# --------------------------------------------------------------- pool, plan


def mcp(name, machines, max_unavailable=None, selector=None):
    spec = {"nodeSelector": {"matchLabels": selector or {"node-role.kubernetes.io/" + name: ""}}}
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    return {"metadata": {"name": name}, "spec": spec, "status": {"machineCount": machines}}


def test_auto_takes_worker_when_it_has_machines_else_master():
    pools = [mcp("master", 3), mcp("worker", 2)]
    got = ent.choose_pool(pools)
    assert got["name"] == "worker" and got["object"] is pools[1] and got["names"] == ["master", "worker"]
    assert got["node_selector"] == {"node-role.kubernetes.io/worker": ""}
    assert ent.choose_pool([mcp("master", 3), mcp("worker", 0)])["name"] == "master"
    assert ent.choose_pool([mcp("master", 1)])["name"] == "master"


def test_a_named_pool_is_taken_as_given_even_when_missing():
    assert ent.choose_pool([mcp("worker", 2)], "gpu") == {
        "name": "gpu",
        "object": {},
        "node_selector": {},
        "names": ["worker"],
    }


def test_max_unavailable_is_an_int_or_a_percentage():
    assert ent.max_unavailable(3) == 3 and ent.max_unavailable("3") == 3 and ent.max_unavailable("25%") == "25%"


def test_the_plan_line():
    pool = ent.choose_pool([mcp("worker", 3)])
    got = ent.plan_line(pool, "present", 3, GOOD_PEM, "", 30, True)
    assert got == (
        "entitlement: would entitle pool worker (3 machines, maxUnavailable 1 (unset) -> 3); certificate cn1 valid until"
        " 2027-01-01 (300 days); the pool rolls out, then the test pod runs (not in check mode)"
    )
    pool = ent.choose_pool([mcp("worker", 3, max_unavailable=2)])
    assert (
        ent.plan_line(pool, "absent", 3)
        == "entitlement: remove the entitlement from pool worker (3 machines, maxUnavailable 2)"
    )


def test_the_plan_warns_inside_the_expiry_window():
    pool = ent.choose_pool([mcp("worker", 3)])
    got = ent.plan_line(pool, "present", "", dict(GOOD_PEM, days_left=10), "/x.pem", 30)
    assert got.endswith(
        "(10 days); WARNING entitlement_pem_file: the certificate expires within entitlement_expiry_warn_days=30 days,"
        " and driver builds fail once it has expired"
    ), got
    assert "WARNING" not in ent.plan_line(pool, "present", "", dict(GOOD_PEM, days_left=30), "", 30)
