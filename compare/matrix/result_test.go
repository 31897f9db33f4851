package matrix

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"informer-lab/compare/internal/synth"
)

// sample is a small matrix: two clients, two servers (one refusing to stream, one whose end
// bookmark lacks the blueprint for v0.32), startup and reconnect, one cell with lost data.
func sample(t *testing.T) *Result {
	t.Helper()
	res := New(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	res.Duration = (3*time.Minute + 12*time.Second).String()
	for _, srv := range []struct{ version, gates string }{{"v1.33.13", "WatchList=true"}, {"v1.34.4", ""}} {
		v032 := v032on
		if srv.version == "v1.34.4" {
			v032.Shape = synth.Blueprint
		}
		res.Add("startup", analyze(t, synth.New("startup", srv.version, srv.gates, v031off, v032)), "runs/"+srv.version+"/startup")
	}
	for _, srv := range []struct{ version, gates string }{{"v1.33.13", "WatchList=true"}, {"v1.34.4", ""}} {
		r := synth.New("reconnect", srv.version, srv.gates, v031off, v032on)
		r.Writes(2)
		r.Reconnect()
		if srv.version == "v1.34.4" {
			r.Forget("client-v032-on", "A", "seed-cm-1")
		}
		res.Add("reconnect", analyze(t, r), "runs/"+srv.version+"/reconnect")
	}
	return res
}

func TestAddCollectsRowsAndColumns(t *testing.T) {
	res := sample(t)
	if len(res.Clients) != 2 || res.Clients[0].Name != "client-v031-off" || res.Clients[1].Module != "client-v032" || res.Clients[1].ClientGo != "v0.32.13" {
		t.Errorf("want clients client-v031-off, client-v032-on, got %+v", res.Clients)
	}
	if len(res.Servers) != 2 || res.Servers[0].Name != "1.33.13 WatchList=true" || res.Servers[0].FeatureGates != "WatchList=true" || res.Servers[1].Version != "v1.34.4" {
		t.Errorf("want servers 1.33.13 WatchList=true and 1.34.4, got %+v", res.Servers)
	}
	if strings.Join(res.Scenarios, ",") != "startup,reconnect" || len(res.Cells) != 8 {
		t.Errorf("want 2 scenarios, 8 cells, got %v, %d", res.Scenarios, len(res.Cells))
	}
	c := res.Cell("startup", "1.34.4", "client-v032-on")
	if c == nil || c.Log != "runs/v1.34.4/startup/client-v032-on.cell.log" || c.Run != "runs/v1.34.4/startup" {
		t.Errorf("want the cell's log and run paths, got %+v", c)
	}
	if res.Schema != Schema || res.CPUs == 0 || res.GoVersion == "" || res.OS == "" {
		t.Errorf("want schema and host facts, got %d %q %d %q", res.Schema, res.GoVersion, res.CPUs, res.OS)
	}
}

func TestSaveLoad(t *testing.T) {
	res := sample(t)
	file := filepath.Join(t.TempDir(), "matrix.json")
	if err := res.Save(file); err != nil {
		t.Fatal(err)
	}
	back, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(res, back); len(d) > 0 || len(back.Cells) != len(res.Cells) || !back.Date.Equal(res.Date) {
		t.Errorf("want the saved result back, got differences %q", d)
	}
	data, _ := os.ReadFile(file)
	for _, key := range []string{`"schema": 1`, `"duration": "3m12s"`, `"goVersion"`, `"clients"`, `"gateHow": "client-go default"`, `"default": true`,
		`"servers"`, `"featureGates": "WatchList=true"`, `"scenarios"`, `"cells"`, `"verdict": "STREAM→fallback: blueprint annotation missing (3 req)"`,
		`"expected": "STREAM"`, `"agrees": false`, `"lost": "A: missing default/seed-cm-1"`, `"syncMillis"`, `"log": "runs/v1.34.4/startup/client-v032-on.cell.log"`} {
		if !bytes.Contains(data, []byte(key)) {
			t.Errorf("want %s in the JSON", key)
		}
	}

	bad := func(name, content string) string {
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	var cell map[string]any
	json.Unmarshal([]byte(`{"scenario":"startup","server":"1.32.13","client":"c","verdict":"v","agrees":true,"syncMillis":1}`), &cell)
	two, _ := json.Marshal(map[string]any{"schema": 1, "cells": []any{cell, cell}})
	for _, tt := range []struct{ file, err string }{
		{filepath.Join(t.TempDir(), "nope.json"), `no such file or directory`},
		{bad("text.json", "not json"), `text\.json: not a matrix result: invalid character`},
		{bad("noschema.json", `{"cells":[]}`), `noschema\.json: no schema field`},
		{bad("schema2.json", `{"schema":2}`), `schema2\.json: matrix schema 2, this build reads schema 1`},
		{bad("unknown.json", `{"schema":1,"colour":"red"}`), `unknown field "colour"`},
		{bad("nokey.json", `{"schema":1,"cells":[{"verdict":"x"}]}`), `nokey\.json: cell 1 lacks a scenario, server or client`},
		{bad("twice.json", string(two)), `twice\.json: two cells for startup \| 1\.32\.13 \| c`},
	} {
		_, err := Load(tt.file)
		if err == nil || !regexp.MustCompile(tt.err).MatchString(err.Error()) {
			t.Errorf("Load(%s): want an error matching %q, got %v", filepath.Base(tt.file), tt.err, err)
		}
	}
}

func TestMarkdown(t *testing.T) {
	res := sample(t)
	var b bytes.Buffer
	if err := res.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, s := range []string{
		"# informer-lab matrix\n\n2026-11-30 10:00 UTC · go",
		"cores · 3m12s in total",
		"client-go v0.31.14 (client-v031), v0.32.13 (client-v032); kube-apiserver 1.33.13 WatchList=true, 1.34.4",
		"## startup\n",
		"| client | 1.33.13 WatchList=true | 1.34.4 |\n| --- | --- | --- |\n",
		"| client-v031 off (default) | [LIST→WATCH (2 req)](runs/v1.33.13/startup/client-v031-off.cell.log) · 2 ms | [LIST→WATCH (2 req)](runs/v1.34.4/startup/client-v031-off.cell.log) · 2 ms |",
		"| client-v032 on | [STREAM (1 req)](runs/v1.33.13/startup/client-v032-on.cell.log) · 2 ms | [STREAM→fallback: blueprint annotation missing (3 req)](runs/v1.34.4/startup/client-v032-on.cell.log) · 2 ms<br>⚠ expected STREAM |",
		"## reconnect\n",
		"[WATCH from rv](runs/v1.34.4/reconnect/client-v032-on.cell.log)<br>🔴 LOST: A: missing default/seed-cm-1 |",
		"## Findings\n\n",
		"- ⚠ startup · 1.34.4 · client-v032-on: expected STREAM, saw STREAM→fallback: blueprint annotation missing (3 req)\n",
		"- 🔴 reconnect · 1.34.4 · client-v032-on: LOST data, the cache at stop differs from a fresh LIST: A: missing default/seed-cm-1\n",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("want the Markdown to contain %q, got:\n%s", s, md)
		}
	}
	if strings.Contains(md, "- • ") {
		t.Errorf("want no problem listed twice (as a disagreement or lost data and as a problem), got:\n%s", md)
	}
	// A missing cell, a pipe in a verdict and a path with a space.
	res.Cells = res.Cells[1:]
	res.Cells[0].Verdict = "a|b"
	res.Cells[0].Log = "runs/with space/x.log"
	b.Reset()
	res.Markdown(&b)
	if !strings.Contains(b.String(), "| client-v031 off (default) | – |") || !strings.Contains(b.String(), `[a\|b](runs/with%20space/x.log)`) {
		t.Errorf("want a dash for the missing cell and escapes, got:\n%s", b.String())
	}
}

func TestMarkdownNoFindings(t *testing.T) {
	res := New(time.Now())
	res.Add("startup", analyze(t, synth.New("startup", "v1.32.13", "", v031off, v032on)), "")
	var b bytes.Buffer
	res.Markdown(&b)
	if !strings.Contains(b.String(), "- None: all 2 cells agree with what the gates imply") {
		t.Errorf("want a findings line saying there are none, got:\n%s", b.String())
	}
	if strings.Contains(b.String(), "](") {
		t.Errorf("want no links for cells without a log, got:\n%s", b.String())
	}
}

func TestFindingsListOtherProblems(t *testing.T) {
	res := New(time.Now())
	res.Add("restart", analyze(t, synth.New("restart", "v1.32.13", "", v031off)), "") // no fault injected
	var b bytes.Buffer
	res.Markdown(&b)
	for _, s := range []string{
		"| client-v031 off (default) | no fault injected<br>⚠ 1 problem |", // no link: the cell has no log
		"- • restart · 1.32.13 · client-v031-off: run: scenario restart, but the harness recorded no injected fault\n",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("want %q, got:\n%s", s, b.String())
		}
	}
}

