package matrix

import (
	"slices"

	"informer-lab/record"
)

// The pages make matrix publishes under docs/ (-docs), each with its results and cell logs in a
// directory of its name: docs/NAME.md, docs/NAME/NAME.json, docs/NAME/<cell logs>.
const (
	PageMatrix   = "matrix"  // the client cells × every server × the default scenarios
	PageFaults   = "faults"  // the fault family: servers that do not play along, emulated
	PageKinds    = "kinds"   // every informer kind
	PageVariants = "servers" // real servers that are not one plain kube-apiserver
)

// Pages are every page, in the order a reader meets them.
var Pages = []string{PageMatrix, PageFaults, PageKinds, PageVariants}

// Page is the page a grid is published as: a kind axis makes the kinds page, fault scenarios
// alone the faults page, servers that all run with a kube-apiserver flag (record.ServerFlags,
// e.g. without the watch cache) the servers page; any other grid is the matrix.
func (r *Result) Page() string {
	switch {
	case len(r.Kinds) > 0:
		return PageKinds
	case r.faultsOnly():
		return PageFaults
	case r.variantsOnly():
		return PageVariants
	}
	return PageMatrix
}

// variantsOnly reports a grid whose every server runs with a kube-apiserver flag of its own.
func (r *Result) variantsOnly() bool {
	return len(r.Servers) > 0 && !slices.ContainsFunc(r.Servers, func(s Server) bool {
		_, flags, err := record.SplitServerSettings(s.FeatureGates)
		return err != nil || flags == ""
	})
}
