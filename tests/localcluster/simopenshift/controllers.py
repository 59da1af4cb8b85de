# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Run the simulated controllers in one process.

    python -m simopenshift.controllers --kubeconfig PATH --profile openshift|kubernetes --workdir DIR
        [--phase-seconds 1.0] [--log-level INFO]

``openshift`` runs everything (machine-api, MCO, NFD operator and worker, OLM,
builds and image streams, GPU node agent, GPU Operator); ``kubernetes`` only what
runs on nodes (GPU node agent, nfd-worker labelling) and the GPU Operator (its
Helm chart's Deployment), none of which needs an OpenShift CRD.
Watches survive apiserver restarts (kube.Informer). Once every informer has
synced, the ConfigMap ``kube-system/simopenshift`` says ``ready: "true"``.
SIGTERM/SIGINT stop the process.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import logging
import os
import signal
import sys
import threading
import time

from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

if __package__ in (None, ""):  # run as a script: make the package importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from simopenshift import (  # noqa: E402
    agent,
    builds,
    catalog,
    gpuoperator,
    install,
    leases,
    machineapi,
    mco,
    nfd,
    olm,
    podsim,
)
from simopenshift.kube import CONFIGMAPS, Manager, Timing, now_rfc3339  # noqa: E402

# The GPU Operator's controller runs on both: OLM installs it on OpenShift, its Helm chart on Kubernetes.
NODE_CONTROLLERS = [agent.NodeAgent, nfd.WorkerController, gpuoperator.OperatorController, leases.LeaseKeeper]
OPENSHIFT_CONTROLLERS = [
    machineapi.MachineSetController,
    machineapi.MachineController,
    machineapi.MachineAutoscalerController,
    mco.RenderController,
    mco.DaemonController,
    mco.KubeletConfigController,
    nfd.OperatorController,
    olm.SubscriptionController,
    olm.InstallPlanController,
    olm.CSVController,
    olm.OperatorGroupController,
    olm.CatalogSourceController,
    builds.BuildController,
    builds.BuildConfigController,
    builds.ImageStreamController,
    builds.ServiceAccountsController,
]


def api_client(kubeconfig):
    cfg = k8s_client.Configuration()
    k8s_config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    # One long-lived watch connection per informer plus the writers.
    cfg.connection_pool_maxsize = 64
    return k8s_client.ApiClient(cfg)


def report_ready(manager, profile):
    namespace, name = install.STATUS_CONFIGMAP
    body = {
        "metadata": {"name": name, "namespace": namespace},
        "data": {
            "ready": "true",
            "profile": profile,
            "pid": str(os.getpid()),
            "since": now_rfc3339(),
            "phaseSeconds": str(manager.timing.phase),
        },
    }
    for _ignored in range(50):
        try:
            if manager.client.get(CONFIGMAPS, name, namespace) is None:
                manager.client.create(CONFIGMAPS, body)
            else:
                manager.client.patch(CONFIGMAPS, name, {"data": body["data"]}, namespace)
            return
        except Exception as exc:  # apiserver briefly unavailable
            logging.getLogger("simopenshift").warning("cannot report readiness yet: %s", exc)
            time.sleep(0.5)


def build_manager(api, profile, workdir, phase_seconds):
    manager = Manager(api, Timing(phase_seconds), workdir=workdir, profile=profile)
    classes = list(NODE_CONTROLLERS)
    if profile == "openshift":
        classes += OPENSHIFT_CONTROLLERS
    for cls in classes:
        manager.add(cls)
    return manager


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--profile", choices=["openshift", "kubernetes"], default="openshift")
    parser.add_argument("--workdir", default=".")
    parser.add_argument(
        "--phase-seconds",
        type=float,
        default=float(os.environ.get("GPUOPS_SIM_PHASE_SECONDS", "1.0") or 1.0),
        help="duration of one simulated phase (machine provisioning step, driver load, ...)",
    )
    parser.add_argument("--log-level", default=os.environ.get("GPUOPS_SIM_LOG_LEVEL", "INFO"))
    parser.add_argument(
        "--openshift-version",
        default=catalog.DEFAULT_OPENSHIFT_VERSION,
        help="release of the simulated cluster (new Machines boot its RHCOS; data/rhcos-builds.csv)",
    )
    parser.add_argument(
        "--pod-cidr",
        default=os.environ.get("GPUOPS_SIM_POD_CIDR") or None,
        help="pod network routed to this host (the launcher's 'ip route add local'): agent-owned pods get their"
        " IPs there and the dcgm-exporter pods listen on them",
    )
    args = parser.parse_args(argv)
    catalog.set_cluster_release(args.openshift_version)
    podsim.NETWORK.configure(args.pod_cidr)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stdout,
    )
    log = logging.getLogger("simopenshift")
    workdir = os.path.abspath(args.workdir)
    api = api_client(args.kubeconfig)
    if args.profile == "kubernetes":
        # pods/log for agent-owned pods needs kwok's Logs CRD; the openshift
        # profile's install() has created it already.
        for attempt in range(60):
            try:
                install.install_kwok_logs_crd(api)
                break
            except (ApiException, Exception) as exc:  # apiserver still starting
                log.warning("installing kwok Logs CRD failed (%s), retrying", exc)
                time.sleep(0.5)
    manager = build_manager(api, args.profile, workdir, args.phase_seconds)
    stop = threading.Event()

    def on_signal(signum, frame):
        log.info("signal %d: stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info(
        "starting %d controllers (profile %s, phase %.2fs, workdir %s)",
        len(manager.controllers),
        args.profile,
        args.phase_seconds,
        workdir,
    )
    manager.start(sync_timeout=30)
    report_ready(manager, args.profile)
    log.info("controllers running")
    while not stop.is_set():
        stop.wait(1.0)
    manager.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
