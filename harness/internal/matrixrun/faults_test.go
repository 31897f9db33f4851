package matrixrun

import (
	"strings"
	"testing"

	"informer-lab/harness/internal/app"
)

// The fault grid (docs/faults.md) is each fault of the proxy's table, the refusal at the statuses
// that decide between falling back and retrying, and every one of them a scenario the harness
// plays.
func TestFaultScenarios(t *testing.T) {
	want := "fault:no-end-bookmark fault:strip-annotations fault:ignore-send-initial-events fault:cut-initial-stream fault:too-large-rv " +
		"fault:refuse-watch-list=400 fault:refuse-watch-list=406 fault:refuse-watch-list=500"
	if got := strings.Join(FaultScenarios, " "); got != want {
		t.Errorf("FaultScenarios:\n got %s\nwant %s", got, want)
	}
	for _, sc := range FaultScenarios {
		if err := app.ValidateScenario(sc); err != nil {
			t.Error(err)
		}
	}
	if KindsDocsScenarios != "startup,steady" {
		t.Errorf("KindsDocsScenarios = %q", KindsDocsScenarios)
	}
}
