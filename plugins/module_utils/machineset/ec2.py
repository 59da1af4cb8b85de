# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The AWS EC2 check behind ``validate_instance_type`` (boto3).

DescribeInstanceTypes: the type exists and has NVIDIA GPUs;
DescribeInstanceTypeOfferings: it is offered in the zone of every GPU
MachineSet. boto3 is needed only when the check is asked for.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.cluster.plugins.module_utils import catalog
from ansible_collections.gpuops.cluster.plugins.module_utils.common import GpuopsError

try:
    import boto3
    import botocore.exceptions

    HAS_BOTO3 = True
except ImportError:  # reported when validate_instance_type asks for it
    HAS_BOTO3 = False


def _instance_type_info(ec2, instance_type):
    """DescribeInstanceTypes for one type; GpuopsError when AWS does not know it."""
    try:
        found = ec2.describe_instance_types(InstanceTypes=[instance_type]).get("InstanceTypes") or []
    except botocore.exceptions.ClientError as exc:
        code = exc.response.get("Error", {}).get("Code")
        if code in ("InvalidInstanceType", "InvalidParameterValue"):
            raise GpuopsError(
                "AWS reports that instance type '{0}' does not exist in region {1}. Known GPU types: "
                "{2}.".format(instance_type, ec2.meta.region_name, ", ".join(catalog.suggest("aws", instance_type))),
                param="instance_type",
            )
        raise
    if not found:
        raise GpuopsError(
            "AWS reports that instance type '{0}' does not exist in region {1}.".format(
                instance_type, ec2.meta.region_name
            ),
            param="instance_type",
        )
    return found[0]


def _nvidia_gpus(info, instance_type):
    gpus = [g for g in (info.get("GpuInfo") or {}).get("Gpus") or [] if g.get("Manufacturer") == "NVIDIA"]
    if not gpus:
        raise GpuopsError(
            "AWS reports no NVIDIA GPU on '{0}'. Use a GPU type such as {1}.".format(
                instance_type, ", ".join(catalog.suggest("aws", instance_type))
            ),
            param="instance_type",
        )
    return gpus


def _offered_zones(ec2, instance_type, zones):
    """DescribeInstanceTypeOfferings: the zones offering the type; GpuopsError when one of ``zones`` lacks it."""
    offered = set()
    paginator = ec2.get_paginator("describe_instance_type_offerings")
    for page in paginator.paginate(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": [instance_type]}]
    ):
        offered.update(offer.get("Location") for offer in page.get("InstanceTypeOfferings") or [])
    missing = sorted(z for z in set(zones) if z not in offered)
    if missing:
        raise GpuopsError(
            "'{0}' is not offered in availability zone(s) {1} of region {2}; it is offered in: {3}. Restrict the "
            "sources with zones, or choose another instance_type.".format(
                instance_type, ", ".join(missing), ec2.meta.region_name, ", ".join(sorted(offered)) or "no zone"
            ),
            param="instance_type",
        )
    return sorted(offered)


def aws_check(ec2, instance_type, zones):
    """Ask EC2 whether ``instance_type`` exists, has NVIDIA GPUs and is offered in ``zones``."""
    info = _instance_type_info(ec2, instance_type)
    gpus = _nvidia_gpus(info, instance_type)
    offered = _offered_zones(ec2, instance_type, zones)
    return {
        "instance_type": instance_type,
        "gpu_count": sum(int(g.get("Count") or 0) for g in gpus),
        "gpu_model": gpus[0].get("Name"),
        "gpu_memory_mib": (gpus[0].get("MemoryInfo") or {}).get("SizeInMiB"),
        "vcpu": (info.get("VCpuInfo") or {}).get("DefaultVCpus"),
        "memory_mib": (info.get("MemoryInfo") or {}).get("SizeInMiB"),
        "offered_zones": offered,
        "source": "aws",
    }


def aws_validate(plan, region_zones, session_factory=None):
    """Run aws_check per region; boto3 problems become messages naming the parameter."""
    if not HAS_BOTO3:
        raise GpuopsError(
            "needs the boto3 Python library on the host running the module (pip install boto3).",
            param="validate_instance_type",
        )
    session_factory = session_factory or (lambda: boto3.session.Session(profile_name=plan.get("aws_profile")))
    result = None
    try:
        session = session_factory()
        for region in sorted(region_zones):
            ec2 = session.client("ec2", region_name=region, endpoint_url=plan.get("aws_endpoint_url"))
            result = aws_check(ec2, plan["instance_type"], region_zones[region])
    except botocore.exceptions.ProfileNotFound as exc:
        raise GpuopsError("{0}; name a profile from ~/.aws/config.".format(exc), param="aws_profile")
    except botocore.exceptions.NoCredentialsError:
        raise GpuopsError(
            "found no AWS credentials to check the instance type; set AWS_ACCESS_KEY_ID / "
            "AWS_SECRET_ACCESS_KEY or aws_profile, or set validate_instance_type=false.",
            param="validate_instance_type",
        )
    except botocore.exceptions.EndpointConnectionError as exc:
        raise GpuopsError(
            "cannot reach the EC2 API ({0}); check aws_endpoint_url / network, or set "
            "validate_instance_type=false.".format(exc),
            param="validate_instance_type",
        )
    except botocore.exceptions.ClientError as exc:
        raise GpuopsError(
            "the EC2 API refused the instance type check: {0}. Grant ec2:DescribeInstanceTypes and "
            "ec2:DescribeInstanceTypeOfferings, or set validate_instance_type=false.".format(exc),
            param="validate_instance_type",
        )
    return result
