package main

import (
	"testing"

	"informer-lab/lab/labtest"
)

// client-go v0.36 with the WatchListClient gate at its default (on from v0.35): one streaming
// WATCH, ADDED events, the end bookmark.
func TestLab(t *testing.T) { labtest.Suite(t, labtest.StreamingList) }
