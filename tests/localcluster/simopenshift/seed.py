# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The objects of a freshly installed OpenShift IPI cluster on AWS us-east-2.

The release is 4.16 unless ``release`` (a catalog.RhcosBuild with a
``cluster_version``, see catalog.release_build) names another one: the
ClusterVersion, the rendered configs' osImageURL (hence every node's kernel and
os-release) and the Driver Toolkit ImageStream tags follow it.

Pure builders; install.py creates them. Names follow the installer's patterns
(infrastructure name ``<cluster>-<5 chars>``, MachineSets
``<infra>-worker-<zone>``, machines ``<machineset>-<5 chars>``, nodes
``ip-10-0-x-y.<region>.compute.internal``). The MachineSet shape is seed 000's
(AWSMachineProviderConfig with ami, blockDevices, iamInstanceProfile,
placement, securityGroups, subnet, tags, userDataSecret, ...). IDs, AMIs and
digests are synthetic but stable.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

from simopenshift import apis, catalog, machineapi, olm

CLUSTER_NAME = "gpuops-sim"
INFRA_NAME = "gpuops-sim-8xk2q"
BASE_DOMAIN = "sim.example.com"
REGION = "us-east-2"
ZONES = ("us-east-2a", "us-east-2b", "us-east-2c")
WORKER_TYPE = "m6i.xlarge"  # installer default for 4.16 on AWS
MASTER_TYPE = "m6i.xlarge"
AMI = "ami-0" + catalog.fake_hex(16, "rhcos-ami", catalog.CLUSTER_RHCOS_BUILD, REGION)
CLUSTER_ID = "%s-%s-%s-%s-%s" % tuple(catalog.fake_hex(n, "cluster-id", i) for i, n in enumerate((8, 4, 4, 4, 12)))
RELEASE_IMAGE = "quay.io/openshift-release-dev/ocp-release@" + catalog.fake_digest(
    "release", catalog.CLUSTER_OCP_VERSION
)


def _release(release):
    """The RhcosBuild the cluster runs (None: this process's current release, 4.16 by default)."""
    return release or catalog.cluster_build()


def ami(release=None):
    build = _release(release)
    if build.build == catalog.CLUSTER_RHCOS_BUILD:
        return AMI
    return "ami-0" + catalog.fake_hex(16, "rhcos-ami", build.build, REGION)


def release_image(release=None):
    version = _release(release).cluster_version or catalog.CLUSTER_OCP_VERSION
    return "quay.io/openshift-release-dev/ocp-release@" + catalog.fake_digest("release", version)


NAMESPACES = (
    "openshift",
    "openshift-config",
    "openshift-config-managed",
    "openshift-machine-api",
    "openshift-machine-config-operator",
    "openshift-marketplace",
    "openshift-operators",
    "openshift-operator-lifecycle-manager",
    "openshift-image-registry",
    "openshift-monitoring",
)


def namespace(name):
    labels = {"kubernetes.io/metadata.name": name}
    if name.startswith("openshift"):
        labels["openshift.io/cluster-monitoring"] = "true"
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def infrastructure():
    return {
        "apiVersion": apis.INFRASTRUCTURES.api_version,
        "kind": "Infrastructure",
        "metadata": {"name": "cluster"},
        "spec": {
            "cloudConfig": {"key": "config", "name": "cloud-provider-config"},
            "platformSpec": {"type": "AWS", "aws": {}},
        },
        "status": {
            "apiServerInternalURI": "https://api-int.%s.%s:6443" % (CLUSTER_NAME, BASE_DOMAIN),
            "apiServerURL": "https://api.%s.%s:6443" % (CLUSTER_NAME, BASE_DOMAIN),
            "controlPlaneTopology": "HighlyAvailable",
            "cpuPartitioning": "None",
            "etcdDiscoveryDomain": "",
            "infrastructureName": INFRA_NAME,
            "infrastructureTopology": "HighlyAvailable",
            "platform": "AWS",
            "platformStatus": {"type": "AWS", "aws": {"region": REGION}},
        },
    }


