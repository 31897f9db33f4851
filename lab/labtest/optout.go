package labtest

import (
	"slices"
	"strings"
	"testing"

	"informer-lab/lab/optout"
	"informer-lab/record"
)

// optOuts runs the lab attached once per way a user turns streaming lists off (lab/optout), all
// at once, each with a direct List() once its informers synced, and checks on the wire what
// each switch did on this module's client-go: the gate it left (the finding of each mode), each
// informer's handshake, and the direct List()'s first request.
func optOuts(t *testing.T, bin, kubeconfig string) {
	labs := make([]*labProcess, len(optout.Runs))
	for i, r := range optout.Runs {
		labs[i] = startLabEnv(t, bin, r.Env, r.Args(kubeconfig)...)
	}
	for i, r := range optout.Runs {
		lab := labs[i]
		lab.waitFor(t, r.String()+": A and B synced and the direct List() returned", func(recs []record.Record) bool {
			return synced(recs, "A") && synced(recs, "B") && setupOf(recs, record.StepDirect) != nil
		})
		recs, _, _ := lab.stop(t)
		checkOptOut(t, r, recs)
	}
}

// checkOptOut checks one run. What each mode must leave client-go's gate at is the finding
// (lab/optout documents why); what each informer and the direct List() then send follows from
// that gate and two facts of the client-go version: a reflector asks its ListerWatcher whether
// it supports watch-list semantics from v0.35 (tools/cache reflector.go,
// NewReflectorWithOptions), and a typed List() tries a streaming list up to v0.33 (gentype
// type.go, List; v0.34 removed it).
func checkOptOut(t *testing.T, r optout.Run, recs []record.Record) {
	t.Helper()
	gate, sw := setupOf(recs, record.StepGate), setupOf(recs, record.StepOptOut)
	if gate == nil || sw == nil {
		t.Errorf("%s: want SETUP gate and opt-out records, got gate %v, opt-out %v", r, gate, sw)
		return
	}
	clientGo := setup(recs, record.StepClientGo)
	minor := record.Minor(clientGo)
	seen := []string{}

	// The gate the switch must leave, from the gate before it.
	want := "off" // the values of a SETUP gate record, as record.ExpectedShape reads them
	switch {
	case r.Mode == optout.Env && r.At == optout.AtStart && strings.HasPrefix(gate.Detail, "set by this lab"):
		want = gate.Value // a gate set in code wins over the variable (features/envvar.go, Set)
	case r.Mode == optout.Env && r.At == optout.AtBetween:
		want = gate.Value // client-go read the variable for informer A, once and for all
	case r.Mode == optout.FlagUnwired || optout.PerInformer(r.Mode):
		want = gate.Value // client-go's gate is not theirs to change
	}
	if sw.Value != want {
		t.Errorf("%s on %s: client-go's gate after the switch is %s, want %s (%s)", r, clientGo, sw.Value, want, sw.Detail)
	}

	// client-go warns when its gates are replaced after their first use (features.go,
	// ReplaceFeatureGates): between, informer A's reflector used them; at start, nothing had.
	warned := slices.ContainsFunc(recs, func(k record.Record) bool {
		return k.Kind == record.Setup && k.Step == record.StepKlog && strings.Contains(k.Value, "feature gates implementation has already been used")
	})
	if optout.ReplacesGates(r.Mode) && warned != (r.At == optout.AtBetween) {
		t.Errorf("%s on %s: client-go's warning that its gates were replaced after their first use: logged %v, want %v", r, clientGo, warned, r.At == optout.AtBetween)
	}

	server := setup(recs, record.StepServer)
	for _, tag := range []string{"A", "B"} {
		saw := sw.Value // the gate when its reflector was built
		if tag == "A" && r.At == optout.AtBetween {
			saw = gate.Value
		}
		expect := record.ExpectedShape(saw, "", server)
		optedOut := optout.PerInformer(r.Mode) && !(tag == "A" && r.At == optout.AtBetween)
		if optedOut && minor >= 35 {
			expect = record.ShapeListWatch
		}
		reqs := record.InitialRequests(recs, tag)
		shape, label := record.Classify(reqs)
		// A LIST→WATCH informer may report synced just before its WATCH is logged.
		if shape != expect && !(expect == record.ShapeListWatch && shape == record.TokenList) {
			t.Errorf("%s on %s: informer %s (gate %s, opted out %v): want %s, got %s", r, clientGo, tag, saw, optedOut, expect, label)
		}
		seen = append(seen, tag+" "+label)
		if len(reqs) > 0 {
			seen = append(seen, "  "+reqs[0].Text())
		}
	}

	direct := record.TokenList
	if minor <= 33 && sw.Value == "on" {
		direct = record.TokenStream
	}
	first := ""
	for _, rec := range recs {
		if rec.Kind == record.HTTP && rec.Tag == record.TagDirect {
			first = record.Token(rec)
			break
		}
	}
	if first != direct {
		t.Errorf("%s on %s: the direct List()'s first request is %q, want %s (gate %s)", r, clientGo, first, direct, sw.Value)
	}
	// The run's key records, for a reader of go test -v: what was switched, and what went out.
	t.Logf("%s on %s (environment %v):\n%s\n%s\n%s\nDIRECT first request %s", r, clientGo, r.Env, gate.Text(), sw.Text(), strings.Join(seen, "\n"), first)
}

// setupOf is the lab's first SETUP record of step, nil if none.
func setupOf(recs []record.Record, step string) *record.Record {
	for i, r := range recs {
		if r.Kind == record.Setup && r.Step == step {
			return &recs[i]
		}
	}
	return nil
}
