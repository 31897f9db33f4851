// Command client-v034 is informer-lab for client-go v0.34 (the pin is in go.mod).
//
// The WatchListClient gate is off by default until client-go v0.35, so with the gate at
// client-go's default each informer does the textbook initial sync: LIST ?resourceVersion=0,
// then WATCH from the list's resourceVersion. -watch-list=on makes v0.34 stream: one WATCH
// with sendInitialEvents=true, ADDED events, then a BOOKMARK annotated
// k8s.io/initial-events-end.
package main

import (
	_ "embed"

	"informer-lab/lab"
)

//go:embed go.mod
var gomod []byte

func main() { lab.Main(lab.Cell{GoMod: gomod, WatchList: lab.GateDefault}) }
