package apf

import (
	"strings"
	"testing"
	"time"
)

// Lines as kube-apiserver 1.37.2 wrote them at -v=3 in a make apf run (and one rejected LIST,
// in the same format), with a line of another namespace that must be skipped.
const logLines = `I1203 16:02:58.1 1 httplog.go:134] "HTTP" verb="LIST" URI="/api/v1/namespaces/apf-x/configmaps?limit=500&resourceVersion=0" latency="329.996728ms" userAgent="client-v035/v0.0.0 (linux/amd64) kubernetes/$Format informer/B" contentType="" audit-ID="a0" srcIP="127.0.0.1:59120" apf_pl="informer-lab-apf" apf_fs="informer-lab-apf" apf_iseats=4 apf_fseats=0 apf_additionalLatency="0s" apf_execution_time="228.010573ms" resp=200
I1203 16:02:58.2 1 httplog.go:134] "HTTP" verb="LIST" URI="/api/v1/namespaces/apf-x/configmaps?limit=500&resourceVersion=0" latency="1ms" userAgent="x" audit-ID="a1" srcIP="127.0.0.1:59120" apf_pl="informer-lab-apf" apf_fs="informer-lab-apf" apf_iseats=4 apf_fseats=0 apf_additionalLatency="0s" resp=429
I1203 16:02:58.3 1 httplog.go:134] "HTTP" verb="LIST" URI="/api/v1/namespaces/other/configmaps" latency="1ms" userAgent="x" audit-ID="a2" srcIP="127.0.0.1:1" apf_pl="exempt" apf_fs="exempt" apf_iseats=1 apf_fseats=0 resp=200
I1203 16:02:59.4 1 httplog.go:134] "HTTP" verb="WATCH" URI="/api/v1/namespaces/apf-x/configmaps?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=9m47s&timeoutSeconds=587&watch=true" latency="1.825237272s" userAgent="client-v035/v0.0.0 (linux/amd64) kubernetes/$Format informer/G" contentType="" audit-ID="a3" srcIP="127.0.0.1:59126" apf_pl="informer-lab-apf" apf_fs="informer-lab-apf" apf_iseats=8 apf_fseats=0 apf_additionalLatency="0s" apf_init_latency="976.210504ms" apf_execution_time="976.214561ms" watchlist_init_latency="994.606719ms" resp=200
`

func TestParseLog(t *testing.T) {
	reqs, err := ParseLog(strings.NewReader(logLines), "/api/v1/namespaces/apf-x/configmaps")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 3 {
		t.Fatalf("got %d requests, want the 3 of namespace apf-x: %+v", len(reqs), reqs)
	}
	list, stream := reqs[0], reqs[2]
	if list.Kind() != KindList || list.PriorityLevel != Name || list.FlowSchema != Name || list.InitialSeats != 4 || list.Status != 200 {
		t.Errorf("LIST parsed as %+v", list)
	}
	if got, want := list.Waited(), 329996728*time.Nanosecond-228010573*time.Nanosecond; got != want {
		t.Errorf("LIST waited %s, want latency less execution time %s", got, want)
	}
	if stream.Kind() != KindStream || stream.InitialSeats != 8 || stream.Execution != 976214561*time.Nanosecond || stream.Waited() != 0 {
		t.Errorf("streaming WATCH parsed as %+v (waited %s)", stream, stream.Waited())
	}
	rows := Rows(Mode{Requests: reqs})
	if len(rows) != 2 || rows[0].Requests != 2 || rows[0].Rejected != 1 || rows[0].Seats != [2]int{4, 4} {
		t.Errorf("rows %+v: want a LIST row of 2 requests, 1 rejected, 4 seats, then the stream's", rows)
	}
}
