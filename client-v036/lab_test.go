package main

import (
	"testing"

	"informer-lab/lab/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// The handshake each informer must do is the one this module's client-go and gate imply on the
// test's server: the suite reads both from the lab's records (record.ExpectedShape).
func TestLab(t *testing.T) { labtest.Suite(t) }
