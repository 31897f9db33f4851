package apf

import (
	"bufio"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Request is one request as kube-apiserver's request log (-v=3) tells it: one line per request,
// written when it ends (k8s.io/apiserver pkg/server/httplog, (*respLogger).Log), with what the
// APF filter added to it (pkg/server/filters/priority-and-fairness.go: apf_pl, apf_fs,
// apf_iseats, apf_fseats).
type Request struct {
	Verb, URI     string
	PriorityLevel string        // apf_pl
	FlowSchema    string        // apf_fs
	InitialSeats  int           // apf_iseats; -1 when the line has none
	FinalSeats    int           // apf_fseats; -1 when the line has none
	Status        int           // resp
	Latency       time.Duration // arrival to the end of the response: for a watch, its whole life
	Execution     time.Duration // apf_execution_time: once admitted; 0 when the line has none
	SendsInitial  bool          // a watch with sendInitialEvents=true: a streaming list
}

// Waited is how long APF held the request before running it (latency less execution time), for
// a request that ends with its response (not a watch); 0 when the line does not say.
func (r Request) Waited() time.Duration {
	if r.Verb == "WATCH" || r.Execution == 0 {
		return 0
	}
	return max(0, r.Latency-r.Execution)
}

// Kind names a request's shape as this page's tables do.
func (r Request) Kind() string {
	switch {
	case r.Verb == "WATCH" && r.SendsInitial:
		return KindStream
	case r.Verb == "WATCH":
		return KindWatch
	case r.Verb == "LIST":
		return KindList
	}
	return r.Verb
}

// The request kinds of an informer's start.
const (
	KindList   = "LIST"
	KindWatch  = "WATCH after LIST"
	KindStream = "streaming WATCH (sendInitialEvents=true)"
)

// pair is one key=value of a klog structured line: a quoted Go string or a bare word.
var pair = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_-]*)=("(?:[^"\\]|\\.)*"|[^ ]+)`)

// ParseLog reads the request lines of r whose URI starts with prefix (e.g.
// "/api/v1/namespaces/apf-x/configmaps"); every other line is skipped.
func ParseLog(r io.Reader, prefix string) ([]Request, error) {
	var out []Request
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		_, rest, ok := strings.Cut(line, `] "HTTP" `)
		if !ok {
			continue
		}
		kv := map[string]string{}
		for _, m := range pair.FindAllStringSubmatch(rest, -1) {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				if u, err := strconv.Unquote(v); err == nil {
					v = u
				}
			}
			if _, seen := kv[m[1]]; !seen {
				kv[m[1]] = v
			}
		}
		if !strings.HasPrefix(kv["URI"], prefix) {
			continue
		}
		req := Request{Verb: kv["verb"], URI: kv["URI"], PriorityLevel: kv["apf_pl"], FlowSchema: kv["apf_fs"],
			InitialSeats: number(kv["apf_iseats"]), FinalSeats: number(kv["apf_fseats"]), Status: number(kv["resp"])}
		req.Latency, _ = time.ParseDuration(kv["latency"])
		req.Execution, _ = time.ParseDuration(kv["apf_execution_time"])
		if u, err := url.Parse(req.URI); err == nil {
			req.SendsInitial = u.Query().Get("sendInitialEvents") == "true"
		}
		out = append(out, req)
	}
	return out, sc.Err()
}

func number(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
