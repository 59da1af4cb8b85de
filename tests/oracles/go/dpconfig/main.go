// Copyright: (c) 2026, gpuops.cluster contributors
// Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)

// Command dpconfig loads an NVIDIA device plugin config file with the plugin's own loader and prints what the
// plugin would run with, as JSON on stdout.
//
// The loader is the plugin's: spec.NewConfig (api/config/v1/config.go; it reads CONFIG_FILE through parseConfig,
// then lets set flags / env override the file), then what cmd/nvidia-device-plugin/main.go does next
// (loadConfig drops Flags.GFD, startPlugins calls spec.DisableResourceNamingInConfig). main.go is package main and
// cannot be imported, so its flag declarations are copied below for the env the role's DaemonSet sets (same names,
// env vars and defaults as k8s-device-plugin cmd/nvidia-device-plugin/main.go), and so are the checks of its
// validateFlags that need no NVML.
//
// Exit status: 0 and {"config": ...} on stdout when the plugin accepts the config; 2 and the loader's error on
// stderr when spec.NewConfig refuses it (the plugin exits with "unable to load config: ..."); 3 and the error when
// validateFlags refuses it (the plugin exits with "unable to validate flags: ...").
package main

import (
	"encoding/json"
	"fmt"
	"os"

	spec "github.com/NVIDIA/k8s-device-plugin/api/config/v1"
	cli "github.com/urfave/cli/v2"
)

// The subset of cmd/nvidia-device-plugin/main.go's c.Flags that spec.Flags.UpdateFromCLIFlags maps and the role
// sets (or relies on the default of).
func pluginFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mig-strategy", Value: spec.MigStrategyNone, EnvVars: []string{"MIG_STRATEGY"}},
		&cli.BoolFlag{Name: "fail-on-init-error", Value: true, EnvVars: []string{"FAIL_ON_INIT_ERROR"}},
		&cli.BoolFlag{Name: "pass-device-specs", Value: false, EnvVars: []string{"PASS_DEVICE_SPECS"}},
		&cli.StringSliceFlag{
			Name:    "device-list-strategy",
			Value:   cli.NewStringSlice(string(spec.DeviceListStrategyEnvVar)),
			EnvVars: []string{"DEVICE_LIST_STRATEGY"},
		},
		&cli.StringFlag{Name: "device-id-strategy", Value: spec.DeviceIDStrategyUUID, EnvVars: []string{"DEVICE_ID_STRATEGY"}},
		&cli.StringFlag{Name: "mps-root", EnvVars: []string{"MPS_ROOT"}},
		&cli.StringFlag{Name: "config-file", EnvVars: []string{"CONFIG_FILE"}},
	}
}

// validate is cmd/nvidia-device-plugin/main.go validateFlags without the checks that need NVML (CDI strategies
// need an NVML system; the device discovery strategy is not a config file field the role sets).
func validate(config *spec.Config) error {
	if _, err := spec.NewDeviceListStrategies(*config.Flags.Plugin.DeviceListStrategy); err != nil {
		return fmt.Errorf("invalid --device-list-strategy option: %v", err)
	}
	if *config.Flags.Plugin.DeviceIDStrategy != spec.DeviceIDStrategyUUID && *config.Flags.Plugin.DeviceIDStrategy != spec.DeviceIDStrategyIndex {
		return fmt.Errorf("invalid --device-id-strategy option: %v", *config.Flags.Plugin.DeviceIDStrategy)
	}
	if config.Sharing.SharingStrategy() == spec.SharingStrategyMPS {
		if *config.Flags.MigStrategy == spec.MigStrategyMixed {
			return fmt.Errorf("using --mig-strategy=mixed is not supported with MPS")
		}
		if config.Flags.MpsRoot == nil || *config.Flags.MpsRoot == "" {
			return fmt.Errorf("using MPS requires --mps-root to be specified")
		}
	}
	switch *config.Flags.MigStrategy {
	case spec.MigStrategyNone:
	case spec.MigStrategySingle:
	case spec.MigStrategyMixed:
	default:
		return fmt.Errorf("unknown MIG strategy: %v", *config.Flags.MigStrategy)
	}
	if err := spec.AssertChannelIDsValid(config.Imex.ChannelIDs); err != nil {
		return fmt.Errorf("invalid IMEX channel IDs: %w", err)
	}
	return nil
}

func main() {
	flags := pluginFlags()
	app := cli.NewApp()
	app.Name = "dpconfig"
	app.Usage = "load a device plugin config file (CONFIG_FILE) as k8s-device-plugin does and print it as JSON"
	app.Flags = flags
	app.Action = func(c *cli.Context) error {
		// cmd/nvidia-device-plugin/main.go loadConfig.
		config, err := spec.NewConfig(c, flags)
		if err != nil {
			fmt.Fprintf(os.Stderr, "unable to load config: unable to finalize config: %v\n", err)
			os.Exit(2)
		}
		config.Flags.GFD = nil
		// cmd/nvidia-device-plugin/main.go startPlugins.
		spec.DisableResourceNamingInConfig(config)
		if err := validate(config); err != nil {
			fmt.Fprintf(os.Stderr, "unable to validate flags: %v\n", err)
			os.Exit(3)
		}
		out, err := json.MarshalIndent(map[string]any{"config": config, "sharingStrategy": config.Sharing.SharingStrategy()}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Println(string(out))
		return nil
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