def cluster_version(release=None):
    version = _release(release).cluster_version or catalog.CLUSTER_OCP_VERSION
    minor = ".".join(version.split(".")[:2])
    stamp = "2026-01-05T09:12:44Z"
    image = release_image(release)
    # EUS channels exist for even minors (4.16, 4.18, 4.20).
    channels = ["candidate-%s" % minor, "fast-%s" % minor, "stable-%s" % minor]
    if int(minor.split(".")[1]) % 2 == 0:
        channels.insert(1, "eus-%s" % minor)
    return {
        "apiVersion": apis.CLUSTERVERSIONS.api_version,
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"channel": "stable-%s" % minor, "clusterID": CLUSTER_ID},
        "status": {
            "availableUpdates": None,
            "desired": {
                "version": version,
                "image": image,
                "channels": channels,
            },
            "history": [
                {
                    "state": "Completed",
                    "version": version,
                    "image": image,
                    "verified": False,
                    "startedTime": "2026-01-05T08:31:02Z",
                    "completionTime": stamp,
                }
            ],
            "observedGeneration": 1,
            "versionHash": catalog.fake_hex(11, "version-hash", version),
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastTransitionTime": stamp,
                    "message": "Done applying %s" % version,
                },
                {"type": "Failing", "status": "False", "lastTransitionTime": stamp},
                {
                    "type": "Progressing",
                    "status": "False",
                    "lastTransitionTime": stamp,
                    "message": "Cluster version is %s" % version,
                },
                {
                    "type": "RetrievedUpdates",
                    "status": "False",
                    "lastTransitionTime": stamp,
                    "reason": "RemoteFailed",
                    "message": "Unable to retrieve available updates: the simulated cluster is disconnected",
                },
            ],
        },
    }


def worker_machineset(zone, replicas=1, instance_type=WORKER_TYPE, role="worker", release=None):
    name = "%s-%s-%s" % (INFRA_NAME, role, zone)
    selector = {
        "machine.openshift.io/cluster-api-cluster": INFRA_NAME,
        "machine.openshift.io/cluster-api-machineset": name,
    }
    template_labels = dict(selector)
    template_labels.update(
        {"machine.openshift.io/cluster-api-machine-role": role, "machine.openshift.io/cluster-api-machine-type": role}
    )
    return {
        "apiVersion": apis.MACHINESETS.api_version,
        "kind": "MachineSet",
        "metadata": {
            "name": name,
            "namespace": apis.MACHINE_API_NS,
            "labels": {"machine.openshift.io/cluster-api-cluster": INFRA_NAME},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": template_labels},
                "spec": {
                    "lifecycleHooks": {},
                    "metadata": {},
                    "providerSpec": {"value": provider_spec(zone, instance_type, role, release)},
                },
            },
        },
    }


def provider_spec(zone, instance_type, role="worker", release=None):
    return {
        "ami": {"id": ami(release)},
        "apiVersion": "machine.openshift.io/v1beta1",
        "blockDevices": [
            {"ebs": {"encrypted": True, "iops": 0, "kmsKey": {"arn": ""}, "volumeSize": 120, "volumeType": "gp3"}}
        ],
        "credentialsSecret": {"name": "aws-cloud-credentials"},
        "deviceIndex": 0,
        "iamInstanceProfile": {"id": "%s-%s-profile" % (INFRA_NAME, role)},
        "instanceType": instance_type,
        "kind": "AWSMachineProviderConfig",
        "metadata": {"creationTimestamp": None},
        "metadataServiceOptions": {},
        "placement": {"availabilityZone": zone, "region": REGION},
        "securityGroups": [
            {"filters": [{"name": "tag:Name", "values": ["%s-node" % INFRA_NAME]}]},
            {"filters": [{"name": "tag:Name", "values": ["%s-lb" % INFRA_NAME]}]},
        ],
        "subnet": {"filters": [{"name": "tag:Name", "values": ["%s-subnet-private-%s" % (INFRA_NAME, zone)]}]},
        "tags": [{"name": "kubernetes.io/cluster/%s" % INFRA_NAME, "value": "owned"}],
        "userDataSecret": {"name": "%s-user-data" % role},
    }


