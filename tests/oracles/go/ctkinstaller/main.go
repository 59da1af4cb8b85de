// Copyright: (c) 2026, gpuops.cluster contributors
// Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)

// Command ctkinstaller is the runtime-configuration half of nvidia-ctk-installer (NVIDIA container toolkit, the
// image nvcr.io/nvidia/k8s/container-toolkit), run from the installer's own packages with its own flags and env.
//
// It builds the same flag set as cmd/nvidia-ctk-installer/main.go (toolkit.Flags and runtime.Flags are the
// installer's; the few flags main.go declares itself are copied because package main cannot be imported), runs the
// same option validation (Installer.ValidateOptions, runtime.Options.Validate) and then only
// runtime.NewConfigurer(RUNTIME).Setup: the step that writes the runtime's top-level config and drop-in. It skips
// what needs a node: the toolkit install (binaries from /artifacts, CDI spec generation from the driver) and the
// pid file. Restarting the runtime is the caller's choice (RUNTIME_RESTART_MODE=none does nothing).
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v3"

	"github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-ctk-installer/container/runtime"
	"github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-ctk-installer/toolkit"
)

func main() {
	logger := logrus.New()
	logger.SetOutput(os.Stderr)
	var (
		runtimeName       string
		toolkitInstallDir string
		toolkitOptions    toolkit.Options
		runtimeOptions    runtime.Options
	)
	c := cli.Command{
		Name:  "ctkinstaller",
		Usage: "configure a container runtime for the nvidia runtime as nvidia-ctk-installer does (no toolkit install)",
		// cmd/nvidia-ctk-installer/main.go: the "runtime" and "toolkit-install-dir" flags (defaults docker and
		// /usr/local/nvidia; the toolkit root is <install dir>/toolkit).
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "runtime", Aliases: []string{"r"}, Value: "docker", Destination: &runtimeName, Sources: cli.EnvVars("RUNTIME")},
			&cli.StringFlag{
				Name:        "toolkit-install-dir",
				Aliases:     []string{"root"},
				Value:       "/usr/local/nvidia",
				Destination: &toolkitInstallDir,
				Sources:     cli.EnvVars("TOOLKIT_INSTALL_DIR", "ROOT"),
			},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			toolkitRoot := filepath.Join(toolkitInstallDir, "toolkit")
			// main.go app.Before + validateFlags.
			installer := toolkit.NewInstaller(toolkit.WithLogger(logger), toolkit.WithToolkitRoot(toolkitRoot))
			if err := installer.ValidateOptions(&toolkitOptions); err != nil {
				return err
			}
			if err := runtimeOptions.Validate(logger, cmd, runtimeName, toolkitRoot, &toolkitOptions); err != nil {
				return err
			}
			// main.go app.Run, the runtime step (NO_RUNTIME_CONFIG and the NRI plugin are not used by the role).
			if err := runtime.NewConfigurer(runtimeName, false, false).Setup(cmd, &runtimeOptions); err != nil {
				return fmt.Errorf("unable to setup runtime: %w", err)
			}
			return nil
		},
	}
	c.Flags = append(c.Flags, toolkit.Flags(&toolkitOptions)...)
	c.Flags = append(c.Flags, runtime.Flags(&runtimeOptions)...)
	if err := c.Run(context.Background(), os.Args); err != nil {
		logger.Errorf("error running %v: %v", c.Name, err)
		os.Exit(1)
	}
}
