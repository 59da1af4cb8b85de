# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The OpenShift resources the simulation serves as CRDs (crds/*.yaml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from simopenshift.kube import Resource

MACHINESETS = Resource("machine.openshift.io", "v1beta1", "machinesets", "MachineSet")
MACHINES = Resource("machine.openshift.io", "v1beta1", "machines", "Machine")
MACHINECONFIGS = Resource(
    "machineconfiguration.openshift.io", "v1", "machineconfigs", "MachineConfig", namespaced=False
)
MACHINECONFIGPOOLS = Resource(
    "machineconfiguration.openshift.io", "v1", "machineconfigpools", "MachineConfigPool", namespaced=False
)
KUBELETCONFIGS = Resource(
    "machineconfiguration.openshift.io", "v1", "kubeletconfigs", "KubeletConfig", namespaced=False
)
CLUSTERAUTOSCALERS = Resource(
    "autoscaling.openshift.io", "v1", "clusterautoscalers", "ClusterAutoscaler", namespaced=False
)
MACHINEAUTOSCALERS = Resource("autoscaling.openshift.io", "v1beta1", "machineautoscalers", "MachineAutoscaler")
INFRASTRUCTURES = Resource("config.openshift.io", "v1", "infrastructures", "Infrastructure", namespaced=False)
CLUSTERVERSIONS = Resource("config.openshift.io", "v1", "clusterversions", "ClusterVersion", namespaced=False)
CLUSTEROPERATORS = Resource("config.openshift.io", "v1", "clusteroperators", "ClusterOperator", namespaced=False)
APIREQUESTCOUNTS = Resource("apiserver.openshift.io", "v1", "apirequestcounts", "APIRequestCount", namespaced=False)
BUILDCONFIGS = Resource("build.openshift.io", "v1", "buildconfigs", "BuildConfig")
BUILDS = Resource("build.openshift.io", "v1", "builds", "Build")
IMAGESTREAMS = Resource("image.openshift.io", "v1", "imagestreams", "ImageStream")
SCCS = Resource(
    "security.openshift.io", "v1", "securitycontextconstraints", "SecurityContextConstraints", namespaced=False
)
SUBSCRIPTIONS = Resource("operators.coreos.com", "v1alpha1", "subscriptions", "Subscription")
INSTALLPLANS = Resource("operators.coreos.com", "v1alpha1", "installplans", "InstallPlan")
CSVS = Resource("operators.coreos.com", "v1alpha1", "clusterserviceversions", "ClusterServiceVersion")
CATALOGSOURCES = Resource("operators.coreos.com", "v1alpha1", "catalogsources", "CatalogSource")
OPERATORGROUPS = Resource("operators.coreos.com", "v1", "operatorgroups", "OperatorGroup")
PACKAGEMANIFESTS = Resource("packages.operators.coreos.com", "v1", "packagemanifests", "PackageManifest")
NODEFEATUREDISCOVERIES = Resource("nfd.openshift.io", "v1", "nodefeaturediscoveries", "NodeFeatureDiscovery")
SERVICEMONITORS = Resource("monitoring.coreos.com", "v1", "servicemonitors", "ServiceMonitor")
PROMETHEUSRULES = Resource("monitoring.coreos.com", "v1", "prometheusrules", "PrometheusRule")
CLUSTERPOLICIES = Resource("nvidia.com", "v1", "clusterpolicies", "ClusterPolicy", namespaced=False)

MACHINE_API_NS = "openshift-machine-api"
NVIDIADRIVERS = Resource("nvidia.com", "v1alpha1", "nvidiadrivers", "NVIDIADriver", namespaced=False)