// TestFailedRun: a cell whose run the harness could not complete, in a result built as a literal
// (no schema set: Save writes it).
func TestFailedRun(t *testing.T) {
	res := &Result{Date: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), GoVersion: "go1.26.8", CPUs: 2, Duration: "1m0s",
		Scenarios: []string{"restart"}, Servers: []Server{{Name: "1.37.2", Version: "v1.37.2"}}, Clients: []Client{{Name: "client-v037-on", Module: "client-v037", Gate: "on"}},
		Cells: []Cell{{Scenario: "restart", Server: "1.37.2", Client: "client-v037-on", Verdict: "run failed", Agrees: true, Failed: "kube-apiserver did not come back in 60s", Run: "restart/1.37.2"}}}
	file := filepath.Join(t.TempDir(), "m.json")
	if err := res.Save(file); err != nil {
		t.Fatal(err)
	}
	back, err := Load(file)
	if err != nil {
		t.Fatalf("want a literal result saved with the schema, got %v", err)
	}
	var b bytes.Buffer
	back.Markdown(&b)
	for _, s := range []string{
		"go1.26.8, 2 cores · 1m0s in total",
		"| client-v037 on | run failed<br>⚠ run failed: kube-apiserver did not come back in 60s |",
		"- ⚠ restart · 1.37.2 · client-v037-on: the run failed, no observation: kube-apiserver did not come back in 60s\n",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("want %q, got:\n%s", s, b.String())
		}
	}
	ok := *back
	ok.Cells = []Cell{back.Cells[0]}
	ok.Cells[0].Failed, ok.Cells[0].Verdict = "", "WATCH(error)×2→WATCH (3 req)"
	if d := Diff(back, &ok); len(d) != 2 || !strings.Contains(d[1], `failed "kube-apiserver did not come back in 60s" → ""`) {
		t.Errorf("want the verdict and the failure in the diff, got %q", d)
	}
}
