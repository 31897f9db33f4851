package main

import (
	"testing"

	"informer-lab/lab/labtest"
)

// client-go v0.32 with the WatchListClient gate on: one streaming WATCH, ADDED events, the
// end bookmark.
func TestLab(t *testing.T) { labtest.Suite(t, labtest.StreamingList) }
