package record

import "strings"

// Steps and values of lab -fakes' SETUP records (the steps of every other lab are in vocab.go).
const (
	// StepFake: Tag: FakeTag; Value: FakeSynced or FakeNotSynced; Detail: the time, as text;
	// Millis: the time to HasSynced, or how long it was waited for; Items: its informer's cache.
	StepFake = "fake"
	// StepControllerRuntime: Value: the controller-runtime version the lab links.
	StepControllerRuntime = "controller-runtime"

	FakeSynced    = "synced"
	FakeNotSynced = "not synced"
)

// FakeStandIn is one test double of lab -fakes: what a unit test builds an informer on instead
// of an apiserver, and what decides whether it syncs. Its informer is in lab/fakes (kept out of
// this package, which every test binary links, because the fakes link client-go's whole fake
// clientset and controller-runtime's fake client); what it did per version is in its records
// (SETUP fake, tagged FakeTag).
type FakeStandIn struct {
	Name string
	Doc  string // what it is, in one line
	Fix  string // the one line that makes it sync where it does not by itself
	// Reflector says that its informer runs client-go's reflector, which streams its initial list
	// with the gate on unless it is told that its client cannot: from client-go minor version
	// OptsOutFrom on, or FakeNever.
	Reflector   bool
	OptsOutFrom int
	// HasSyncedFrom is, for a stand-in without a reflector, the controller-runtime minor version
	// from which its informer's HasSynced reports true.
	HasSyncedFrom int
}

// FakeNever is FakeStandIn.OptsOutFrom of a stand-in whose reflector is never told that its
// client cannot stream.
const FakeNever = -1

// FakeVersions are the minor versions of client-go and controller-runtime a lab module links.
type FakeVersions struct{ ClientGo, ControllerRuntime int }

// Syncs says whether the stand-in's informer syncs on versions v with the WatchListClient gate on
// or off: with it off every reflector lists; with it on, only one told that its client cannot
// stream does.
func (s FakeStandIn) Syncs(v FakeVersions, gateOn bool) bool {
	if !s.Reflector {
		return v.ControllerRuntime >= s.HasSyncedFrom
	}
	return !gateOn || (s.OptsOutFrom != FakeNever && v.ClientGo >= s.OptsOutFrom)
}

// FakeSeeds are the names of the ConfigMaps every fake starts with, in namespace default; an
// informer that synced holds both.
var FakeSeeds = []string{"seed-1", "seed-2"}

// FakeGateOffInTest is the one line that makes every stand-in with a reflector sync on every
// client-go version: the gate off in the unit test, with client-go's own test helper
// (k8s.io/client-go/features/testing, in every version from v0.31).
const FakeGateOffInTest = "clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)"

// FakeStandIns are the stand-ins, in the order pages show them. The client-go fakes say they
// cannot stream from v0.35 (IsWatchListSemanticsUnSupported) and the factories generated from
// v0.35 pass it on (cache.ToListWatcherWithWatchListSemantics); a reflector reads it from v0.35.
// controller-runtime's FakeInformers hand out informers built Synced from v0.23
// (pkg/cache/informertest).
var FakeStandIns = []FakeStandIn{
	{Name: "typed-fake", Reflector: true, OptsOutFrom: 35,
		Doc: "`kubernetes/fake.NewSimpleClientset` and `informers.NewSharedInformerFactory`",
		Fix: "client-go v0.35 or later, or " + "`" + FakeGateOffInTest + "`"},
	{Name: "dynamic-fake", Reflector: true, OptsOutFrom: 35,
		Doc: "`dynamic/fake.NewSimpleDynamicClient` and `dynamicinformer.NewDynamicSharedInformerFactory`",
		Fix: "client-go v0.35 or later, or " + "`" + FakeGateOffInTest + "`"},
	{Name: "metadata-fake", Reflector: true, OptsOutFrom: 35,
		Doc: "`metadata/fake.NewSimpleMetadataClient` and `metadatainformer.NewSharedInformerFactory`",
		Fix: "client-go v0.35 or later, or " + "`" + FakeGateOffInTest + "`"},
	{Name: "old-informer-gen", Reflector: true, OptsOutFrom: FakeNever,
		Doc: "an informer of the shape informer-gen generated before v0.35 (`NewFilteredConfigMapInformer` over a bare `cache.ListWatch` of `ListFunc` and `WatchFunc`) on the typed fake",
		Fix: "generate it again with informer-gen v0.35 or later (it wraps the ListWatch in `cache.ToListWatcherWithWatchListSemantics`), or " + "`" + FakeGateOffInTest + "`"},
	{Name: "old-informer-gen-optout", Reflector: true, OptsOutFrom: 35,
		Doc: "the same informer, its ListWatch given `IsWatchListSemanticsUnSupported() bool { return true }`",
		Fix: "client-go v0.35 or later (an older reflector does not ask), or " + "`" + FakeGateOffInTest + "`"},
	{Name: "controller-runtime-fake", Reflector: true, OptsOutFrom: FakeNever,
		Doc: "a client-go informer on controller-runtime's fake client (`pkg/client/fake`) through a `cache.ListWatch`: controller-runtime's own cache takes a `rest.Config` and cannot run on it",
		Fix: "`" + FakeGateOffInTest + "`" + " (the fake client has no `IsWatchListSemanticsUnSupported` to pass on)"},
	{Name: "controller-runtime-informertest", HasSyncedFrom: 23,
		Doc: "controller-runtime's fake informers (`pkg/cache/informertest`): no reflector, `HasSynced` returns a field",
		Fix: "controller-runtime v0.23 or later, or wait on the `FakeInformers`' own `WaitForCacheSync`"},
}

// FakeStandInNames are the stand-ins' names, in order.
func FakeStandInNames() []string {
	names := make([]string, len(FakeStandIns))
	for i, s := range FakeStandIns {
		names[i] = s.Name
	}
	return names
}

// FakeTag is the records' tag of a stand-in run with the gate on or off: "typed-fake/on".
func FakeTag(standIn, gate string) string { return standIn + "/" + gate }

// SplitFakeTag undoes FakeTag.
func SplitFakeTag(tag string) (standIn, gate string) {
	standIn, gate, _ = strings.Cut(tag, "/")
	return standIn, gate
}
