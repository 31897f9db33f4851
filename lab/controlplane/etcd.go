package controlplane

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// EtcdURL returns the client URL of this control plane's etcd (plain http on 127.0.0.1).
func (cp *ControlPlane) EtcdURL() (string, error) {
	if cp == nil || cp.env == nil || cp.env.ControlPlane.Etcd == nil || cp.env.ControlPlane.Etcd.URL == nil {
		return "", fmt.Errorf("control plane not running")
	}
	return cp.env.ControlPlane.Etcd.URL.String(), nil
}

// CompactEtcd compacts etcd at its current revision, physically (etcd has dropped the older
// revisions when it returns), the way kube-apiserver's own compactor does every 5 minutes, and
// returns that revision. A read that has to reach etcd at an older resourceVersion (a LIST with
// resourceVersionMatch=Exact, a WATCH from before the watch cache's window) then fails with
// 410 Gone.
//
// It talks to etcd's JSON gRPC gateway on etcd's client URL with the standard library only,
// in the apiserver's own order (k8s.io/apiserver/pkg/storage/etcd3/compact.go):
//  1. POST /v3/kv/range on compact_rev_key: the store's current revision (response header)
//     and the key's version;
//  2. POST /v3/kv/txn: if compact_rev_key still has that version, put the revision into it;
//  3. POST /v3/kv/compaction {"revision": N, "physical": true}.
//
// Step 2 is what tells the apiserver: from 1.34 (ListFromCacheSnapshot) its watch cache keeps
// snapshots of past revisions and answers Exact LISTs from them, and drops them only up to the
// compaction revision it reads from compact_rev_key (watched at once, applied to the cache by
// a poll every 15 s). Without step 2 such a LIST keeps answering 200 from the cache after the
// compaction, indefinitely (seen on 1.35.4); with it, 410 within about 15 s. Up to 1.33 the
// apiserver sends those LISTs to etcd and the 410 is immediate. The apiserver's own compactor,
// finding the key's version moved, adopts it and carries on, exactly as when another
// apiserver of the same etcd compacted.
func (cp *ControlPlane) CompactEtcd(ctx context.Context) (revision int64, err error) {
	base, err := cp.EtcdURL()
	if err != nil {
		return 0, err
	}
	return compactEtcd(ctx, strings.TrimRight(base, "/"))
}

// WriteEtcd writes one key outside kube-apiserver's /registry prefix, through etcd's JSON
// gateway, and returns the revision it made. etcd's revision is global: any write moves it on,
// as another apiserver's writes or a controller's lease renewals do while this apiserver is
// down. Restarted then, its watch cache starts above every rv its clients had.
func (cp *ControlPlane) WriteEtcd(ctx context.Context, key, value string) (revision int64, err error) {
	base, err := cp.EtcdURL()
	if err != nil {
		return 0, err
	}
	var res struct {
		Header etcdHeader `json:"header"`
	}
	put := map[string]any{"key": base64.StdEncoding.EncodeToString([]byte(key)), "value": base64.StdEncoding.EncodeToString([]byte(value))}
	if err := etcdPost(ctx, strings.TrimRight(base, "/")+"/v3/kv/put", put, &res); err != nil {
		return 0, err
	}
	return res.Header.revision()
}

// compactRevKey is where kube-apiserver records the last compaction (at etcd's root, outside
// its /registry prefix).
const compactRevKey = "compact_rev_key"

func compactEtcd(ctx context.Context, base string) (revision int64, err error) {
	key := base64.StdEncoding.EncodeToString([]byte(compactRevKey))
	var rev int64
	for attempt := 1; ; attempt++ {
		var rng struct {
			Header etcdHeader `json:"header"`
			Kvs    []struct {
				Version json.Number `json:"version"`
			} `json:"kvs"`
		}
		if err := etcdPost(ctx, base+"/v3/kv/range", map[string]any{"key": key}, &rng); err != nil {
			return 0, fmt.Errorf("compact etcd: read current revision: %w", err)
		}
		if rev, err = rng.Header.revision(); err != nil {
			return 0, fmt.Errorf("compact etcd: read current revision: %w", err)
		}
		version := "0" // the key does not exist before the apiserver's first compaction (5 min)
		if len(rng.Kvs) > 0 && rng.Kvs[0].Version != "" {
			version = rng.Kvs[0].Version.String()
		}
		// int64 fields go through the gateway as strings (proto3 JSON); it accepts both.
		txn := map[string]any{
			"compare": []any{map[string]any{"key": key, "target": "VERSION", "result": "EQUAL", "version": version}},
			"success": []any{map[string]any{"request_put": map[string]any{
				"key": key, "value": base64.StdEncoding.EncodeToString([]byte(strconv.FormatInt(rev, 10)))}}},
		}
		var res struct {
			Header    etcdHeader `json:"header"`
			Succeeded bool       `json:"succeeded"` // proto3 JSON leaves false out
		}
		if err := etcdPost(ctx, base+"/v3/kv/txn", txn, &res); err != nil {
			return 0, fmt.Errorf("compact etcd: record revision %d in %s: %w", rev, compactRevKey, err)
		}
		if res.Succeeded {
			break
		}
		if attempt == 3 { // the apiserver's compactor moved the key in between, three times
			return 0, fmt.Errorf("compact etcd: record revision %d in %s: its version kept changing (last read %s)", rev, compactRevKey, version)
		}
	}
	var cmp struct {
		Header etcdHeader `json:"header"`
	}
	if err := etcdPost(ctx, base+"/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}, &cmp); err != nil {
		return 0, fmt.Errorf("compact etcd at revision %d: %w", rev, err)
	}
	return rev, nil
}

type etcdHeader struct {
	Revision json.Number `json:"revision"` // proto3 JSON writes int64 as a string; json.Number takes both
}

func (h etcdHeader) revision() (int64, error) {
	if h.Revision == "" {
		return 0, fmt.Errorf("response header has no revision")
	}
	rev, err := h.Revision.Int64()
	if err != nil || rev <= 0 {
		return 0, fmt.Errorf("response header revision %q is not a positive integer", h.Revision)
	}
	return rev, nil
}

// etcdPost sends one JSON request to etcd's gRPC gateway and decodes its answer into out. A
// failed call (transport, HTTP status, a gateway error body, an undecodable body) says what
// came back.
func etcdPost(ctx context.Context, url string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // physical compaction of a test store takes milliseconds
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s %s: %w", url, body, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("POST %s %s: %s, reading the body: %w", url, body, resp.Status, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		// etcd without its gateway (--enable-grpc-gateway=false, or a release without it)
		// answers every /v3/ path with 404.
		return fmt.Errorf("POST %s %s: %s (%s): etcd's JSON gRPC gateway is not serving on its client URL", url, body, resp.Status, snippet(got))
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s %s: %s: %s", url, body, resp.Status, snippet(got))
	}
	// The gateway reports gRPC errors with a non-200 status, but a 200 carrying an error
	// field is an error too.
	var gwErr struct {
		Error   string `json:"error"`
		Message string `json:"message"`
		Code    int    `json:"code"`
	}
	if json.Unmarshal(got, &gwErr) == nil && (gwErr.Error != "" || gwErr.Code != 0) {
		return fmt.Errorf("POST %s %s: %s: etcd error: %s", url, body, resp.Status, snippet(got))
	}
	if err := json.Unmarshal(got, out); err != nil {
		return fmt.Errorf("POST %s %s: %s: undecodable answer %s: %w", url, body, resp.Status, snippet(got), err)
	}
	return nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
