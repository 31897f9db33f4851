package lab

import (
	"context"
	"fmt"
	"strings"

	"informer-lab/lab/optout"
	"informer-lab/lab/optout/gates"
	"informer-lab/record"

	"k8s.io/client-go/tools/cache"
)

// checkOptOut says what is wrong with -opt-out and -opt-out-at together with the other flags.
// -watch-list is what the program itself does with client-go's gate, the opt-out what the user
// does on top; the combinations refused are the ones that cannot mean anything.
func checkOptOut(o options) error {
	switch {
	case o.optOut == "" && o.optOutAt != optout.AtStart:
		return fmt.Errorf("-opt-out-at %s goes with -opt-out (one of %s)", o.optOutAt, strings.Join(optout.Modes, ", "))
	case o.optOut == "":
		return nil
	case !optout.IsMode(o.optOut):
		return fmt.Errorf("-opt-out must be one of %s, got %q", strings.Join(optout.Modes, ", "), o.optOut)
	case o.optOutAt != optout.AtStart && o.optOutAt != optout.AtBetween:
		return fmt.Errorf("-opt-out-at must be %s or %s, got %q", optout.AtStart, optout.AtBetween, o.optOutAt)
	case o.optOutAt == optout.AtBetween && o.informers < 2:
		return fmt.Errorf("-opt-out-at %s switches once informer A synced and before B starts: it needs -informers 2 or more, got %d", optout.AtBetween, o.informers)
	case optout.PerInformer(o.optOut) && o.kind != record.KindTypedConfigMaps:
		return fmt.Errorf("-opt-out %s builds the typed informers itself: it works with -kind %s only, got -kind %s", o.optOut, record.KindTypedConfigMaps, o.kind)
	case o.optOut == optout.ListWatch && o.resource == record.ResourceSecrets:
		return fmt.Errorf("-opt-out %s watches %s only, got -resource %s", o.optOut, record.ResourceConfigMaps, o.resource)
	case optout.ReplacesGates(o.optOut) && o.optOutAt == optout.AtStart && o.gate != GateDefault:
		// The replacement comes before anything reads the gates; -watch-list would then set
		// gates client-go no longer asks (and the replacement has no Set).
		return fmt.Errorf("-opt-out %s replaces client-go's feature gates at start, which -watch-list %s cannot set: use -watch-list default, "+
			"or -opt-out-at %s (the lab sets the gate, starts informer A, then switches)", o.optOut, o.gate, optout.AtBetween)
	}
	return nil
}

// perInformerOptOut is the per-informer -opt-out mode for the i-th informer (A is 0): all of
// them at start, B on when the switch comes between; "" for a process-wide mode.
func perInformerOptOut(o options, i int) string {
	if !optout.PerInformer(o.optOut) || (o.optOutAt == optout.AtBetween && i == 0) {
		return ""
	}
	return o.optOut
}

// switchBetween makes the -opt-out-at between switch once informer A has synced, as a program
// that changes client-go's gate while an informer already runs, and records it with what
// client-go's gate says then. Stopped before A synced, it switches nothing: the lab's last
// record names A.
func switchBetween(ctx context.Context, mode string, aSynced cache.InformerSynced, out *record.Writer) error {
	if !cache.WaitForCacheSync(ctx.Done(), aSynced) {
		return nil
	}
	did, err := gates.Switch(mode)
	if err != nil {
		return err
	}
	out.Setup("", record.StepOptOut, gateNow(), "-opt-out "+mode+" at between (informer A synced, B not started): "+did)
	return nil
}
