// Command client-v036 is informer-lab for client-go v0.36 (the pin is in go.mod).
//
// From client-go v0.35 the WatchListClient gate is on by default, so with the gate at
// client-go's default each informer starts with a streaming list: one WATCH with
// sendInitialEvents=true, ADDED events, then a BOOKMARK annotated k8s.io/initial-events-end.
// -watch-list=off brings back LIST, then WATCH.
package main

import (
	_ "embed"

	"informer-lab/lab"
)

//go:embed go.mod
var gomod []byte

func main() { lab.Main(lab.Cell{GoMod: gomod, WatchList: lab.GateDefault}) }
