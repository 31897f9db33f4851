package wire_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"informer-lab/lab/wire"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// The stream of make bench's overhead point, per informer: the streaming list of the small case
// (ConfigMaps of 1 KiB of base64 text, each with the managedFields entry its create left), as
// kube-apiserver frames it in protobuf for client-go v0.32+, ended by the initial-events-end
// bookmark. benchEvents is per informer, fewer than make bench's 20,000 to keep a run short.
const (
	benchInformers = 16
	benchEvents    = 2000
)

// BenchmarkWireLogging is what the wire costs per watch event: K informers' streams read at once
// by client-go's own watch client, the records written to a pipe that another goroutine drains
// as the harness drains a lab's stdout. "quiet" counts bytes only (the lab's -quiet); "logged"
// decodes and records every event. Each reports ns/event over all K streams; the difference is
// the wire logging's own cost:
//
//	cd lab && GOWORK=off go test ./wire/ -run '^$' -bench WireLogging -benchtime 5x
func BenchmarkWireLogging(b *testing.B) {
	stream := watchListStream(b, benchEvents)
	for _, quiet := range []bool{true, false} {
		name := "logged"
		if quiet {
			name = "quiet"
		}
		b.Run(name, func(b *testing.B) {
			pr, pw, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			drained := make(chan int64)
			go func() {
				n, _ := io.Copy(io.Discard, pr)
				drained <- n
			}()
			out := record.NewWriter("bench", pw, nil)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				readStreams(b, stream, out, quiet)
			}
			b.StopTimer()
			pw.Close()
			written := <-drained
			pr.Close()
			events := float64(b.N) * benchInformers * (benchEvents + 1)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
			b.ReportMetric(float64(written)/events, "record-B/event")
		})
	}
}

// readStreams reads the stream benchInformers times at once, each through its own client and
// wire as the lab's informers do, and checks every event arrived, and, logged, was counted.
func readStreams(b *testing.B, stream []byte, out *record.Writer, quiet bool) {
	var wg sync.WaitGroup
	for i := 0; i < benchInformers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counters := &wire.Counters{}
			cfg := &rest.Config{Host: "https://saved.invalid", Transport: savedResponse{"application/vnd.kubernetes.protobuf;stream=watch", stream},
				ContentConfig: rest.ContentConfig{ContentType: "application/vnd.kubernetes.protobuf"}}
			cfg.Wrap(wire.WrapCounting(string(rune('A'+i)), out, counters, quiet))
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				b.Error(err)
				return
			}
			w, err := cs.CoreV1().ConfigMaps("bench").Watch(context.Background(), metav1.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true,
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
			if err != nil {
				b.Error(err)
				return
			}
			n := 0
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					b.Errorf("client read an error event: %v", ev.Object)
				}
				n++
			}
			w.Stop()
			if n != benchEvents+1 {
				b.Errorf("client read %d events, want %d", n, benchEvents+1)
			}
			if got := counters.Stats().Events; !quiet && got != benchEvents+1 {
				b.Errorf("the wire recorded %d events, want %d", got, benchEvents+1)
			}
		}()
	}
	wg.Wait()
}

// watchListStream encodes n ADDED ConfigMaps and the end bookmark as kube-apiserver's watch
// encoder does (apiserver pkg/endpoints/handlers/response.go, doEncode): each object with the
// protobuf serializer into a WatchEvent's RawExtension, the event with the stream serializer,
// in length-delimited frames.
func watchListStream(b *testing.B, n int) []byte {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		b.Fatal("no protobuf serializer")
	}
	embedded := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	var stream bytes.Buffer
	frames := info.StreamSerializer.Framer.NewFrameWriter(&stream)
	write := func(typ watch.EventType, obj runtime.Object) {
		raw, err := runtime.Encode(embedded, obj)
		if err != nil {
			b.Fatal(err)
		}
		var ev bytes.Buffer
		if err := info.StreamSerializer.Serializer.Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: raw}}, &ev); err != nil {
			b.Fatal(err)
		}
		if _, err := frames.Write(ev.Bytes()); err != nil {
			b.Fatal(err)
		}
	}
	created := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	for i := 0; i < n; i++ {
		data := make([]byte, 768)
		r := rand.New(rand.NewPCG(uint64(i), 3157))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		write(watch.Added, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%06d", i), Namespace: "bench", ResourceVersion: fmt.Sprint(1000 + i),
				UID: "0c5a3b2e-5d1f-4d6b-9a43-aa5e7f6f1c2d", CreationTimestamp: created,
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "bench", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:data":{}}}`)}}}},
			Data: map[string]string{"data": base64.StdEncoding.EncodeToString(data)},
		})
	}
	write(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: fmt.Sprint(1000 + n),
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	return stream.Bytes()
}