def machine_suffix(name):
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    digest = int(catalog.fake_hex(10, "suffix", name), 16)
    out = ""
    for _ignored in range(5):
        digest, rem = divmod(digest, len(alphabet))
        out += alphabet[rem]
    return out


def master_machine(index, zone, release=None):
    name = "%s-master-%d" % (INFRA_NAME, index)
    return {
        "apiVersion": apis.MACHINES.api_version,
        "kind": "Machine",
        "metadata": {
            "name": name,
            "namespace": apis.MACHINE_API_NS,
            "labels": {
                "machine.openshift.io/cluster-api-cluster": INFRA_NAME,
                "machine.openshift.io/cluster-api-machine-role": "master",
                "machine.openshift.io/cluster-api-machine-type": "master",
            },
            "finalizers": [machineapi.MACHINE_FINALIZER],
        },
        "spec": {
            "lifecycleHooks": {},
            "metadata": {},
            "providerSpec": {"value": provider_spec(zone, MASTER_TYPE, "master", release)},
        },
    }


def data_url(text):
    return "data:text/plain;charset=utf-8;base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")


def base_machineconfigs(role, release=None):
    """The MachineConfigs the MCO generates for a built-in pool (trimmed contents)."""
    build = _release(release)
    generated = {"machineconfiguration.openshift.io/generated-by-controller-version": "sim-%s" % build.ocp}
    label = {"machineconfiguration.openshift.io/role": role}

    def mc(name, files=None, version="3.4.0", extra=None, annotated=True):
        spec = {"config": {"ignition": {"version": version}}}
        if files:
            spec["config"]["storage"] = {
                "files": [
                    {"path": path, "mode": 420, "overwrite": True, "contents": {"source": data_url(content)}}
                    for path, content in files
                ]
            }
        spec.update(extra or {})
        metadata = {"name": name, "labels": dict(label)}
        if annotated:
            metadata["annotations"] = dict(generated)
        return {
            "apiVersion": apis.MACHINECONFIGS.api_version,
            "kind": "MachineConfig",
            "metadata": metadata,
            "spec": spec,
        }

    return [
        mc(
            "00-%s" % role,
            [
                ("/etc/kubernetes/cloud.conf", "[Global]\nRegion = %s\n" % REGION),
                ("/etc/hostname.d/README", "hostname from AWS metadata\n"),
            ],
            extra={"osImageURL": catalog.os_image_url(build.build), "kernelType": "default"},
        ),
        mc(
            "01-%s-container-runtime" % role, [("/etc/crio/crio.conf.d/00-default", "[crio.runtime]\nselinux = true\n")]
        ),
        mc(
            "01-%s-kubelet" % role,
            [
                ("/etc/kubernetes/kubelet.conf", '{"kind":"KubeletConfiguration","maxPods":250}\n'),
                (
                    "/etc/systemd/system/kubelet.service.d/20-node-role.conf",
                    "[Service]\nEnvironment=KUBELET_NODE_LABELS=node-role.kubernetes.io/%s\n" % role,
                ),
            ],
        ),
        mc(
            "99-%s-generated-registries" % role,
            [
                (
                    "/etc/containers/registries.conf",
                    "unqualified-search-registries = ['registry.access.redhat.com', 'docker.io']\n",
                )
            ],
        ),
        mc(
            "99-%s-ssh" % role,
            version="3.2.0",
            annotated=False,
            extra={
                "config": {
                    "ignition": {"version": "3.2.0"},
                    "passwd": {
                        "users": [
                            {
                                "name": "core",
                                "sshAuthorizedKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG1pc2ltdWxhdGVk sim"],
                            }
                        ]
                    },
                }
            },
        ),
    ]


