// Package optout holds the ways a user turns client-go's streaming lists off (the lab's
// -opt-out): the process's KUBE_FEATURE_WatchListClient, client-go's features.ReplaceFeatureGates
// from code, a Kubernetes component's --feature-gates (handed to client-go, or not), and a
// ListWatch or client that says it does not support watch-list semantics.
//
// env, code and flag act on the whole process: they change what client-go's WatchListClient
// gate reports, and a reflector reads that gate once, when it is built (k8s.io/client-go
// tools/cache reflector.go, NewReflectorWithOptions), so each reaches the informers started
// after it (client-go v0.31–v0.33's typed List() reads it on every call). flag-unwired is the component's gate that
// never reaches client-go. listwatch and client act per informer: the reflector asks its
// ListerWatcher (client-go v0.35 on).
package optout

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/features"
	"k8s.io/component-base/featuregate"
)

// The modes of -opt-out.
const (
	// Env sets KUBE_FEATURE_WatchListClient=false in the process's environment. client-go reads
	// its KUBE_FEATURE_ variables once, on the first question to its gates (features/envvar.go,
	// readEnvVarsOnce): set later, the variable changes nothing.
	Env = "env"
	// Code hands client-go a gate that says WatchListClient=false, with
	// features.ReplaceFeatureGates, and every other feature to the gates it had.
	Code = "code"
	// Flag is a Kubernetes component's --feature-gates=WatchListClient=false: a component-base
	// FeatureGate with client-go's features added, parsed from the flag and handed to client-go
	// with ReplaceFeatureGates, as k8s.io/kubernetes pkg/features does for its components.
	Flag = "flag"
	// FlagUnwired is Flag without the last step: the component's gate knows WatchListClient and
	// says false, client-go is never handed it.
	FlagUnwired = "flag-unwired"
	// ListWatch builds each informer over a cache.ListWatch that says
	// IsWatchListSemanticsUnSupported() (client-go's util/watchlist asks it from v0.35).
	ListWatch = "listwatch"
	// Client builds the typed informer factory over a clientset that says
	// IsWatchListSemanticsUnSupported(), as client-go's fake clientset does: the factory's
	// informers pass the question on to their client (v0.35 on).
	Client = "client"
)

// Modes are the -opt-out modes, in the order a page lists them.
var Modes = []string{Env, Code, Flag, FlagUnwired, ListWatch, Client}

// When the switch is made (-opt-out-at).
const (
	AtStart   = "start"   // before any informer exists
	AtBetween = "between" // once informer A has synced, before informer B starts
)

// IsMode reports one of Modes.
func IsMode(m string) bool { return slices.Contains(Modes, m) }

// PerInformer reports a mode that changes the informers it is given to, not the process's gate.
func PerInformer(m string) bool { return m == ListWatch || m == Client }

// ReplacesGates reports a mode that hands client-go other feature gates: after it, setting
// client-go's own gates (the lab's -watch-list) no longer decides WatchListClient.
func ReplacesGates(m string) bool { return m == Code || m == Flag }

// Switch makes the process-wide switch of mode and says what it did; for a per-informer mode it
// does nothing but say so. It never fails on what client-go does with it: that is what the
// records show.
func Switch(mode string) (string, error) {
	switch mode {
	case Env:
		was := "unset before"
		if v, ok := os.LookupEnv(envVar); ok {
			was = "was " + v
		}
		if err := os.Setenv(envVar, "false"); err != nil {
			return "", fmt.Errorf("set %s: %w", envVar, err)
		}
		return envVar + "=false in the process's environment (" + was + ")", nil
	case Code:
		features.ReplaceFeatureGates(watchListOff{features.FeatureGates()})
		return "features.ReplaceFeatureGates with a gate that says WatchListClient=false", nil
	case Flag, FlagUnwired:
		fg, err := componentGates(mode == Flag, "--feature-gates=WatchListClient=false")
		if err != nil {
			return "", err
		}
		did := "a component-base FeatureGate with client-go's features, parsed from --feature-gates=WatchListClient=false (it says WatchListClient=" + fmt.Sprint(fg.Enabled(watchListClient)) + ")"
		if mode == Flag {
			return did + ", handed to client-go with features.ReplaceFeatureGates", nil
		}
		return did + ", never handed to client-go", nil
	case ListWatch:
		return "each informer's cache.ListWatch says IsWatchListSemanticsUnSupported()", nil
	case Client:
		return "the typed informer factory's clientset says IsWatchListSemanticsUnSupported()", nil
	}
	return "", fmt.Errorf("unknown -opt-out mode %q: the modes are %s", mode, strings.Join(Modes, ", "))
}

const envVar = "KUBE_FEATURE_WatchListClient"

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

// Run is one lab run that shows what a mode does: its -opt-out flags, the -watch-list the
// program sets itself ("" leaves the lab module's own), and the environment the user started
// it in. lab/labtest checks Runs on every lab module; make opt-outs writes their page.
type Run struct {
	Mode, At, WatchList string
	Env                 []string
}

func (r Run) String() string { return r.Mode + "@" + r.At }

// Args are the lab's flags for the run, attached to kubeconfig, records on stdout, with a direct
// List() once its informers synced.
func (r Run) Args(kubeconfig string) []string {
	args := []string{"-kubeconfig", kubeconfig, "-records", "-", "-direct-list", "-opt-out", r.Mode, "-opt-out-at", r.At}
	if r.WatchList != "" {
		args = append(args, "-watch-list", r.WatchList)
	}
	return args
}

// Runs: every mode at start, and two switches between informer A and B (the variable, which
// client-go has read by then, and a replaced gate). Each but env at start starts from streaming
// on, so that a switch that works shows on every version: turned on by the user's
// KUBE_FEATURE_WatchListClient=true, or by the program (-watch-list on), where the mode must
// replace the gates first (code, flag) or leaves the program's gate alone. env at start runs
// with the lab module's own gate: set in code by client-v032, client-go's default elsewhere.
var Runs = []Run{
	{Env, AtStart, "", nil},
	{Code, AtStart, "default", streamingOn},
	{Flag, AtStart, "default", streamingOn},
	{FlagUnwired, AtStart, "on", nil},
	{ListWatch, AtStart, "on", nil},
	{Client, AtStart, "on", nil},
	{Env, AtBetween, "default", streamingOn},
	{Code, AtBetween, "on", nil},
}

var streamingOn = []string{envVar + "=true"}
