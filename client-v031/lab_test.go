package main

import (
	"testing"

	"informer-lab/lab/labtest"
)

// client-go v0.31 with the WatchListClient gate at its default (off): LIST, then WATCH.
func TestLab(t *testing.T) { labtest.Suite(t, labtest.ListThenWatch) }
