package main

import (
	"testing"

	"informer-lab/lab/labtest"
)

// client-go v0.33 with the WatchListClient gate at its default (off until v0.35): LIST, then
// WATCH.
func TestLab(t *testing.T) { labtest.Suite(t, labtest.ListThenWatch) }
