// Command client-v032 is informer-lab for client-go v0.32 (the pin is in go.mod).
//
// It turns the WatchListClient gate on (off by default until client-go v0.35), so each
// informer starts with a streaming list: one WATCH with sendInitialEvents=true, ADDED events,
// then a BOOKMARK annotated k8s.io/initial-events-end. -watch-list=off leaves it off.
package main

import (
	_ "embed"

	"informer-lab/lab"
)

//go:embed go.mod
var gomod []byte

func main() { lab.Main(lab.Cell{GoMod: gomod, WatchList: lab.GateOn}) }
