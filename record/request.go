package record

import (
	"net/url"
	"strings"
)

// Request is what one request asks of kube-apiserver, read from its path and query the way the
// apiserver reads them. It is the one classifier of the project: the lab's wire, the proxy, the
// analysis, the report and observe all ask it.
type Request struct {
	// Resource names the resource the path is for, as a tag: "configmaps" (core),
	// "apps/deployments", "informer-lab.dev/widgets"; a subresource is its own ("pods/log"); a
	// path that names no resource gives TagNoResource. The namespace and object name are not part
	// of it: a watch of one namespace and a LIST of all are the same informer's resource.
	Resource string
	// Collection: the path names a collection (a LIST or a watch of many), not one object or a
	// subresource.
	Collection bool
	// Watch: the request opens a watch, by ?watch= or by the old /watch/ path segment.
	Watch bool
	// Stream: a watch that asks for the initial events (sendInitialEvents=true): a streaming list.
	Stream bool
	// Exact: a read of one resourceVersion exactly (resourceVersionMatch=Exact), which
	// kube-apiserver serves from etcd: what client-go's inconsistency detectors read to compare
	// with a sync, never an informer's own LIST.
	Exact bool
}

// ClassifyRequest reads a request's path and raw query.
func ClassifyRequest(path, rawQuery string) Request {
	q, _ := url.ParseQuery(rawQuery)
	var r Request
	group, rest, watchPath, ok := splitPath(path)
	r.Watch = queryBool(q, "watch") || watchPath
	r.Stream = r.Watch && queryBool(q, "sendInitialEvents")
	r.Exact = q.Get("resourceVersionMatch") == "Exact"
	if !ok {
		r.Resource = TagNoResource
		return r
	}
	if len(rest) >= 2 && rest[0] == "namespaces" && len(rest) != 2 {
		rest = rest[2:] // /namespaces/NS/RESOURCE...; /namespaces/NS alone is a Namespace
	}
	if len(rest) == 0 || rest[0] == "" {
		r.Resource = TagNoResource
		return r
	}
	r.Collection = len(rest) == 1
	r.Resource = rest[0]
	if len(rest) >= 3 {
		r.Resource += "/" + rest[2] // RESOURCE/NAME/SUBRESOURCE
	}
	if group != "" {
		r.Resource = group + "/" + r.Resource
	}
	return r
}

// ResourceOf is ClassifyRequest(path, "").Resource.
func ResourceOf(path string) string { return ClassifyRequest(path, "").Resource }

// splitPath splits /api/v1/REST or /apis/GROUP/VERSION/REST into the group and REST, without
// the old watch prefix (/api/v1/watch/REST), which it reports.
func splitPath(path string) (group string, rest []string, watch, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api": // /api/v1/...
		rest = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis": // /apis/group/version/...
		group, rest = parts[1], parts[3:]
	default:
		return "", nil, false, false
	}
	if rest[0] == "watch" {
		return group, rest[1:], true, true
	}
	return group, rest, false, true
}

// queryBool reads a boolean query parameter as the apiserver decodes it into ListOptions
// (k8s.io/apimachinery/pkg/runtime, Convert_Slice_string_To_bool): absent is false, "0" and
// "false" (any case) are false, and any other value, "" included, is true.
func queryBool(q url.Values, name string) bool {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}
