package bench

import (
	"flag"
	"strings"
)

// -cases all is one run of every dimension for docs/bench.md: the plain shapes, writes during
// the sync, links and Pods at scale, on fewer servers, K, links and repeats than each
// dimension's own run, so that it fits in about an hour on two cores (a slow reader at 1 MiB/s
// alone takes two minutes a run). CBOR is left out: it needs servers with a gate the others must
// not have.
const (
	AllCases = "large,small,secrets,writes,links,pods"
	// DefaultAllServers: 1.32.13 (a LIST encoded in one buffer, a streaming list uncompressed)
	// and 1.37.2 (both encoded item by item, a streaming list gzipped).
	DefaultAllServers = "1.32.13,1.37.2"
	// DefaultAllLinks: the direct baseline, the longest round trip, the narrow cap and the
	// slow reader.
	DefaultAllLinks   = "direct,latency=100ms,bandwidth=10MiB,slow-reader=1MiB"
	defaultAllKs      = "1,16" // the plain shapes' K: one informer, and many
	defaultAllRepeats = 2
)

// allDefaults expands -cases all, and gives -servers, -links, -k and -repeats its defaults where
// they were not given.
func allDefaults(fs *flag.FlagSet, o *options, v *flagValues) {
	if strings.TrimSpace(o.cases) != "all" {
		return
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.cases = AllCases
	if !set["servers"] {
		v.servers = DefaultAllServers
	}
	if !set["links"] {
		v.links.links = DefaultAllLinks
	}
	if !set["k"] {
		v.ks = defaultAllKs
	}
	if !set["repeats"] {
		o.repeats = defaultAllRepeats
	}
}
