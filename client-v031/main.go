// Command client-v031 is informer-lab for client-go v0.31 (the pin is in go.mod).
//
// With the WatchListClient gate at client-go's default (off in v0.31), each informer does the
// textbook initial sync: LIST ?resourceVersion=0, then WATCH from the list's resourceVersion.
// -watch-list=on makes v0.31 stream too.
package main

import (
	_ "embed"

	"informer-lab/lab"
)

//go:embed go.mod
var gomod []byte

func main() { lab.Main(lab.Cell{GoMod: gomod, WatchList: lab.GateDefault}) }
