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
// of an apiserver. Its informer is in lab/fakes; what it does per version is in its records
// (SETUP fake, tagged FakeTag).
type FakeStandIn struct {
	Name string
	Doc  string // what it is, in one line
	Fix  string // the one line that makes it sync where it does not by itself
}

// FakeGateOffInTest is the one line that makes every stand-in with a reflector sync on every
// client-go version: the gate off in the unit test, with client-go's own test helper
// (k8s.io/client-go/features/testing, in every version from v0.31).
const FakeGateOffInTest = "clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)"

// FakeStandIns are the stand-ins, in the order pages show them.
var FakeStandIns = []FakeStandIn{
	{Name: "typed-fake", Doc: "`kubernetes/fake.NewSimpleClientset` and `informers.NewSharedInformerFactory`",
		Fix: "client-go v0.35 or later, or " + "`" + FakeGateOffInTest + "`"},
	{Name: "dynamic-fake", Doc: "`dynamic/fake.NewSimpleDynamicClient` and `dynamicinformer.NewDynamicSharedInformerFactory`",
		Fix: "client-go v0.35 or later, or " + "`" + FakeGateOffInTest + "`"},
	{Name: "metadata-fake", Doc: "`metadata/fake.NewSimpleMetadataClient` and `metadatainformer.NewSharedInformerFactory`",
		Fix: "client-go v0.35 or later, or " + "`" + FakeGateOffInTest + "`"},
	{Name: "old-informer-gen", Doc: "an informer of the shape informer-gen generated before v0.35 (`NewFilteredConfigMapInformer` over a bare `cache.ListWatch` of `ListFunc` and `WatchFunc`) on the typed fake",
		Fix: "generate it again with informer-gen v0.35 or later (it wraps the ListWatch in `cache.ToListWatcherWithWatchListSemantics`), or " + "`" + FakeGateOffInTest + "`"},
	{Name: "old-informer-gen-optout", Doc: "the same informer, its ListWatch given `IsWatchListSemanticsUnSupported() bool { return true }`",
		Fix: "client-go v0.35 or later (an older reflector does not ask), or " + "`" + FakeGateOffInTest + "`"},
	{Name: "controller-runtime-fake", Doc: "a client-go informer on controller-runtime's fake client (`pkg/client/fake`) through a `cache.ListWatch`: controller-runtime's own cache takes a `rest.Config` and cannot run on it",
		Fix: "`" + FakeGateOffInTest + "`" + " (the fake client has no `IsWatchListSemanticsUnSupported` to pass on)"},
	{Name: "controller-runtime-informertest", Doc: "controller-runtime's fake informers (`pkg/cache/informertest`): no reflector, `HasSynced` returns a field",
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
