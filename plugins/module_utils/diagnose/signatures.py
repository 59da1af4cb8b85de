# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Failure signatures of GPU enablement, each from a real public report (``source``).

``where``: the log or object the text comes from (kernel_log: the driver pod's dmesg lines; driver_log,
toolkit_log, device_plugin_log, gfd_log, dcgm_log, validator_log: those pods' logs; event: an event's message;
pod_status: a container's state message; node_condition: a node condition's message). ``pattern`` is searched
case-insensitively; ``example`` is the line as the source shows it, verbatim (the unit tests' fixtures).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# fmt: off
SIGNATURES = (
    {
        'id': 'gpu_fallen_off_bus_nvrm',
        'where': 'kernel_log',
        'pattern': 'NVRM: GPU [0-9a-fA-F:.]+: GPU has fallen off the bus',
        'example': 'NVRM: GPU 0000:a1:00.0: GPU has fallen off the bus',
        'cause': 'The GPU disappeared from the PCIe bus; the device plugin and DCGM can no longer use it.',
        'fix': 'Drain the node, reset the GPU (nvidia-smi -r after stopping its users) or reboot, and send for hardware inspection if it recurs.',
        'source': 'https://github.com/NVIDIA/dcgm-exporter/issues/348',
    },
    {
        'id': 'gpu_not_supported_by_driver',
        'where': 'kernel_log',
        'pattern': 'installed in this system is not supported by the',
        'example': (
            'kern: warning: [2023-09-14T03:08:37.411164757Z]: NVRM: The NVIDIA GPU 0000:00:10.0 (PCI ID: '
            '10de:1b38)\\x0aNVRM: installed in this system is not supported by the\\x0aNVRM: NVIDIA 535.54.03 '
            "driver release.\\x0aNVRM: Please see 'Appendix A - Supported NVIDIA GPU Products'\\x0aNVRM: in this "
            "release's README, available on the operating system\\x0aNVRM: specific graphics driver download page "
            'at www.nvidia.com.'
        ),
        'cause': 'The GPU (or vGPU type) is not supported by the installed driver branch.',
        'fix': (
            'Pick a driver branch that supports this GPU (or the matching vGPU guest driver) and set it '
            '(driver_version in the driver role, driver.version of the ClusterPolicy with the GPU Operator).'
        ),
        'source': 'https://github.com/siderolabs/extensions/issues/227',
    },
    {
        'id': 'gpu_requires_open_kernel_modules',
        'where': 'kernel_log',
        'pattern': 'requires use of the NVIDIA open kernel modules',
        'example': 'NVRM: installed in this system requires use of the NVIDIA open kernel modules.',
        'cause': 'The GPU (e.g. Blackwell) only works with the open kernel modules but the proprietary modules were loaded.',
        'fix': 'Switch the driver to open kernel modules (driver.kernelModuleType=open / useOpenKernelModules) and restart the driver pod.',
        'source': 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1027',
    },
    {
        'id': 'open_modules_gpu_without_gsp',
        'where': 'kernel_log',
        'pattern': 'installed in this system is not supported by open',
        'example': 'NVRM: installed in this system is not supported by open',
        'cause': (
            'The open kernel modules were loaded on a GPU without a GPU System Processor (before Turing, e.g. '
            'Volta V100 or Pascal), which only the proprietary modules drive.'
        ),
        'fix': (
            'Use the proprietary kernel modules on these nodes (driver_kernel_module_type: proprietary, '
            'driver.kernelModuleType=proprietary with the GPU Operator), or a driver branch that picks them for this GPU.'
        ),
        'source': 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/696',
    },
    {
        'id': 'gsp_firmware_missing',
        'where': 'kernel_log',
        'pattern': 'Direct firmware load for nvidia/\\S*gsp\\S*\\.bin failed',
        'example': 'Direct firmware load for nvidia/550.54.10/gsp_ga10x.bin failed with error -2',
        'cause': 'The GSP firmware file for this driver version is not present where the kernel loads firmware from.',
        'fix': (
            'Ensure the driver container/host installs /lib/firmware/nvidia/<version>/gsp_*.bin (and the '
            'firmware search path is visible to the kernel), then reload the driver.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1278',
    },
    {
        'id': 'gsp_init_failed',
        'where': 'kernel_log',
        'pattern': 'RmInitAdapter: Cannot initialize GSP firmware RM',
        'example': '[  903.609564] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM',
        'cause': 'The GPU System Processor firmware failed to boot, so the driver cannot initialize the GPU.',
        'fix': (
            'Reset the GPU or reboot the node; if it persists try another driver branch or (proprietary modules '
            'only) disable GSP with NVreg_EnableGpuFirmware=0.'
        ),
        'source': 'https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789',
    },
    {
        'id': 'kernel_unavailable_key_rejected',
        'where': 'kernel_log',
        'pattern': 'Loading of (module with unavailable key|unsigned module) is rejected',
        'example': '10.20.30.29: kern:  notice: [2023-04-02T08:28:32.591090611Z]: Loading of module with unavailable key is rejected',
        'cause': (
            'The kernel enforces module signatures and the nvidia module was signed with a key it does not have '
            '(module and kernel built separately).'
        ),
        'fix': 'Rebuild the module with the same signing key as the running kernel (or matching kernel build), or use a distribution-signed driver.',
        'source': 'https://github.com/siderolabs/talos/issues/7043',
    },
    {
        'id': 'module_in_use_modprobe',
        'where': 'kernel_log',
        'pattern': 'Module nvidia\\w* is in use',
        'example': 'modprobe: FATAL: Module nvidia is in use.',
        'cause': 'A process (persistenced, Xorg, a container) holds the nvidia module, so it cannot be removed.',
        'fix': 'Find holders with lsof /dev/nvidia* and lsmod, stop them (or drain the node), then retry the unload.',
        'source': 'https://github.com/joeknock90/Single-GPU-Passthrough/issues/25',
    },
    {
        'id': 'nova_core_bound',
        'where': 'kernel_log',
        'pattern': 'NVRM: GPU [0-9a-fA-F:.]+ is already bound to NovaCore',
        'example': '[  201.910514] NVRM: GPU 0000:01:00.0 is already bound to NovaCore.',
        'cause': 'The in-tree nova_core driver (successor of nouveau, enabled on some new kernels) has bound the GPU, so nvidia.ko cannot probe it.',
        'fix': 'Blacklist nova, nova_core and nova_drm (as well as nouveau) on the node and reboot, or use a kernel build without CONFIG_NOVA_CORE.',
        'source': 'https://github.com/beclab/Olares/pull/3963',
    },
    {
        'id': 'nvidia_probe_failed',
        'where': 'kernel_log',
        'pattern': 'NVRM: The NVIDIA probe routine failed for \\d+ device',
        'example': 'kern: warning: [2023-09-14T03:08:37.434129757Z]: NVRM: The NVIDIA probe routine failed for 1 device(s).',
        'cause': 'nvidia.ko loaded but could not take ownership of the GPU (unsupported GPU, another driver bound, or GPU off the bus).',
        'fix': 'Read the NVRM lines just before it (unsupported GPU, nouveau/nova bound, fallen off the bus) and fix that cause.',
        'source': 'https://github.com/siderolabs/extensions/issues/227',
    },
    {
        'id': 'rm_init_adapter_failed',
        'where': 'kernel_log',
        'pattern': 'RmInitAdapter failed! \\(0x[0-9a-fA-F]+:0x[0-9a-fA-F]+:\\d+\\)',
        'example': '[ 1818.969257] NVRM: GPU 0000:04:02.0: RmInitAdapter failed! (0x11:0x45:2525)',
        'cause': 'The driver loaded but could not initialize the GPU adapter (firmware, bad GPU state, or platform/virtualization problem).',
        'fix': (
            'Check the NVRM lines just before it for the specific reason, reset or reboot the node, and open a '
            'hardware/support case if it persists.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/649',
    },
    {
        'id': 'xid_119_gsp_rpc_timeout',
        'where': 'kernel_log',
        'pattern': 'Xid \\([^)]*\\): 119\\b',
        'example': (
            "[Mon Jul 25 16:46:20 2022] NVRM: Xid (PCI:0000:3b:00): 119, pid='<unknown>', name=<unknown>, "
            'Timeout waiting for RPC from GSP! Expected function FREE (0x0 0x0).'
        ),
        'cause': 'The GSP firmware stopped answering driver RPCs; the GPU is hung.',
        'fix': 'Drain the node and reset the GPU or reboot; if it recurs, update the driver branch.',
        'source': 'https://github.com/NVIDIA/dcgm-exporter/issues/84',
    },
    {
        'id': 'xid_48_double_bit_ecc',
        'where': 'kernel_log',
        'pattern': 'xid(?: \\([^)]*\\))?:? 48\\b.*double bit error',
        'example': 'XID 48 An uncorrectable double bit error (DBE) has been detected on GPU (<id>)',
        'cause': 'An uncorrectable (double-bit) ECC error occurred in GPU memory.',
        'fix': 'Drain the node and reset the GPU/reboot so the page is retired or row remapped; if DBEs repeat or remapping fails, RMA the GPU.',
        'source': 'https://docs.nvidia.com/deploy/dynamic-page-retirement/visibility.html',
    },
    {
        'id': 'xid_63_row_remap_pending',
        'where': 'kernel_log',
        'pattern': 'xid(?: \\([^)]*\\))?:? 63\\b',
        'example': 'NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.',
        'cause': 'A memory row (or page) was marked for remapping/retirement and needs a GPU reset to take effect.',
        'fix': 'Drain the node at a convenient time and reset the GPU or reboot to activate the remap.',
        'source': (
            'https://raw.githubusercontent.com/stas00/ml-engineering/7bc7c3054eb93c277a4755c597ae0864d77a63f1/com'
            'pute/accelerator/nvidia/debug.md'
        ),
    },
    {
        'id': 'xid_64_remap_failure',
        'where': 'kernel_log',
        'pattern': 'xid(?: \\([^)]*\\))?:? 64\\b',
        'example': 'XID 64 Dynamic Page Retirement: Fatal error, unable to retire page (<address>)',
        'cause': 'The GPU failed to retire a page / remap a row, so the bad memory stays in use.',
        'fix': 'Take the GPU out of service (drain/cordon), reset it, and open an RMA if the failure remains.',
        'source': 'https://docs.nvidia.com/deploy/dynamic-page-retirement/visibility.html',
    },
    {
        'id': 'xid_79_fallen_off_bus',
        'where': 'kernel_log',
        'pattern': 'Xid \\([^)]*\\): 79\\b',
        'example': 'NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus',
        'cause': 'The GPU stopped responding on PCIe (hardware, power, thermal or PCIe link fault).',
        'fix': 'Cordon and drain the node, reboot/power-cycle it, check power, cooling, seating and firmware; replace the GPU if it repeats.',
        'source': 'https://github.com/NVIDIA/NVSentinel/issues/155',
    },
    {
        'id': 'xid_94_contained_ecc',
        'where': 'kernel_log',
        'pattern': 'Xid \\([^)]*\\): 94\\b',
        'example': (
            "[Fri Aug  9 13:32:56 2024] NVRM: Xid (PCI:0000:00:08): 94, pid='<unknown>', name=<unknown>, "
            'Contained: SM (0x1). RST: No, D-RST: No'
        ),
        'cause': 'A contained uncorrectable memory error killed the affected application; the GPU itself stays usable.',
        'fix': 'Restart the affected workload; schedule a GPU reset to apply pending row remaps and watch for repeats.',
        'source': 'https://github.com/akash-network/support/issues/244',
    },
    {
        'id': 'apt_dns_resolution_failed',
        'where': 'driver_log',
        'pattern': "Temporary failure resolving '",
        'example': "nvidia-driver-ctr   Temporary failure resolving 'security.ubuntu.com'",
        'cause': 'The driver container cannot resolve the package mirror hostnames (no DNS/egress or proxy from the pod).',
        'fix': 'Fix DNS/egress for the driver pod (a proxy, or a local package mirror for the driver build) and restart the driver pod.',
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1244',
    },
    {
        'id': 'driver_in_use_cannot_unload',
        'where': 'driver_log',
        'pattern': 'Could not unload NVIDIA driver kernel modules, driver is in use',
        'example': 'Could not unload NVIDIA driver kernel modules, driver is in use',
        'cause': (
            'GPU workloads or other holders (pods, gdrdrv, host processes) still reference the loaded NVIDIA '
            'modules, so the driver cannot be replaced.'
        ),
        'fix': 'Drain GPU workloads from the node (or enable driver-manager auto drain / GPU pod eviction), then restart the driver pod.',
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/304',
    },
    {
        'id': 'driver_manager_uninstall_failed',
        'where': 'driver_log',
        'pattern': 'Failed to uninstall nvidia driver',
        'example': 'Failed to uninstall nvidia driver',
        'cause': 'k8s-driver-manager could not remove the existing driver (modules busy and auto drain disabled).',
        'fix': (
            'Drain the node manually or enable ENABLE_AUTO_DRAIN / ENABLE_GPU_POD_EVICTION on the driver '
            'manager, then let the init container retry.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/304',
    },
    {
        'id': 'dtk_kernel_mismatch',
        'where': 'driver_log',
        'pattern': 'broken Driver Toolkit image detected',
        'example': 'WARNING: broken Driver Toolkit image detected:',
        'cause': (
            "The OpenShift Driver Toolkit image ships kernel packages that do not match the node's running "
            'kernel, so the DTK build falls back to an entitled build.'
        ),
        'fix': (
            'Upgrade to a release whose driver-toolkit image matches the node kernel (oc get is/driver-toolkit '
            '-n openshift), or provide entitlement / repoConfig for the fallback build.'
        ),
        'source': 'https://github.com/okd-project/okd/issues/2350',
    },
    {
        'id': 'entitlement_repo_missing',
        'where': 'driver_log',
        'pattern': 'No matching repo to modify: rhocp-',
        'example': 'Error: No matching repo to modify: rhocp-4.6-for-rhel-8-x86_64-rpms.',
        'cause': (
            'The driver container could not enable the OpenShift (rhocp) repository because the node/container '
            'has no valid Red Hat entitlement for it.'
        ),
        'fix': (
            'Provide a valid entitlement (cluster-wide entitlement MachineConfig / SCA) or use the Driver '
            'Toolkit (DTK) based build that needs no entitlement.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/206',
    },
    {
        'id': 'fabric_manager_no_nvswitch',
        'where': 'driver_log',
        'pattern': 'NV_WARN_NOTHING_TO_DO',
        'example': (
            '11月 15 14:15:47 leon-NF5468M6 nv-fabricmanager[4177]: request to query NVSwitch device information '
            'from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]'
        ),
        'cause': 'Fabric Manager was started on a node without NVSwitches (e.g. PCIe GPUs with NVLink bridges), so it exits.',
        'fix': 'Do not run Fabric Manager on non-NVSwitch nodes; disable the service there.',
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/610',
    },
    {
        'id': 'kernel_devel_not_found_entitlement',
        'where': 'driver_log',
        'pattern': 'Unable to find a match: .*kernel-(headers|devel)-',
        'example': 'Error: Unable to find a match: kernel-headers-4.18.0-240.23.2.el8_3.x86_64 kernel-devel-4.18.0-240.23.2.el8_3.x86_64',
        'cause': (
            'On OpenShift/RHEL the kernel-headers/kernel-devel packages for the node kernel are not reachable, '
            'typically because the entitlement is missing or too old for the rhocp repos.'
        ),
        'fix': (
            'Regenerate and reapply the cluster entitlement (or switch to the Driver Toolkit entitlement-free '
            'build), then verify with an entitled test pod that kernel-devel for the node kernel is listed.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/234',
    },
    {
        'id': 'kernel_version_unresolved',
        'where': 'driver_log',
        'pattern': 'Could not resolve Linux kernel version',
        'example': 'Could not resolve Linux kernel version',
        'cause': "The driver container could not find kernel headers/packages in its package repositories for the node's running kernel.",
        'fix': (
            'Check that linux-headers / kernel-devel for `uname -r` exist in the distro repos (or a repoConfig '
            'mirror); otherwise move the node to a supported kernel or use a precompiled driver image.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/85',
    },
    {
        'id': 'driver_modules_not_built_for_kernel',
        'where': 'driver_log',
        'pattern': 'modprobe: FATAL: Module nvidia\\w* not found in directory /lib/modules/\\S+',
        'example': 'modprobe: FATAL: Module nvidia_uvm not found in directory /lib/modules/4.4.0-83-generic',
        'cause': (
            'No NVIDIA kernel module exists for the kernel the node runs: the driver was built for another kernel '
            '(typically the node was upgraded or rebooted into a new kernel) or its build never ran.'
        ),
        'fix': (
            'Build or pick the driver for the node\'s kernel: re-run site.yml (the driver state makes one image and '
            'DaemonSet per kernel of the GPU nodes), or set a precompiled image for that kernel.'
        ),
        'source': 'https://github.com/NVIDIA/nvidia-docker/issues/481',
    },
    {
        'id': 'nouveau_in_use',
        'where': 'driver_log',
        'pattern': 'Nouveau kernel driver is currently in use',
        'example': (
            'ERROR: The Nouveau kernel driver is currently in use by your system. This driver is incompatible '
            'with the NVIDIA driver, and must be disabled before proceeding. Please consult the NVIDIA driver '
            "README and your Linux distribution's documentation for details on how to correctly disable the "
            'Nouveau kernel driver.'
        ),
        'cause': 'The open-source nouveau driver has claimed the GPU, so the NVIDIA installer refuses to continue.',
        'fix': (
            'Blacklist nouveau on the GPU nodes (blacklist nouveau + options nouveau modeset=0 in '
            '/etc/modprobe.d, rebuild the initramfs) and reboot, then let the driver pod restart.'
        ),
        'source': 'https://github.com/thsno02/linux_learning/issues/2',
    },
    {
        'id': 'nvidia_ko_load_failed',
        'where': 'driver_log',
        'pattern': "Unable to load the kernel module 'nvidia\\.ko'",
        'example': (
            "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel "
            'module was built against the wrong or improperly configured kernel sources, with a version of gcc '
            'that differs from the one used to build the target kernel, or if another driver, such as nouveau, '
            'is present and prevents the NVIDIA kernel module from obtaining ownership of the NVIDIA device(s), '
            'or no NVIDIA device installed in this system is supported by this NVIDIA Linux graphics driver '
            'release.'
        ),
        'cause': 'The freshly built nvidia.ko could not be loaded (signing, nouveau, wrong kernel sources or unsupported GPU).',
        'fix': (
            "Read the 'Kernel module load error' and 'Kernel messages' lines that follow in the driver log / "
            'dmesg and match them against the more specific signatures (Secure Boot, nouveau, unsupported GPU).'
        ),
        'source': 'https://github.com/NVIDIA/gpu-driver-container/issues/44',
    },
    {
        'id': 'persistenced_failed',
        'where': 'driver_log',
        'pattern': 'nvidia-persistenced failed to initialize',
        'example': 'nvidia-persistenced failed to initialize. Check syslog for more details.',
        'cause': 'The NVIDIA persistence daemon could not start (permissions on /var/run/nvidia-persistenced or driver not loaded).',
        'fix': 'Check syslog for the reason, fix the runtime directory permissions / user, and make sure the driver is loaded before starting it.',
        'source': 'https://github.com/NVIDIA/nvidia-docker/issues/1648',
    },
    {
        'id': 'precompiled_packages_missing_for_kernel',
        'where': 'driver_log',
        'pattern': 'Unable to locate package linux-(objects|signatures|modules)-nvidia',
        'example': 'E: Unable to locate package linux-objects-nvidia-535-server-5.10.0-23-amd64',
        'cause': 'The precompiled (pre-signed) NVIDIA kernel module packages are not published for this kernel/OS.',
        'fix': (
            'Run a kernel for which precompiled packages exist (see NGC driver tags), or set '
            'driver.usePrecompiled=false so the modules are compiled on the node.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/558',
    },
    {
        'id': 'secure_boot_key_rejected',
        'where': 'driver_log',
        'pattern': "could not insert 'nvidia[\\w-]*': Key was rejected by service",
        'example': "mar 06 15:10:43 CS3003NS gdm3[7055]: modprobe: ERROR: could not insert 'nvidia': Key was rejected by service",
        'cause': 'The nvidia module is signed with a key the kernel does not trust while Secure Boot enforces signatures.',
        'fix': 'Enroll the signing key with mokutil (or use a distro-signed driver), or disable Secure Boot on the node.',
        'source': 'https://github.com/acidanthera/bugtracker/issues/2237',
    },
    {
        'id': 'secure_boot_load_eperm',
        'where': 'driver_log',
        'pattern': 'Kernel module load error: Operation not permitted',
        'example': 'Kernel module load error: Operation not permitted',
        'cause': 'The kernel (Secure Boot lockdown) refused to load the unsigned NVIDIA module the installer built without signing.',
        'fix': (
            'Disable Secure Boot, or deploy signed precompiled driver modules whose key is enrolled on the node; '
            "the operator cannot answer the installer's signing prompt."
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1142',
    },
    {
        'id': 'secure_boot_required_key',
        'where': 'driver_log',
        'pattern': "could not insert 'nvidia[\\w-]*': required key not available",
        'example': "ERROR: could not insert 'nvidia_367_uvm': required key not available",
        'cause': 'The module is unsigned and the kernel requires signed modules (Secure Boot enabled).',
        'fix': 'Disable Secure Boot or sign the NVIDIA modules with an enrolled MOK key / use signed precompiled modules.',
        'source': 'https://github.com/facebookresearch/deepmask/issues/49',
    },
    {
        'id': 'secure_boot_unsigned_module',
        'where': 'driver_log',
        'pattern': 'not signed by a key that is trusted by the kernel',
        'example': (
            'ERROR: The kernel module failed to load, because it was not signed by a key that is trusted by the '
            'kernel. Please try installing the driver again, and sign the kernel module when prompted to do so.'
        ),
        'cause': 'Secure Boot / module signature enforcement is on and the driver container built an unsigned nvidia.ko.',
        'fix': 'Disable Secure Boot on the node, or use a signed/precompiled driver image whose signing key is enrolled (MOK) on the node.',
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/266',
    },
    {
        'id': 'selinux_module_insert_denied',
        'where': 'driver_log',
        'pattern': "could not insert 'nvidia[\\w-]*': Permission denied",
        'example': "modprobe: ERROR: could not insert 'nvidia': Permission denied",
        'cause': 'SELinux in enforcing mode blocks the driver container from inserting the kernel module.',
        'fix': (
            'Check the AVC denials in /var/log/audit; use a driver image/policy that supports SELinux enforcing '
            'or run SELinux permissive on GPU nodes as documented.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/553',
    },
    {
        'id': 'yum_could_not_resolve_host',
        'where': 'driver_log',
        'pattern': 'Could not resolve host',
        'example': 'curl#. "Could not resolve host: mirrorlist. centos. org: Unknown error"',
        'cause': 'The driver container cannot reach the yum mirror (DNS or egress blocked), so it cannot download kernel packages.',
        'fix': 'Allow egress/DNS from the driver pod or point it at a reachable internal mirror with driver.repoConfig.',
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/379',
    },
    {
        'id': 'containerd_dropin_missing_runtime_type',
        'where': 'toolkit_log',
        'pattern': 'container\\.Runtime\\.Name must be set',
        'example': (
            'error="rpc error: code = InvalidArgument desc = failed to start sandbox '
            '\\"96ca033f576080a5cbf8365e57fad83184c690fd17ea9ffc3fa3c4bf8c6b220e\\": failed to create containerd '
            'container: create container failed validation: container.Runtime.Name must be set: invalid argument"'
        ),
        'cause': (
            "The toolkit's containerd drop-in for a version-3 root config defines the nvidia runtime without a "
            'runtime_type, so containerd cannot create sandboxes.'
        ),
        'fix': (
            'Upgrade to a toolkit/operator release with the fix, or add runtime_type = "io.containerd.runc.v2" '
            'to the nvidia runtime in the drop-in, then restart containerd.'
        ),
        'source': 'https://github.com/NVIDIA/nvidia-container-toolkit/issues/1956',
    },
    {
        'id': 'containerd_dropin_version_too_high',
        'where': 'toolkit_log',
        'pattern': 'drop-in config version \\d+ higher than root config version \\d+',
        'example': 'containerd: drop-in config version 4 higher than root config version 2',
        'cause': (
            "The toolkit built its containerd drop-in from 'containerd config dump' (migrated to a newer config "
            'version) while /etc/containerd/config.toml declares an older version, so containerd refuses to '
            'start and the node goes NotReady.'
        ),
        'fix': (
            'Set toolkit env RUNTIME_CONFIG_SOURCE=file so the drop-in matches the on-disk config version. '
            'Remove the bad /etc/containerd/conf.d/99-nvidia.toml and restart containerd.'
        ),
        'source': 'https://github.com/NVIDIA/aicr/issues/1688',
    },
    {
        'id': 'nvml_version_mismatch',
        'where': 'toolkit_log',
        'pattern': 'Failed to initialize NVML: Driver/library version mismatch',
        'example': 'Failed to initialize NVML: Driver/library version mismatch',
        'cause': (
            'The loaded kernel module and the user-space NVML library come from different driver versions '
            '(driver upgraded without reloading the module).'
        ),
        'fix': 'Reload the driver (drain, unload modules, restart driver pod) or reboot the node so module and libraries match.',
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/1431',
    },
    {
        'id': 'config_manager_symlink_exists',
        'where': 'device_plugin_log',
        'pattern': 'error creating symlink: symlink /available-configs/\\S+ /config/config\\.yaml: file exists',
        'example': (
            'config-manager time="2022-12-23T13:54:55Z" level=info msg="Error: error creating symlink: symlink '
            '/available-configs/config-3 /config/config.yaml: file exists"'
        ),
        'cause': (
            'After the time-slicing ConfigMap was edited and the nvidia.com/device-plugin.config node label '
            'changed, the config-manager sidecar could not replace the active config symlink, so the device '
            'plugin crashes.'
        ),
        'fix': 'Restart the device plugin pod so it starts from the new config, or upgrade to a plugin release with the config-manager fix.',
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/364',
    },
    {
        'id': 'device_plugin_incompatible_strategy',
        'where': 'device_plugin_log',
        'pattern': 'Incompatible strategy detected',
        'example': 'E0506 17:45:45.421956       1 factory.go:112] Incompatible strategy detected auto',
        'cause': (
            'The device plugin container sees neither NVML nor Tegra because no driver libraries were injected; '
            'it is not running under the NVIDIA runtime.'
        ),
        'fix': (
            'Make nvidia the default runtime (nvidia-ctk runtime configure --set-as-default, then restart '
            'containerd), or run the plugin with runtimeClassName: nvidia. Then delete the plugin pod.'
        ),
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/1220',
    },
    {
        'id': 'device_plugin_invalid_discovery_strategy',
        'where': 'device_plugin_log',
        'pattern': 'invalid device discovery strategy',
        'example': (
            'E0506 17:45:45.442750       1 main.go:173] error starting plugins: error getting plugins: unable to '
            'create plugins: failed to construct resource managers: invalid device discovery strategy'
        ),
        'cause': (
            "Same root cause as 'Incompatible strategy detected': with discovery strategy auto the plugin found "
            'no NVML or Tegra platform, so it cannot build resource managers.'
        ),
        'fix': (
            'Give the plugin the NVIDIA runtime (default runtime or runtimeClassName: nvidia) so '
            'libnvidia-ml.so.1 is injected, then restart the plugin pod.'
        ),
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/1220',
    },
    {
        'id': 'device_plugin_no_devices_waiting',
        'where': 'device_plugin_log',
        'pattern': 'No devices found\\. Waiting indefinitely',
        'example': '2023/06/12 09:21:25 No devices found. Waiting indefinitely.',
        'cause': (
            'The device plugin started but found zero GPUs (for example it came up before the driver after a '
            'reboot, or without driver access), and it does not retry, so it advertises no nvidia.com/gpu.'
        ),
        'fix': (
            'Restart the device plugin pod once the driver is ready and check the runtime setup. Set '
            'failOnInitError=true so the pod crash-loops visibly instead of idling.'
        ),
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/414',
    },
    {
        'id': 'device_plugin_xid_unhealthy',
        'where': 'device_plugin_log',
        'pattern': 'XidCriticalError: Xid=\\d+ on Device=\\S+',
        'example': '2020/08/10 19:09:42 XidCriticalError: Xid=69 on Device=GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8, the device will go unhealthy.',
        'cause': 'The device plugin received a critical Xid for this GPU and removed it from allocatable nvidia.com/gpu.',
        'fix': 'Check dmesg for the Xid, fix/reset the GPU, then restart the device plugin pod (it does not mark devices healthy again by itself).',
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/189',
    },
    {
        'id': 'mig_enabled_without_instances',
        'where': 'device_plugin_log',
        'pattern': 'No MIG devices associated with /dev/nvidia\\d+',
        'example': (
            'panic: At least one device with migEnabled=true was not configured correctly: No MIG devices '
            'associated with /dev/nvidia0: GPU-fe14a161-d1f3-7706-c257-3b22fe15c684'
        ),
        'cause': 'MIG mode is enabled on the GPU but no GPU/compute instances exist, which the single strategy treats as a misconfiguration.',
        'fix': 'Create MIG instances (nvidia-smi mig -cgi ... -C or a mig-manager config), or disable MIG mode on that GPU.',
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/253',
    },
    {
        'id': 'mig_monitor_insufficient_permissions',
        'where': 'device_plugin_log',
        'pattern': 'error getting device memory info: Insufficient P\\w*missions',
        'example': (
            'error starting plugins: unable to add default resources to config: error visiting devices: error '
            'visiting device: error visiting device: error getting device memory info: Insufficient Pemmissions'
        ),
        'cause': 'On a MIG-enabled node the device plugin container lacks the MIG monitor capability, so NVML denies memory queries on MIG devices.',
        'fix': "Set NVIDIA_MIG_MONITOR_DEVICES=all in the device plugin's environment (the Helm chart/operator do this) and restart it.",
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/399',
    },
    {
        'id': 'mig_single_strategy_mixed_profiles',
        'where': 'device_plugin_log',
        'pattern': 'More than one MIG device type present on node',
        'example': 'panic: At least one device with migEnabled=true was not configured correctly: More than one MIG device type present on node',
        'cause': 'mig.strategy=single requires every MIG device on the node to have the same profile, but the node has mixed MIG profiles.',
        'fix': (
            'Use mig.strategy=mixed for this node, or re-partition the GPUs to a uniform profile (for example '
            'the nvidia.com/mig.config=all-1g.10gb label with mig-manager).'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/460',
    },
    {
        'id': 'nvml_library_not_found',
        'where': 'device_plugin_log',
        # go-nvml's error text since the plugin moved to it: ERROR_LIBRARY_NOT_FOUND (NVIDIA/k8s-device-plugin#1805).
        'pattern': 'Failed to initialize NVML: (could not load NVML library|ERROR_LIBRARY_NOT_FOUND)',
        'example': '2019/09/30 12:34:07 Failed to initialize NVML: could not load NVML library.',
        'cause': (
            'The device plugin cannot find libnvidia-ml, because the driver is not installed or the container is '
            'not started with the nvidia runtime.'
        ),
        'fix': (
            'Verify the driver is installed/ready on the node and that the nvidia runtime is the default (or the '
            'RuntimeClass is used) for the plugin pod.'
        ),
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/139',
    },
    {
        'id': 'gfd_mig_labeler_failed',
        'where': 'gfd_log',
        'pattern': 'failed to construct MIG resource labeler',
        'example': (
            'gpu-feature-discovery: 2022/06/15 03:25:50 Error: error creating NVML labeler: error creating '
            'resource labeler: failed to construct MIG resource labeler: failed to create labeler for '
            'mig-strategy=single: failed to check for empty MIG-enabled devices: NVML error: Not Found'
        ),
        'cause': (
            'GFD, running with mig-strategy=single on a MIG-enabled GPU, could not enumerate MIG devices (NVML '
            'returned Not Found), so it exits and writes no labels.'
        ),
        'fix': (
            'Check that the MIG instances exist and are visible in the GFD pod (nvidia-smi mig -lgi), and that '
            "GFD's MIG strategy matches the device plugin's."
        ),
        'source': 'https://github.com/NVIDIA/gpu-feature-discovery/issues/24',
    },
    {
        'id': 'gfd_no_labels_generated',
        'where': 'gfd_log',
        'pattern': 'no labels generated from any source',
        'example': '2023/03/22 09:10:04 Warning: no labels generated from any source',
        'cause': (
            'GFD detected a non-NVML platform (libnvidia-ml.so.1 not loadable in its container), so it writes an '
            'empty label file and nodes lack nvidia.com/gpu.* labels.'
        ),
        'fix': 'Give GFD access to the driver through the NVIDIA runtime (default runtime or runtimeClassName: nvidia) and restart the GFD pod.',
        'source': 'https://github.com/NVIDIA/gpu-feature-discovery/issues/36',
    },
    {
        'id': 'gfd_nvml_init_failed',
        'where': 'gfd_log',
        'pattern': 'error creating NVML labeler: failed to initialize NVML',
        'example': (
            'gpu-feature-discovery: 2022/08/30 02:07:24 Error: error creating NVML labeler: failed to initialize '
            'NVML: unexpected failure calling nvml.Init: error opening libnvidia-ml.so.1'
        ),
        'cause': (
            "GFD's container has no NVML library because it is not running under the NVIDIA runtime, so it exits "
            'without writing nvidia.com/gpu.* labels.'
        ),
        'fix': 'Run GFD with runtimeClassName: nvidia, or make nvidia the default runtime on GPU nodes, then restart the GFD pod.',
        'source': 'https://github.com/NVIDIA/gpu-feature-discovery/issues/25',
    },
    {
        'id': 'nfd_worker_cannot_reach_master',
        'where': 'gfd_log',
        'pattern': 'createTransport failed to connect to \\{\\S*node-feature-discovery-master',
        'example': (
            'W1027 04:06:26.672234       1 component.go:41] [core]grpc: addrConn.createTransport failed to '
            'connect to {gpu-operator-node-feature-discovery-master:8080 '
            'gpu-operator-node-feature-discovery-master:8080 <nil> 0 <nil>}. Err: connection error: desc = '
            '"transport: Error while dialing dial tcp: lookup gpu-operator-node-feature-discovery-master on '
            '10.43.0.10:53: no such host". Reconnecting...'
        ),
        'cause': (
            'nfd-worker cannot reach the nfd-master service (DNS lookup or network between nodes fails), so NFD '
            'labels such as pci-10de.present never reach the node and the GPU Operator deploys nothing there.'
        ),
        'fix': (
            'Fix cluster DNS/CNI reachability from the GPU node to the nfd-master service (check CoreDNS, '
            'security groups, network policies), then restart nfd-worker.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/429',
    },
    {
        'id': 'operator_no_gpu_nodes_labeled',
        'where': 'gfd_log',
        'pattern': 'Could not get any nodes to match nvidia\\.com/gpu\\.present label',
        'example': (
            '{"level":"info","ts":1613468313.7898238,"logger":"controller_clusterpolicy","msg":"Could not get '
            'any nodes to match nvidia.com/gpu.present '
            'label","Request.Namespace":"default","Request.Name":"Node","ERROR":""}'
        ),
        'cause': (
            'No node carries the NFD labels (for example feature.node.kubernetes.io/pci-10de.present, '
            'kernel-version.full) because NFD is missing or not labelling, so the operator finds no GPU nodes to '
            'deploy operands to.'
        ),
        'fix': (
            'Install Node Feature Discovery (NFD Operator on OpenShift, nfd.enabled=true in Helm) and check that '
            'GPU nodes get feature.node.kubernetes.io/pci-10de.present=true.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/149',
    },
    {
        'id': 'plugin_config_unmarshal_error',
        'where': 'gfd_log',
        'pattern': 'unable to (load|parse) config.*unmarshal',
        'example': (
            'unable to load config: unable to finalize config: unable to parse config file: error parsing config '
            'file: unmarshal error: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array '
            'into Go struct field PluginCommandLineFlags.flags.plugin.deviceListStrategy of type string'
        ),
        'cause': (
            'The shared device-plugin/GFD config file (ConfigMap used for flags and time-slicing) has a field '
            'type this component version does not accept (deviceListStrategy given as a list where a string is '
            'expected, or the reverse).'
        ),
        'fix': (
            'Write the config file to the schema of the deployed plugin/GFD version (check its README example) '
            'and keep the device plugin and GFD versions aligned, then restart the pods.'
        ),
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/410',
    },
    {
        'id': 'dcgm_hostengine_init_error',
        'where': 'dcgm_log',
        'pattern': 'Error starting nv-hostengine: DCGM initialization error',
        'example': 'time="2021-12-14T17:28:56Z" level=fatal msg="Error starting nv-hostengine: DCGM initialization error"',
        'cause': (
            "The exporter's embedded nv-hostengine failed to initialize (reported on a node with a MIG-enabled "
            'A100, where the hostengine needs to see whole GPUs).'
        ),
        'fix': (
            'On MIG nodes, run nv-hostengine separately with full GPU visibility and point dcgm-exporter at it '
            '(-r). Otherwise give the exporter the NVIDIA runtime, visibility of all GPUs, and the required '
            'capabilities.'
        ),
        'source': 'https://github.com/NVIDIA/dcgm-exporter/issues/34',
    },
    {
        'id': 'dcgm_module_not_loaded',
        'where': 'dcgm_log',
        'pattern': 'Error watching fields: This request is serviced by a module of DCGM that is not currently loaded',
        'example': (
            'time="2020-10-27T20:31:42Z" level=fatal msg="Error watching fields: This request is serviced by a '
            'module of DCGM that is not currently loaded"'
        ),
        'cause': (
            'dcgm-exporter is configured to watch profiling (DCP) fields that the GPU or DCGM cannot serve '
            '(profiling module not loaded), and older exporters exit on it.'
        ),
        'fix': 'Upgrade dcgm-exporter (2.1.2+ skips unsupported metrics) or remove the DCGM_FI_PROF_* lines from the metrics CSV/ConfigMap.',
        'source': 'https://github.com/NVIDIA/gpu-monitoring-tools/issues/120',
    },
    {
        'id': 'dcgm_nvml_library_not_found',
        'where': 'dcgm_log',
        'pattern': 'Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND',
        'example': 'time=2026-09-19T20:06:59.547Z level=ERROR msg="Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND"',
        'cause': 'dcgm-exporter runs without the NVIDIA runtime, so libnvidia-ml.so.1 is not injected into its container.',
        'fix': 'Run dcgm-exporter with runtimeClassName: nvidia, or make nvidia the default runtime on GPU nodes.',
        'source': 'https://github.com/NVIDIA/dcgm-exporter/issues/612',
    },
    {
        'id': 'dcgm_remote_hostengine_unreachable',
        'where': 'dcgm_log',
        'pattern': 'Error connecting to nv-hostengine: Host engine connection invalid/disconnected',
        'example': 'time="2022-09-29T12:09:14Z" level=fatal msg="Error connecting to nv-hostengine: Host engine connection invalid/disconnected"',
        'cause': (
            'dcgm-exporter is set to use a remote hostengine (DCGM_REMOTE_HOSTENGINE_INFO, for example '
            'localhost:5555), but no nv-hostengine is listening there.'
        ),
        'fix': (
            'Run the standalone DCGM pod/service (dcgm.enabled) on the node, or remove '
            'DCGM_REMOTE_HOSTENGINE_INFO so the exporter uses its embedded hostengine.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/414',
    },
    {
        'id': 'dcgm_watch_bad_parameter',
        'where': 'dcgm_log',
        'pattern': 'Failed to watch metrics: Error watching fields: Bad parameter',
        'example': 'Failed to watch metrics: Error watching fields: Bad parameter passed to function',
        'cause': 'The enabled DCP/profiling metrics are not accepted by this DCGM/exporter/GPU combination, so the field watch fails at startup.',
        'fix': 'Remove the unsupported DCGM_FI_PROF_* metrics from the collectors CSV, or align the dcgm-exporter and DCGM versions with the GPU.',
        'source': 'https://github.com/NVIDIA/dcgm-exporter/issues/431',
    },
    {
        'id': 'fabric_manager_not_running_cuda',
        'where': 'validator_log',
        'pattern': 'error code system not yet initialized',
        'example': 'Failed to allocate device vector A (error code system not yet initialized)! [Vector addition of 5000 elements]',
        'cause': 'CUDA cannot initialize on an NVSwitch system because nvidia-fabricmanager is not running or does not match the driver version.',
        'fix': (
            "Install/enable nvidia-fabricmanager with exactly the driver's version (or let the driver container "
            'start it) and check its status before re-running the validator.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1043',
    },
    {
        'id': 'nvidia_smi_cannot_communicate',
        'where': 'validator_log',
        'pattern': 'NVIDIA-SMI has failed because it couldn.?t communicate with the NVIDIA driver',
        'example': (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
            'latest NVIDIA driver is installed and running.'
        ),
        'cause': 'No NVIDIA kernel module is loaded, typically after a kernel upgrade left the driver built for the old kernel.',
        'fix': (
            'Rebuild/reinstall the driver for the running kernel (restart the driver pod, or DKMS on '
            'host-installed drivers) and check dmesg for load errors.'
        ),
        'source': 'https://github.com/GoogleCloudPlatform/compute-gpu-installation/pull/18',
    },
    {
        'id': 'validator_driver_not_ready',
        'where': 'validator_log',
        'pattern': 'failed to validate the driver, retrying after \\d+ seconds',
        'example': 'WARN[0000] failed to validate the driver, retrying after 5 seconds',
        'cause': 'The operator validator finds neither a working pre-installed driver nor a ready driver container.',
        'fix': (
            'Look at the nvidia-driver-daemonset pod logs (or the host driver) for the real failure; on hosts '
            'with custom driver paths set driver.enabled / hostPaths correctly.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1687',
    },
    {
        'id': 'validator_driver_nvidia_smi_missing',
        'where': 'validator_log',
        'pattern': "chroot: failed to run command 'nvidia-smi'",
        'example': "chroot: failed to run command 'nvidia-smi': No such file or directory",
        'cause': (
            'driver-validation looks for the containerized driver under /run/nvidia/driver and nothing is there: '
            'the driver pod is still installing or failed, or the driver is on the host while the operator '
            'expects a driver container.'
        ),
        'fix': (
            'Read the nvidia-driver-daemonset logs. If the driver is pre-installed on the host, set '
            'driver.enabled=false, then delete the validator pod.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/378',
    },
    {
        'id': 'cdi_unresolvable_devices',
        'where': 'event',
        'pattern': 'unresolvable CDI devices\\s+\\S+',
        'example': (
            'Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: '
            'could not apply required modification to OCI specification: error modifying OCI spec: failed to '
            'inject CDI devices: unresolvable CDI devices '
            'management.nvidia.com/gpu=GPU-e78e68c0-4e6a-737e-f9cc-4223fe50aead'
        ),
        'cause': (
            'The pod asked for a CDI device name (here a GPU UUID) that is not in any CDI spec file the runtime '
            "loaded; the generated spec was missing, stale, or only held the 'all' device."
        ),
        'fix': (
            'Regenerate the CDI spec on the node (restart the toolkit daemonset or run nvidia-ctk cdi generate) '
            'and check that /var/run/cdi or /etc/cdi lists every GPU by index and UUID. Make sure the device '
            "plugin's CDI kind/prefix matches the generated spec."
        ),
        'source': 'https://github.com/NVIDIA/nvidia-container-toolkit/issues/1239',
    },
    {
        'id': 'container_cli_libnvidia_ml_missing',
        'where': 'event',
        'pattern': 'load library failed: libnvidia-ml\\.so\\.1',
        'example': (
            'nvidia-container-cli.real: initialization error: load library failed: libnvidia-ml.so.1: cannot '
            'open shared object file: no such file or directory: unknown'
        ),
        'cause': 'The nvidia runtime hook ran but found no driver user-space libraries at the configured driver root.',
        'fix': (
            "Check that the driver (container or host) is up and that the toolkit's driver root matches where "
            'the driver is installed (/run/nvidia/driver vs /).'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/511',
    },
    {
        'id': 'container_cli_nvml_version_mismatch',
        'where': 'event',
        'pattern': 'nvidia-container-cli(\\.real)?: initialization error: nvml error: driver/library version mismatch',
        'example': 'nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown',
        'cause': 'The container runtime hook found user-space driver libraries that do not match the loaded kernel module.',
        'fix': 'Make sure only one driver is present (host-installed vs operator driver), then reload the module or reboot the node.',
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/898',
    },
    {
        'id': 'containerd_no_nvidia_runtime',
        'where': 'event',
        'pattern': 'no runtime for \\W?nvidia\\W? is configured',
        'example': (
            'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no '
            'runtime for "nvidia" is configured'
        ),
        'cause': (
            "The pod uses RuntimeClass 'nvidia', but containerd on that node has no 'nvidia' runtime handler, "
            'because the toolkit did not write it, wrote it to a file containerd does not read, or containerd '
            'was not restarted.'
        ),
        'fix': (
            'Check the nvidia-container-toolkit-daemonset logs on that node and confirm the containerd config '
            '(or an imported drop-in) has runtimes.nvidia. On k3s/RKE2, set CONTAINERD_CONFIG and '
            "CONTAINERD_SOCKET to the distro's paths, then restart containerd."
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/730',
    },
    {
        'id': 'crio_no_nvidia_runtime_handler',
        'where': 'event',
        'pattern': 'failed to find runtime handler nvidia',
        'example': 'Failled to create pod sandbox:rpc error code = Unknown desc = failed to find runtime handler nvidia from',
        'cause': (
            'On CRI-O (OpenShift) the NVIDIA toolkit is installed as an OCI prestart hook, not as a runtime '
            'handler, so a pod that sets runtimeClassName: nvidia has no matching handler.'
        ),
        'fix': (
            'On CRI-O clusters, remove runtimeClassName: nvidia from the pod (the hook or CDI provides the GPU). '
            'If a handler is really needed, add an nvidia runtime to the CRI-O configuration.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1298',
    },
    {
        'id': 'crio_runtime_hook_failed',
        'where': 'event',
        'pattern': 'error executing hook `?[^`\\s]*nvidia-container-runtime-hook`? \\(exit code: \\d+\\)',
        'example': (
            'Warning  Failed          4m49s (x4 over 5m59s)   kubelet            Error: container create failed: '
            'error executing hook `/usr/local/nvidia/toolkit/nvidia-container-runtime-hook` (exit code: 1)'
        ),
        'cause': (
            'On CRI-O the NVIDIA prestart hook exited non-zero while the container was being created; the hook '
            'could not set up the GPU (for example the driver is not where the toolkit config points).'
        ),
        'fix': (
            'Turn on debug in the toolkit config.toml and read /var/log/nvidia-container-*.log on the node. '
            'Check the driver root and the CRI-O hooks_dir, then delete the validator pod to retry.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1598',
    },
    {
        'id': 'daemonset_failedcreate_psp',
        'where': 'event',
        'pattern': 'PodSecurityPolicy: unable to admit pod',
        'example': (
            '81s         Warning   FailedCreate   daemonset/nvidia-driver-daemonset   Error creating: pods '
            '"nvidia-driver-daemonset-" is forbidden: PodSecurityPolicy: unable to admit pod: '
            '[spec.securityContext.hostPID: Invalid value: true: Host PID is not allowed to be used '
            'spec.volumes[0]: Invalid value: "hostPath": hostPath volumes are not allowed to be used '
            'spec.volumes[1]: Invalid value: "hostPath": hostPath volumes are not allowed to be used '
            'spec.volumes[2]: Invalid value: "hostPath": hostPath volumes are not allowed to be used '
            'spec.containers[0].securityContext.privileged: Invalid value: true: Privileged containers are not '
            'allowed]'
        ),
        'cause': (
            'On clusters that still run PodSecurityPolicy (Kubernetes before 1.25), no PSP bound to the '
            "operand's service account allows hostPID, hostPath and privileged, so the DaemonSet controller "
            'cannot create the driver pods.'
        ),
        'fix': "Install with psp.enabled=true, or bind a privileged PSP to the operand service accounts (Role/RoleBinding with 'use').",
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/185',
    },
    {
        'id': 'driver_image_os_tag_manifest_unknown',
        'where': 'event',
        'pattern': 'Failed to pull image \\"[^\\"]*/driver:[^\\"]*-(rhcos|scos)\\d+\\.\\d+\\".*manifest unknown',
        'example': (
            'Warning  Failed          4s (x2 over 20s)  kubelet            Failed to pull image '
            '"nvcr.io/nvidia/driver:470.57.02-rhcos4.9": rpc error: code = Unknown desc = Error reading manifest '
            '470.57.02-rhcos4.9 in nvcr.io/nvidia/driver: manifest unknown: manifest unknown'
        ),
        'cause': 'No driver image is published for this driver version with the OS suffix the operator appended (here a new RHCOS 4.x release).',
        'fix': 'Pick a driver version that has an image for this OpenShift/RHCOS release (check NGC tags) or mirror/build one with the expected tag.',
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/245',
    },
    {
        'id': 'image_manifest_unknown',
        'where': 'event',
        'pattern': 'Failed to pull image "(?![^"]*/driver:[^"]*-(?:rhcos|scos)\\d)[^"]+":.*manifest unknown',
        'example': (
            'Failed to pull image "registry.svc.ci.openshift.org/origin/4.3-2019-10-29-062458@sha256:'
            '8184092486c345c2b757f366f146218a115e5d7a92b481cb76257358653ec852": rpc error: code = Unknown desc = '
            'Error reading manifest sha256:8184092486c345c2b757f366f146218a115e5d7a92b481cb76257358653ec852 in '
            'registry.svc.ci.openshift.org/origin/4.3-2019-10-29-062458: manifest unknown: manifest unknown'
        ),
        'cause': (
            'The registry has no image of that tag or digest: never pushed (a driver build that did not finish or '
            'failed), pruned, or a mirror that lacks it.'
        ),
        'fix': (
            'Make the image exist where the pod pulls it: for a driver image the collection builds, re-run site.yml '
            '--tags driver (it builds the missing image) and read the Build status; for a mirror, mirror the tag.'
        ),
        'source': 'https://github.com/raffaelespazzoli/credscontroller/issues/10',
    },
    {
        'id': 'driver_image_tag_not_found',
        'where': 'event',
        'pattern': 'nvcr\\.io/nvidia/driver:[^\\"\\s]+: not found',
        'example': (
            'Failed to pull image "nvcr.io/nvidia/driver:515.65.01-buildroot2021.02.12": rpc error: code = '
            'NotFound desc = failed to pull and unpack image '
            '"nvcr.io/nvidia/driver:515.65.01-buildroot2021.02.12": failed to resolve reference '
            '"nvcr.io/nvidia/driver:515.65.01-buildroot2021.02.12": '
            'nvcr.io/nvidia/driver:515.65.01-buildroot2021.02.12: not found'
        ),
        'cause': 'The operator derived a driver image tag (version + detected OS) that does not exist, usually because the node OS is not supported.',
        'fix': (
            'Check the node OS against the supported platforms; use a supported OS, pre-install the driver '
            '(driver.enabled=false), or build a driver image for this OS.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/418',
    },
    {
        'id': 'image_pull_forbidden_nvcr',
        'where': 'event',
        'pattern': 'Failed to pull image .*: 403 Forbidden',
        'example': (
            'Failed to pull image "nvcr.io/nvidia/gpu-operator:v24.6.2": failed to pull and unpack image '
            '"nvcr.io/nvidia/gpu-operator:v24.6.2": failed to resolve reference '
            '"nvcr.io/nvidia/gpu-operator:v24.6.2": unexpected status from HEAD request to '
            'https://nvcr.io/v2/nvidia/gpu-operator/manifests/v24.6.2: 403 Forbidden'
        ),
        'cause': (
            "nvcr.io refused the node's manifest request; the node's egress path (proxy, firewall, mirror) or "
            'the credentials in use are not allowed to fetch that image.'
        ),
        'fix': (
            "Run 'crictl pull' of the same image from the node to reproduce, then check proxy/mirror "
            'configuration and credential scope. Otherwise mirror the images to a reachable registry.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1020',
    },
    {
        'id': 'image_pull_unauthorized',
        'where': 'event',
        'pattern': 'Failed to pull image .*(unauthorized: authentication required|401 Unauthorized|pull access denied)',
        'example': (
            'Failed to pull image "xxxxxxxxxxxxxxxxxxxx/test-service:latest": rpc error: code = Unknown desc = '
            'unauthorized: authentication required'
        ),
        'cause': "The registry requires credentials, and the pull secret is missing, wrong, or not attached to the pod's service account or spec.",
        'fix': (
            'Create a docker-registry secret with valid credentials (for nvcr.io: user $oauthtoken with an NGC '
            'API key) and reference it in imagePullSecrets (operator: the per-component imagePullSecrets values).'
        ),
        'source': 'https://github.com/rancher-archives/rke/issues/167',
    },
    {
        'id': 'openshift_scc_denied',
        'where': 'event',
        'pattern': 'unable to validate against any security context constraint',
        'example': (
            'Error creating: pods "gpu-operator-1585286165-node-feature-discovery-worker-" is forbidden: unable '
            'to validate against any security context constraint: [provider restricted: '
            '.spec.securityContext.hostNetwork: Invalid value: true: Host network is not allowed to be used '
            'spec.volumes[0]: Invalid value: "hostPath": hostPath volumes are not allowed to be used'
        ),
        'cause': (
            "On OpenShift the operand's service account may only use the restricted SCC, which forbids the "
            'hostNetwork and hostPath that NFD/GPU operands need, so the DaemonSet cannot create pods.'
        ),
        'fix': (
            'Install NFD through the NFD Operator and the GPU Operator through OLM, which create the right SCCs. '
            'Otherwise grant the SCC to the service account (oc adm policy add-scc-to-user privileged -z <sa>).'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/48',
    },
    {
        'id': 'pod_security_admission_denied',
        'where': 'event',
        'pattern': 'violates PodSecurity "(restricted|baseline)(:[^"]*)?"',
        'example': (
            '3m59s       Warning   FailedCreate        replicaset/nginx-7465574dbf   Error creating: pods '
            '"nginx-7465574dbf-p56fr" is forbidden: violates PodSecurity "restricted:latest": '
            'allowPrivilegeEscalation != false (container "nginx-unprivileged" must set '
            'securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container '
            '"nginx-unprivileged" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod '
            'or container "nginx-unprivileged" must set securityContext.runAsNonRoot=true), seccompProfile (pod '
            'or container "nginx-unprivileged" must set securityContext.seccompProfile.type to "RuntimeDefault" '
            'or "Localhost")'
        ),
        'cause': (
            'The namespace enforces the restricted (or baseline) Pod Security level, the default on OpenShift '
            '4.11+/MicroShift, so privileged or hostPath pods such as GPU operands are rejected at admission.'
        ),
        'fix': (
            'Label the GPU operator or device plugin namespace pod-security.kubernetes.io/enforce=privileged '
            '(OLM installs do this), or deploy into a namespace that allows privileged pods.'
        ),
        'source': 'https://github.com/openshift/microshift/issues/1163',
    },
    {
        'id': 'resource_quota_gpu_exceeded',
        'where': 'event',
        'pattern': 'exceeded quota: .*nvidia\\.com/',
        'example': (
            'Error from server (Forbidden): error when creating "gpu-pod.yaml": pods "gpu-pod-f7z2w" is '
            'forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: '
            'requests.nvidia.com/gpu=1, limited: requests.nvidia.com/gpu=1'
        ),
        'cause': (
            'The namespace ResourceQuota for requests.nvidia.com/gpu is used up, so the API server rejects the '
            'pod at admission even though nodes still have free GPUs.'
        ),
        'fix': (
            'Free GPUs in that namespace or raise the ResourceQuota (requests.nvidia.com/gpu). For controllers, '
            'look for FailedCreate events on the ReplicaSet or Job.'
        ),
        'source': 'https://github.com/openshift/openshift-docs/blob/22a44cce6631f6c9f8809c0cf4e7496d64fd7ceb/modules/admin-quota-overview.adoc',
    },
    {
        'id': 'runtimeclass_not_found',
        'where': 'event',
        'pattern': 'RuntimeClass "[^"]+" not found',
        'example': 'Error creating: pods "prune-test1-ix-chart-6c6f674cbb-" is forbidden: pod rejected: RuntimeClass "nvidia" not found',
        'cause': (
            'The pod spec (or a webhook that mutates it) sets runtimeClassName: nvidia, but the cluster has no '
            'RuntimeClass object with that name, so admission rejects the pod.'
        ),
        'fix': (
            "Create the 'nvidia' RuntimeClass (handler: nvidia); the GPU Operator normally creates it. Otherwise "
            'remove runtimeClassName, or stop the webhook from injecting it, on clusters where the default '
            'runtime already handles GPUs.'
        ),
        'source': 'https://github.com/truenas/middleware/pull/11178',
    },
    {
        'id': 'scheduling_insufficient_gpu',
        'where': 'event',
        'pattern': 'Insufficient nvidia\\.com/(gpu|mig-[\\w.]+)',
        'example': (
            'Warning  FailedScheduling  3s (x5 over 9s)  default-scheduler  0/6 nodes are available: 3 node(s) '
            "didn't match node selector, 6 Insufficient nvidia.com/gpu."
        ),
        'cause': (
            'No eligible node has enough allocatable nvidia.com/gpu: the device plugin is not registered or '
            'advertises 0, all GPUs are taken, or the requested resource name does not match (for example with '
            'MIG mixed or renamed shared resources).'
        ),
        'fix': (
            "Check Allocatable nvidia.com/gpu in 'kubectl describe node' and the device plugin logs. Then free "
            'GPUs, add capacity, or request the resource name the node actually advertises.'
        ),
        'source': 'https://github.com/NVIDIA/k8s-device-plugin/issues/283',
    },
    {
        'id': 'scheduling_untolerated_gpu_taint',
        'where': 'event',
        'pattern': 'untolerated taint \\{nvidia\\.com/gpu:',
        'example': 'FailedScheduling   2m21s (x42 over 60m)  default-scheduler  1 node(s) had untolerated taint {nvidia.com/gpu: present}',
        'cause': 'The GPU nodes carry an nvidia.com/gpu NoSchedule taint (GKE adds one automatically) and the pod has no matching toleration.',
        'fix': (
            'Add a toleration to the workload: key nvidia.com/gpu, operator Exists, effect NoSchedule. Or add it '
            'to the controller that generates the pod.'
        ),
        'source': 'https://github.com/vllm-project/aibrix/pull/909',
    },
    {
        'id': 'toolkit_libnvidia_container_go_load_failed',
        'where': 'event',
        'pattern': 'load library failed: libnvidia-container-go\\.so\\.1',
        'example': (
            'Warning  Failed     3m29s (x4 over 4m51s)  kubelet            Error: failed to create containerd '
            'task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start '
            'container process: error during container init: error running hook #0: error running hook: exit '
            'status 1, stdout: , stderr: nvidia-container-cli.real: initialization error: load library failed: '
            'libnvidia-container-go.so.1: cannot open shared object file: no such file or directory: unknown'
        ),
        'cause': (
            "When the runtime hook ran, it could not load the toolkit's own helper library "
            'libnvidia-container-go.so.1, so the toolkit install on the node is broken or not on the loader path.'
        ),
        'fix': (
            'Check that /usr/local/nvidia/toolkit holds libnvidia-container-go.so.1 and that the hook runs the '
            'toolkit-installed binaries. Restart or reinstall the container-toolkit daemonset and retry the '
            'validator.'
        ),
        'source': 'https://github.com/NVIDIA/gpu-operator/issues/1364',
    },
    {
        'id': 'nvml_unknown_error_after_daemon_reload',
        'where': 'pod_status',
        'pattern': 'Failed to initialize NVML: Unknown Error',
        'example': 'Failed to initialize NVML: Unknown Error',
        'cause': (
            'With the systemd cgroup driver, a systemd reload (for example systemctl daemon-reload) re-applies '
            "the container's device rules without the NVIDIA devices, because /dev/char symlinks are missing, so "
            'running containers lose GPU access.'
        ),
        'fix': (
            'Delete or restart the affected pods to regain access. Prevent recurrence by creating /dev/char '
            'symlinks for NVIDIA devices (nvidia-ctk system create-dev-char-symlinks or a udev rule) or by '
            'upgrading to a toolkit with the documented fix.'
        ),
        'source': 'https://github.com/NVIDIA/nvidia-container-toolkit/issues/48',
    },
    {
        'id': 'node_not_ready_kubelet_stopped',
        'where': 'node_condition',
        'pattern': 'Kubelet stopped posting node status',
        'example': (
            'OutOfDisk             Unknown         Fri, 07 Oct 2016 08:13:50 +0000         Fri, 07 Oct 2016 '
            '08:14:30 +0000         NodeStatusUnknown Kubelet stopped posting node status.'
        ),
        'cause': (
            'The kubelet stopped sending heartbeats, so the node went NotReady/Unknown; on GPU nodes this often '
            'follows a container runtime crash after a bad runtime config or a hung driver.'
        ),
        'fix': (
            "On the node, read 'journalctl -u kubelet -u containerd'. Revert any broken runtime config (for "
            'example the NVIDIA containerd drop-in), restart containerd and kubelet, or reboot the node.'
        ),
        'source': 'https://github.com/kubernetes/kubernetes/issues/34314',
    },
)
# fmt: on
