package app

import (
	"bytes"
	"context"
	"testing"

	"informer-lab/lab/controlplane"
)

// What make compare costs beyond the server it needs: BenchmarkEnvtestBootStop is one bare
// envtest boot and stop, BenchmarkCompare one whole make compare (every lab, warm binaries,
// the writes, the report). Their ratio is the harness's own overhead:
//
//	cd harness && GOWORK=off go test -run '^$' -bench . -benchtime 3x ./internal/app/
func BenchmarkEnvtestBootStop(b *testing.B) {
	for b.Loop() {
		cp, err := controlplane.Start(context.Background(), controlplane.Options{})
		if err != nil {
			b.Fatal(err)
		}
		cp.Stop()
	}
}

func BenchmarkCompare(b *testing.B) {
	// One run first, outside the timing: it builds any lab binary that is not built yet.
	if code := Run(context.Background(), []string{"-out", b.TempDir()}, new(bytes.Buffer), new(bytes.Buffer)); code != 0 {
		b.Fatalf("make compare: exit %d", code)
	}
	for b.Loop() {
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), []string{"-out", b.TempDir()}, &stdout, &stderr); code != 0 {
			b.Fatalf("make compare: exit %d\n%s", code, stderr.String())
		}
	}
}
