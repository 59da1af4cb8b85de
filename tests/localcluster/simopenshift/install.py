# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Install the simulated OpenShift layer: CRDs, then the seed objects.

``install(api_client)`` is idempotent: CRDs are created or updated in one pass
and waited for (Established) together; seed objects are created only when
missing, so a re-run on a live cluster changes nothing the controllers or a
test made. ``wait_ready(api_client)`` returns once the seeded nodes are Ready
and the controllers process has reported in (ConfigMap
``kube-system/simopenshift``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import logging
import os
import time

import yaml
from kubernetes.client.rest import ApiException

from simopenshift import apis, catalog, machineapi, mco, olm, seed
from simopenshift import scc as sccadmission
from simopenshift.kube import (
    CLUSTERROLEBINDINGS,
    CLUSTERROLES,
    CONFIGMAPS,
    CRDS,
    NAMESPACES,
    NODES,
    SECRETS,
    SERVICEACCOUNTS,
    VALIDATINGADMISSIONPOLICIES,
    VALIDATINGADMISSIONPOLICYBINDINGS,
    Client,
    meta,
    name_of,
    node_ready,
)

LOG = logging.getLogger("simopenshift.install")
CRD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crds")
STATUS_CONFIGMAP = ("kube-system", "simopenshift")


def crd_documents(include_openshift=True):
    docs = []
    for path in sorted(glob.glob(os.path.join(CRD_DIR, "*.yaml"))):
        if not include_openshift and "kwok.x-k8s.io" not in path:
            continue
        with open(path) as handle:
            docs.extend(d for d in yaml.safe_load_all(handle) if d)
    return docs


def established(crd):
    for cond in (crd.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Established" and cond.get("status") == "True":
            return True
    return False


def apply_crds(client, docs, timeout=30):
    """Create/update all CRDs, then wait until every one is Established."""
    for doc in docs:
        try:
            client.create(CRDS, doc)
        except ApiException as exc:
            if exc.status != 409:
                raise
            live = client.get(CRDS, name_of(doc))
            if live is not None and live.get("spec") != doc.get("spec"):
                # Updating a CRD keeps stored objects; only the schema/printing changes.
                doc = dict(doc, metadata=dict(doc["metadata"], resourceVersion=meta(live)["resourceVersion"]))
                try:
                    client.replace(CRDS, doc)
                except ApiException as exc2:
                    if exc2.status != 409:
                        raise
    wanted = {name_of(d) for d in docs}
    deadline = time.time() + timeout
    while True:
        items, _ignored = client.list(CRDS)
        ready = {name_of(c) for c in items if established(c)}
        missing = wanted - ready
        if not missing:
            return
        if time.time() > deadline:
            raise RuntimeError("CRDs not Established after %ss: %s" % (timeout, sorted(missing)))
        time.sleep(0.1)


def ensure(client, res, body, status=None):
    """Create unless present. Returns (object, created); sets status on creation."""
    try:
        obj = client.create(res, body)
    except ApiException as exc:
        if exc.status != 409:
            raise
        return client.get(res, name_of(body), body["metadata"].get("namespace")), False
    status = status if status is not None else body.get("status")
    if status and res is not NODES:
        obj = client.patch(
            res, name_of(obj), {"status": status}, body["metadata"].get("namespace"), subresource="status"
        )
    return obj, True


def _retry_conflicts(fn, attempts=20):
    """Retry while the apiserver has not yet caught up with new CRDs (404/409 races)."""
    for attempt in range(attempts):
        try:
            return fn()
        except ApiException as exc:
            if exc.status not in (404, 409, 429, 500, 503) or attempt == attempts - 1:
                raise
            time.sleep(0.1 * (attempt + 1))
    return None


def install(api_client, with_seed=True, crd_timeout=30, openshift_version=None):
    """Install CRDs (+ seed objects). Safe to call again on a running cluster.

    ``openshift_version`` ("4.16", "4.19", ...; default 4.16) picks the release the
    seed objects describe (catalog.release_build).
    """
    client = Client(api_client)
    release = catalog.release_build(openshift_version or catalog.DEFAULT_OPENSHIFT_VERSION)
    t0 = time.time()
    apply_crds(client, crd_documents(), crd_timeout)
    LOG.info("CRDs established in %.1fs", time.time() - t0)
    if with_seed:
        _retry_conflicts(lambda: seed_cluster(client, release))
    LOG.info("simulated OpenShift installed in %.1fs", time.time() - t0)


def install_kwok_logs_crd(api_client, timeout=30):
    """Only kwok's Logs CRD (plain-Kubernetes profile: pods/log for agent-owned pods)."""
    apply_crds(Client(api_client), crd_documents(include_openshift=False), timeout)


def seed_cluster(client, release=None):
    release = release or catalog.cluster_build()
    for name in seed.NAMESPACES:
        ensure(client, NAMESPACES, seed.namespace(name))
    ensure(client, apis.INFRASTRUCTURES, seed.infrastructure())
    ensure(client, apis.CLUSTERVERSIONS, seed.cluster_version(release))
    ensure(client, SECRETS, seed.pull_secret())
    for scc in seed.sccs():
        ensure(client, apis.SCCS, scc)
        ensure(client, CLUSTERROLES, sccadmission.cluster_role(name_of(scc)))
    for crb in sccadmission.cluster_role_bindings():
        ensure(client, CLUSTERROLEBINDINGS, crb)
    # SCC admission (openshift profile only: seed_cluster does not run for the kubernetes one).
    ensure(client, VALIDATINGADMISSIONPOLICIES, sccadmission.policy(seed.sccs()))
    ensure(client, VALIDATINGADMISSIONPOLICYBINDINGS, sccadmission.binding())

    # Machine configs first: nodes boot with their pool's rendered config.
    configs = {}
    for role in ("master", "worker"):
        pool_body = seed.pool(role)
        for mc in seed.base_machineconfigs(role, release):
            ensure(client, apis.MACHINECONFIGS, mc)
        pool_obj, _ignored = ensure(client, apis.MACHINECONFIGPOOLS, pool_body)
        current = ((pool_obj.get("spec") or {}).get("configuration") or {}).get("name")
        if not current:
            rendered, sources = mco.render(pool_obj, seed.base_machineconfigs(role, release))
            ensure(client, apis.MACHINECONFIGS, rendered)
            current = name_of(rendered)
            configuration = {"name": current, "source": sources}
            client.patch(apis.MACHINECONFIGPOOLS, role, {"spec": {"configuration": configuration}})
        configs[role] = current

    build = release
    for index, zone in enumerate(seed.ZONES):
        machine = seed.master_machine(index, zone, release)
        _machine_with_node(client, machine, build, configs["master"])
    for zone in seed.ZONES:
        ms_body = seed.worker_machineset(zone, release=release)
        ms_body["metadata"]["annotations"] = machineapi.machineset_annotations(ms_body)
        ms, created = ensure(client, apis.MACHINESETS, ms_body, status={})
        if not created:
            continue
        machine = machineapi.machine_from_machineset(ms, "%s-%s" % (name_of(ms), seed.machine_suffix(name_of(ms))))
        _machine_with_node(client, machine, build, configs["worker"])
        client.patch(
            apis.MACHINESETS,
            name_of(ms),
            {
                "status": {
                    "replicas": 1,
                    "fullyLabeledReplicas": 1,
                    "readyReplicas": 1,
                    "availableReplicas": 1,
                    "observedGeneration": meta(ms).get("generation"),
                    "labelSelector": machineapi.selector_string(ms["spec"]["selector"]),
                }
            },
            apis.MACHINE_API_NS,
            subresource="status",
        )

    ensure(client, apis.IMAGESTREAMS, seed.dtk_imagestream(release), status=_dtk_status(release))
    for name in sorted(olm.CATALOGS):
        body = seed.catalog_source(name)
        ensure(client, apis.CATALOGSOURCES, body, status=olm.catalog_source_status(body))
    for package in sorted(olm.PACKAGES):
        ensure(client, apis.PACKAGEMANIFESTS, olm.package_manifest(package, release.ocp))
    ensure(
        client,
        apis.OPERATORGROUPS,
        seed.global_operators_group(),
        status={"namespaces": [""], "lastUpdated": "2026-01-05T09:12:44Z"},
    )


def _dtk_status(release=None):
    body = seed.dtk_imagestream(release)
    stamp = "2026-01-05T08:40:00Z"
    tags = []
    for tag in body["spec"]["tags"]:
        ref = tag["from"]["name"]
        tags.append(
            {
                "tag": tag["name"],
                "items": [
                    {"created": stamp, "dockerImageReference": ref, "image": ref.split("@", 1)[1], "generation": 2}
                ],
            }
        )
    return {"dockerImageRepository": "%s/openshift/driver-toolkit" % catalog.INTERNAL_REGISTRY, "tags": tags}


def _machine_with_node(client, machine, build, config):
    mpatch, spatch, status = machineapi.provisioned_fields(machine)
    machine["metadata"]["labels"].update(mpatch["labels"])
    machine["metadata"].setdefault("annotations", {}).update(mpatch["annotations"])
    machine["spec"].update(spatch)
    obj, created = ensure(client, apis.MACHINES, machine, status={})
    if not created:
        return
    node_body = machineapi.node_from_machine(obj, build, config)
    try:
        node = client.create(NODES, node_body)
    except ApiException as exc:
        if exc.status != 409:
            raise
        node = client.get(NODES, name_of(node_body))
    status["phase"] = "Running"
    status["nodeRef"] = {"kind": "Node", "name": name_of(node), "uid": meta(node).get("uid")}
    status["lastUpdated"] = "2026-01-05T08:52:10Z"
    client.patch(apis.MACHINES, name_of(obj), {"status": status}, apis.MACHINE_API_NS, subresource="status")


def seeded_node_names(client):
    items, _ignored = client.list(apis.MACHINES, apis.MACHINE_API_NS)
    return [
        ((m.get("status") or {}).get("nodeRef") or {}).get("name")
        for m in items
        if ((m.get("status") or {}).get("nodeRef") or {}).get("name")
    ]


def wait_ready(api_client, timeout=40, need_controllers=True):
    """Block until seeded nodes are Ready and the controllers process reported in."""
    client = Client(api_client)
    deadline = time.time() + timeout
    names = set(seeded_node_names(client))
    pending, controllers, missing = names, not need_controllers, []
    while time.time() < deadline:
        items, _ignored = client.list(NODES)
        pending = names - {name_of(n) for n in items if node_ready(n)}
        if need_controllers and not controllers:
            cm = client.get(CONFIGMAPS, STATUS_CONFIGMAP[1], STATUS_CONFIGMAP[0])
            controllers = bool(cm and (cm.get("data") or {}).get("ready") == "true")
        if not pending and controllers:
            missing = default_service_accounts_missing(client) if need_controllers else []
            if not missing:
                return
        time.sleep(0.2)
    raise RuntimeError(
        "simulated OpenShift not ready after %ss (nodes not Ready: %s; controllers reported: %s; default "
        "ServiceAccounts missing: %s)" % (timeout, sorted(pending), controllers, missing[:5])
    )


def default_service_accounts_missing(client):
    """namespace/name of the builder and deployer ServiceAccounts a namespace lacks.

    An installed OpenShift has them in every namespace (openshift-controller-manager); the simulated
    controller makes them after it reports ready, so "ready" waits for them: a test that takes an
    inventory of a fresh cluster must not see them appear later.
    """
    namespaces = [
        name_of(n) for n in client.list(NAMESPACES)[0] if (n.get("status") or {}).get("phase") != "Terminating"
    ]
    have = set("%s/%s" % (meta(sa).get("namespace"), name_of(sa)) for sa in client.list(SERVICEACCOUNTS)[0])
    return ["%s/%s" % (ns, sa) for ns in namespaces for sa in ("builder", "deployer") if "%s/%s" % (ns, sa) not in have]