def pool(role):
    spec = {
        "machineConfigSelector": {"matchLabels": {"machineconfiguration.openshift.io/role": role}},
        "nodeSelector": {"matchLabels": {"node-role.kubernetes.io/%s" % role: ""}},
        "paused": False,
    }
    return {
        "apiVersion": apis.MACHINECONFIGPOOLS.api_version,
        "kind": "MachineConfigPool",
        "metadata": {
            "name": role,
            "labels": {
                "machineconfiguration.openshift.io/mco-built-in": "",
                "pools.operator.machineconfiguration.openshift.io/%s" % role: "",
            },
        },
        "spec": spec,
    }


def dtk_imagestream(release=None):
    """openshift/driver-toolkit: one tag per RHCOS build plus ``latest`` (openshift-releases.md section 2).

    The tag is the RHCOS build id, ``416.94.202406172220-0`` on 4.16 and
    ``9.6.20250925-0`` on 4.19 (the new ``<RHEL x.y>.<date>-N`` scheme).
    """
    build = _release(release).build
    image = catalog.dtk_image(build)
    return {
        "apiVersion": apis.IMAGESTREAMS.api_version,
        "kind": "ImageStream",
        "metadata": {
            "name": "driver-toolkit",
            "namespace": "openshift",
            "annotations": {"include.release.openshift.io/self-managed-high-availability": "true"},
        },
        "spec": {
            "lookupPolicy": {"local": False},
            "tags": [
                {
                    "name": build,
                    "from": {"kind": "DockerImage", "name": image},
                    "referencePolicy": {"type": "Source"},
                    "importPolicy": {"scheduled": False},
                },
                {
                    "name": "latest",
                    "from": {"kind": "DockerImage", "name": image},
                    "referencePolicy": {"type": "Source"},
                    "importPolicy": {"scheduled": False},
                },
            ],
        },
    }


def catalog_source(name):
    meta = olm.CATALOGS[name]
    return {
        "apiVersion": apis.CATALOGSOURCES.api_version,
        "kind": "CatalogSource",
        "metadata": {
            "name": name,
            "namespace": olm.MARKETPLACE_NS,
            "annotations": {"operatorframework.io/managed-by": "marketplace-operator"},
        },
        "spec": {
            "displayName": meta["displayName"],
            "publisher": meta["publisher"],
            "sourceType": "grpc",
            "image": meta["image"],
            "priority": -100 if name == "redhat-operators" else -200,
            "updateStrategy": {"registryPoll": {"interval": "10m"}},
        },
    }


def global_operators_group():
    return {
        "apiVersion": apis.OPERATORGROUPS.api_version,
        "kind": "OperatorGroup",
        "metadata": {"name": "global-operators", "namespace": "openshift-operators"},
        "spec": {"upgradeStrategy": {"name": "Default"}},
    }


