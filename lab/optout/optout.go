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

import "slices"

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

// EnvVar is the variable client-go reads its WatchListClient gate's value from.
const EnvVar = "KUBE_FEATURE_WatchListClient"

var streamingOn = []string{EnvVar + "=true"}
