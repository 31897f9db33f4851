package matrix

import (
	"strings"

	"informer-lab/record"
)

// KindDoc says, for each informer kind (record.Kinds), what the lab's informers are: what a
// grid with a kind axis shows above its tables (lab/kind builds them).
var KindDoc = map[string]string{
	record.KindTypedConfigMaps:       "a typed SharedInformerFactory on core/v1 ConfigMaps: the lab's original informers, and make matrix's only kind without KINDS",
	record.KindSelector:              "the same typed informers with a label selector (" + record.SelectorLabel + "=" + record.SelectorValue + "): the odd seed objects carry the label, the even ones do not, and the fresh LIST the caches are checked against selects alike",
	record.KindMetadata:              "metadatainformer on ConfigMaps: the objects as PartialObjectMetadata, through client-go's metadata client",
	record.KindDynamicCRD:            "dynamicinformer on the lab's own custom resource (" + record.CRDResource + "." + record.CRDGroup + "/" + record.CRDVersion + ", installed by the harness): unstructured objects",
	record.KindCR:                    "controller-runtime's cache (a manager's informers) on ConfigMaps, with the controller-runtime the lab module pins beside its client-go",
	record.KindCustomListWatch:       "a hand-written cache.ListWatch over the typed client whose WatchFunc passes on only the options it knows (resourceVersion, timeoutSeconds), as many projects write it: a streaming list loses sendInitialEvents, resourceVersionMatch and allowWatchBookmarks on the way",
	record.KindCustomListWatchOptOut: "custom-listwatch that says it does not support watch-list semantics (IsWatchListSemanticsUnSupported): the fix client-go v0.35 documents; v0.35+ reflectors then LIST and WATCH, older ones do not ask",
	record.KindCBOR:                  "dynamic-crd with client-go's ClientsAllowCBOR and ClientsPreferCBOR gates on (set by the lab), against kube-apiserver with CBORServingAndStorage=true (added by the harness); client-go v0.32+ and kube-apiserver 1.32+ only",
}

// kindsIntro is what a grid with a kind axis says above its tables.
const kindsIntro = "Rows: a lab module with its WatchListClient gate (\"default\": client-go's own default). Columns: the informer kind, how the lab builds its two informers (below); one table per scenario and kube-apiserver. " +
	"Every kind but typed-configmaps is given the run's sync wait, then the run goes on with what synced: each cell says whether its informers synced (\"not synced after T\" is a hang to a user) and, in startup, with which requests and after how long (time on the wire from the first request). " +
	"Each cell links to its normalized log. \"n/a: …\" is a cell that cannot run (record.KindNotApplicable): its lab was not started."

// kindHeads are the kinds' column heads on a terminal, short enough for eight kinds beside the
// client column within 120 columns.
var kindHeads = map[string]string{
	record.KindTypedConfigMaps:       "typed",
	record.KindDynamicCRD:            "dynamic",
	record.KindCR:                    "ctrl-rt",
	record.KindCustomListWatch:       "custom",
	record.KindCustomListWatchOptOut: "optout",
}

func kindHead(kind string) string {
	if h, ok := kindHeads[kind]; ok {
		return h
	}
	return kind
}

// kindHeadLegend spells out the shortened heads of the kinds, "" when none is.
func kindHeadLegend(kinds []string) string {
	var parts []string
	for _, k := range kinds {
		if h := kindHead(k); h != k {
			parts = append(parts, h+" = "+k)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "columns: informer kinds; " + strings.Join(parts, " · ")
}