def sccs():
    """The ten SCCs every OpenShift 4.11+ cluster has, in the order SCC admission tries them.

    apiserver-library-go's sccadmission (``standardSCCNames``) refuses every pod until all ten exist. Fields as
    in the cluster-kube-apiserver-operator's bindata/bootkube/scc-manifests and "Managing security context
    constraints" (docs.openshift.com, OpenShift 4.16, "Default security context constraints"). The order is
    admission's (priority first: anyuid's 10, then the more restrictive first), the one its refusal message
    lists the providers in; simopenshift.scc builds the admission policy from the ``allow*`` fields.
    """
    base = {"apiVersion": apis.SCCS.api_version, "kind": "SecurityContextConstraints"}
    plain_volumes = [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ]
    host_volumes = sorted(plain_volumes + ["hostPath"])
    restricted_v1 = dict(
        base,
        metadata={"name": "restricted"},
        allowPrivilegedContainer=False,
        allowPrivilegeEscalation=True,
        allowHostDirVolumePlugin=False,
        allowHostIPC=False,
        allowHostNetwork=False,
        allowHostPID=False,
        allowHostPorts=False,
        allowedCapabilities=None,
        requiredDropCapabilities=["KILL", "MKNOD", "SETUID", "SETGID"],
        priority=None,
        readOnlyRootFilesystem=False,
        # 4.11+ installs grant it to nobody (upgraded clusters keep system:authenticated).
        users=[],
        groups=[],
        volumes=list(plain_volumes),
        runAsUser={"type": "MustRunAsRange"},
        seLinuxContext={"type": "MustRunAs"},
        fsGroup={"type": "MustRunAs"},
        supplementalGroups={"type": "RunAsAny"},
    )
    v2 = dict(
        allowPrivilegeEscalation=False,
        allowedCapabilities=["NET_BIND_SERVICE"],
        requiredDropCapabilities=["ALL"],
        seccompProfiles=["runtime/default"],
    )
    restricted = dict(restricted_v1, metadata={"name": "restricted-v2"}, **v2)
    anyuid = dict(
        restricted,
        metadata={"name": "anyuid"},
        priority=10,
        allowPrivilegeEscalation=True,
        allowedCapabilities=None,
        requiredDropCapabilities=["MKNOD"],
        groups=["system:cluster-admins"],
        runAsUser={"type": "RunAsAny"},
        fsGroup={"type": "RunAsAny"},
        seccompProfiles=None,
    )
    nonroot = dict(
        restricted_v1,
        metadata={"name": "nonroot"},
        runAsUser={"type": "MustRunAsNonRoot"},
        fsGroup={"type": "RunAsAny"},
    )
    nonroot_v2 = dict(nonroot, metadata={"name": "nonroot-v2"}, **v2)
    hostmount_anyuid = dict(
        restricted_v1,
        metadata={"name": "hostmount-anyuid"},
        allowHostDirVolumePlugin=True,
        requiredDropCapabilities=["MKNOD"],
        users=["system:serviceaccount:openshift-infra:pv-recycler-controller"],
        volumes=sorted(host_volumes + ["nfs"]),
        runAsUser={"type": "RunAsAny"},
        fsGroup={"type": "RunAsAny"},
    )
    hostnetwork = dict(
        restricted_v1,
        metadata={"name": "hostnetwork"},
        allowHostNetwork=True,
        allowHostPorts=True,
        supplementalGroups={"type": "MustRunAs"},
    )
    hostnetwork_v2 = dict(hostnetwork, metadata={"name": "hostnetwork-v2"}, **v2)
    hostaccess = dict(
        restricted_v1,
        metadata={"name": "hostaccess"},
        allowHostDirVolumePlugin=True,
        allowHostIPC=True,
        allowHostNetwork=True,
        allowHostPID=True,
        allowHostPorts=True,
        volumes=host_volumes,
    )
    privileged = dict(
        base,
        metadata={"name": "privileged"},
        allowPrivilegedContainer=True,
        allowPrivilegeEscalation=True,
        allowHostDirVolumePlugin=True,
        allowHostIPC=True,
        allowHostNetwork=True,
        allowHostPID=True,
        allowHostPorts=True,
        allowedCapabilities=["*"],
        priority=None,
        readOnlyRootFilesystem=False,
        volumes=["*"],
        users=["system:admin", "system:serviceaccount:openshift-infra:build-controller"],
        groups=["system:cluster-admins", "system:nodes", "system:masters"],
        runAsUser={"type": "RunAsAny"},
        seLinuxContext={"type": "RunAsAny"},
        fsGroup={"type": "RunAsAny"},
        supplementalGroups={"type": "RunAsAny"},
        seccompProfiles=["*"],
    )
    return [
        anyuid,
        restricted,
        restricted_v1,
        nonroot_v2,
        nonroot,
        hostmount_anyuid,
        hostnetwork_v2,
        hostnetwork,
        hostaccess,
        privileged,
    ]


def pull_secret():
    auths = (
        '{"auths":{"cloud.openshift.com":{"auth":"c2ltOnNpbQ=="},"quay.io":{"auth":"c2ltOnNpbQ=="},'
        '"registry.redhat.io":{"auth":"c2ltOnNpbQ=="},"registry.connect.redhat.com":{"auth":"c2ltOnNpbQ=="}}}'
    )
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": "pull-secret", "namespace": "openshift-config"},
        "data": {".dockerconfigjson": base64.b64encode(auths.encode("utf-8")).decode("ascii")},
    }
