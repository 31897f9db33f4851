// Package gates makes the process-wide switches of lab/optout's modes on client-go's feature
// gates: the environment variable, a gate handed to features.ReplaceFeatureGates, and a
// Kubernetes component's component-base --feature-gates, handed to client-go or not. It is kept
// apart from lab/optout because component-base is linked only by the lab that switches.
package gates

import (
	"fmt"
	"os"
	"strings"

	"informer-lab/lab/optout"

	"github.com/spf13/pflag"
	"k8s.io/client-go/features"
	"k8s.io/component-base/featuregate"
)

// Switch makes the process-wide switch of mode and says what it did; for a per-informer mode it
// does nothing but say so. It never fails on what client-go does with it: that is what the
// records show.
func Switch(mode string) (string, error) {
	switch mode {
	case optout.Env:
		was := "unset before"
		if v, ok := os.LookupEnv(optout.EnvVar); ok {
			was = "was " + v
		}
		if err := os.Setenv(optout.EnvVar, "false"); err != nil {
			return "", fmt.Errorf("set %s: %w", optout.EnvVar, err)
		}
		return optout.EnvVar + "=false in the process's environment (" + was + ")", nil
	case optout.Code:
		features.ReplaceFeatureGates(watchListOff{features.FeatureGates()})
		return "features.ReplaceFeatureGates with a gate that says WatchListClient=false", nil
	case optout.Flag, optout.FlagUnwired:
		fg, err := componentGates(mode == optout.Flag, "--feature-gates=WatchListClient=false")
		if err != nil {
			return "", err
		}
		did := "a component-base FeatureGate with client-go's features, parsed from --feature-gates=WatchListClient=false (it says WatchListClient=" + fmt.Sprint(fg.Enabled(watchListClient)) + ")"
		if mode == optout.Flag {
			return did + ", handed to client-go with features.ReplaceFeatureGates", nil
		}
		return did + ", never handed to client-go", nil
	case optout.ListWatch:
		return "each informer's cache.ListWatch says IsWatchListSemanticsUnSupported()", nil
	case optout.Client:
		return "the typed informer factory's clientset says IsWatchListSemanticsUnSupported()", nil
	}
	return "", fmt.Errorf("unknown -opt-out mode %q: the modes are %s", mode, strings.Join(optout.Modes, ", "))
}

var watchListClient = featuregate.Feature(features.WatchListClient)

// watchListOff is the gate Code hands client-go: WatchListClient off, every other feature as
// the gates it replaces say.
type watchListOff struct{ features.Gates }

func (g watchListOff) Enabled(f features.Feature) bool {
	return f != features.WatchListClient && g.Gates.Enabled(f)
}

// componentGates is a Kubernetes component's feature gates: a component-base FeatureGate with
// client-go's features added (features.AddFeaturesToExistingFeatureGates), its --feature-gates
// flag parsed from args, and, wired, handed to client-go (features.ReplaceFeatureGates).
func componentGates(wired bool, args ...string) (featuregate.MutableFeatureGate, error) {
	fg := featuregate.NewFeatureGate()
	adapter := clientAdapter{fg}
	if err := features.AddFeaturesToExistingFeatureGates(adapter); err != nil {
		return nil, fmt.Errorf("add client-go's features to a component-base feature gate: %w", err)
	}
	fs := pflag.NewFlagSet("component", pflag.ContinueOnError)
	fg.AddFlag(fs)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("a component's %s: %w", strings.Join(args, " "), err)
	}
	if wired {
		features.ReplaceFeatureGates(adapter)
	}
	return fg, nil
}

// clientAdapter makes a component-base MutableFeatureGate client-go's Gates and Registry. Neither
// component-base nor client-go ships one (the two packages keep parallel types so that neither
// imports the other); k8s.io/kubernetes has its own in pkg/features (client_adapter.go), and
// k8s.io/kubernetes is not a library: a program outside Kubernetes writes its own, like this one.
type clientAdapter struct {
	mfg featuregate.MutableFeatureGate
}

func (a clientAdapter) Enabled(f features.Feature) bool {
	return a.mfg.Enabled(featuregate.Feature(f))
}

func (a clientAdapter) Add(in map[features.Feature]features.FeatureSpec) error {
	out := map[featuregate.Feature]featuregate.FeatureSpec{}
	for name, spec := range in {
		converted := featuregate.FeatureSpec{Default: spec.Default, LockToDefault: spec.LockToDefault}
		switch spec.PreRelease { // the two prerelease types are unexported: only their constants can be matched
		case features.Alpha:
			converted.PreRelease = featuregate.Alpha
		case features.Beta:
			converted.PreRelease = featuregate.Beta
		case features.GA:
			converted.PreRelease = featuregate.GA
		case features.Deprecated:
			converted.PreRelease = featuregate.Deprecated
		default:
			return fmt.Errorf("client-go feature %s: unknown prerelease %q", name, spec.PreRelease)
		}
		out[featuregate.Feature(name)] = converted
	}
	return a.mfg.Add(out)
}
