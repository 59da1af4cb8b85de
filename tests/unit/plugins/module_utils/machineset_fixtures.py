# -*- coding: utf-8 -*-
"""MachineSet fixtures shaped like `oc get machineset -o json` on OpenShift 4 / AWS."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

INFRA = "cluster-aus-9195-jg5lt"


def aws_machineset(zone="us-east-2a", instance_type="m5.2xlarge", infra=INFRA, role="worker", replicas=1):
    name = "{0}-{1}-{2}".format(infra, role, zone)
    return {
        "apiVersion": "machine.openshift.io/v1beta1",
        "kind": "MachineSet",
        "metadata": {
            "annotations": {
                "machine.openshift.io/vCPU": "8",
                "machine.openshift.io/memoryMb": "32768",
                "machine.openshift.io/GPU": "0",
                "capacity.cluster-autoscaler.kubernetes.io/labels": "kubernetes.io/arch=amd64",
                "machine.openshift.io/cluster-api-autoscaler-node-group-min-size": "1",
                "team.example.com/owner": "platform",
            },
            "creationTimestamp": "2019-08-30T02:26:45Z",
            "generation": 1,
            "labels": {"machine.openshift.io/cluster-api-cluster": infra},
            "managedFields": [{"manager": "machine-api", "operation": "Update"}],
            "name": name,
            "namespace": "openshift-machine-api",
            "resourceVersion": "9275",
            "selfLink": "/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machinesets/" + name,
            "uid": "4d7f6b1d-cad0-11e9-9f4e-02d6b9d7e0a4",
        },
        "spec": {
            "replicas": replicas,
            "selector": {
                "matchLabels": {
                    "machine.openshift.io/cluster-api-cluster": infra,
                    "machine.openshift.io/cluster-api-machineset": name,
                }
            },
            "template": {
                "metadata": {
                    "creationTimestamp": None,
                    "labels": {
                        "machine.openshift.io/cluster-api-cluster": infra,
                        "machine.openshift.io/cluster-api-machine-role": role,
                        "machine.openshift.io/cluster-api-machine-type": role,
                        "machine.openshift.io/cluster-api-machineset": name,
                    },
                },
                "spec": {
                    "metadata": {"creationTimestamp": None},
                    "providerSpec": {
                        "value": {
                            "ami": {"id": "ami-0eecbb884c8b35b1e"},
                            "apiVersion": "awsproviderconfig.openshift.io/v1beta1",
                            "blockDevices": [{"ebs": {"iops": 0, "volumeSize": 120, "volumeType": "gp2"}}],
                            "credentialsSecret": {"name": "aws-cloud-credentials"},
                            "deviceIndex": 0,
                            "iamInstanceProfile": {"id": infra + "-worker-profile"},
                            "instanceType": instance_type,
                            "kind": "AWSMachineProviderConfig",
                            "metadata": {"creationTimestamp": None},
                            "placement": {"availabilityZone": zone, "region": zone[:-1]},
                            "securityGroups": [{"filters": [{"name": "tag:Name", "values": [infra + "-worker-sg"]}]}],
                            "subnet": {"filters": [{"name": "tag:Name", "values": [infra + "-private-" + zone]}]},
                            "tags": [{"name": "kubernetes.io/cluster/" + infra, "value": "owned"}],
                            "userDataSecret": {"name": "worker-user-data"},
                        }
                    },
                },
            },
        },
        "status": {
            "availableReplicas": 1,
            "fullyLabeledReplicas": 1,
            "observedGeneration": 1,
            "readyReplicas": 1,
            "replicas": 1,
        },
    }


def azure_machineset(zone="1", infra="azc-4mzs2"):
    ms = aws_machineset(infra=infra)
    name = "{0}-worker-eastus{1}".format(infra, zone)
    ms["metadata"]["name"] = name
    ms["spec"]["selector"]["matchLabels"]["machine.openshift.io/cluster-api-machineset"] = name
    ms["spec"]["template"]["metadata"]["labels"]["machine.openshift.io/cluster-api-machineset"] = name
    ms["spec"]["template"]["spec"]["providerSpec"]["value"] = {
        "apiVersion": "machine.openshift.io/v1beta1",
        "kind": "AzureMachineProviderSpec",
        "location": "eastus",
        "zone": zone,
        "vmSize": "Standard_D4s_v3",
        "image": {"resourceID": "/resourceGroups/x/providers/Microsoft.Compute/images/x"},
    }
    return ms


def gcp_machineset(zone="us-central1-a", infra="gcpc-8kq2x", machine_type="n2-standard-4", on_host_maintenance=None):
    ms = aws_machineset(infra=infra)
    name = "{0}-worker-{1}".format(infra, zone[-1])
    ms["metadata"]["name"] = name
    ms["spec"]["selector"]["matchLabels"]["machine.openshift.io/cluster-api-machineset"] = name
    ms["spec"]["template"]["metadata"]["labels"]["machine.openshift.io/cluster-api-machineset"] = name
    ms["spec"]["template"]["spec"]["providerSpec"]["value"] = {
        "apiVersion": "machine.openshift.io/v1beta1",
        "kind": "GCPMachineProviderSpec",
        "region": "us-central1",
        "zone": zone,
        "machineType": machine_type,
        "disks": [{"autoDelete": True, "boot": True, "sizeGb": 128, "type": "pd-ssd"}],
    }
    if on_host_maintenance:
        ms["spec"]["template"]["spec"]["providerSpec"]["value"]["onHostMaintenance"] = on_host_maintenance
    return ms


def vsphere_machineset(role="worker"):
    ms = aws_machineset(infra="vs-abc12", role=role)
    ms["spec"]["template"]["spec"]["providerSpec"]["value"] = {
        "apiVersion": "machine.openshift.io/v1beta1",
        "kind": "VSphereMachineProviderSpec",
        "numCPUs": 4,
    }
    return ms


def copy_of(obj):
    return copy.deepcopy(obj)
