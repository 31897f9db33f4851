package lab

import (
	"errors"
	"io"
	"strings"
	"testing"

	"informer-lab/lab/mutator"
)

// -resource names a core resource the informers watch instead of their kind's own: ConfigMaps
// for any kind but aggregated (the dynamic and cbor kinds then watch what the typed one does,
// make bench's encodings), Secrets and Pods for the typed kind; anything else is one usage line.
func TestResourceFlag(t *testing.T) {
	def := Cell{WatchList: "default"}
	for _, tc := range []struct {
		args     string
		resource string // what the informers then watch; "" when the flags are refused
		want     string // the start of the error
	}{
		{"", "configmaps", ""},
		{"-kind cbor", "widgets", ""},
		{"-kind cbor -resource configmaps", "configmaps", ""},
		{"-kind dynamic-crd -resource configmaps", "configmaps", ""},
		{"-resource secrets", "secrets", ""},
		{"-kind dynamic-crd -resource secrets", "", "-resource secrets works with -kind typed-configmaps only"},
		{"-kind aggregated -kubeconfig k -resource configmaps", "", "-resource configmaps: -kind aggregated watches an aggregated apiserver's flunders only"},
		{"-resource pods", "pods", ""},
		{"-kind metadata -resource pods", "", "-resource pods works with -kind typed-configmaps only"},
		{"-resource nodes", "", `-resource must be configmaps, secrets or pods, got "nodes"`},
	} {
		o, err := parseFlags("client-v0xx", def, strings.Fields(tc.args), io.Discard)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.args, err)
		case tc.want == "" && mutator.Watched(o.kind, o.resource).Resource != tc.resource:
			t.Errorf("%s: the informers watch %s, want %s", tc.args, mutator.Watched(o.kind, o.resource), tc.resource)
		case tc.want != "" && (err == nil || !errors.As(err, new(usageError)) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: got %v, want one usage error line starting %q", tc.args, err, tc.want)
		}
	}
}
