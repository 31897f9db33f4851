package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// frames reads a watch response body frame by frame, with apimachinery's framer and stream
// serializer for its content type (those client-go decodes it with), and writes each frame back
// as it went on the wire: nothing is held beyond the frame being read.
type frames struct {
	info    runtime.SerializerInfo
	capture *frameCapture
	dec     streaming.Decoder
}

// frameCapture is a runtime.Decoder that keeps a copy of the last frame it was given, so that
// a frame left as it is goes to the client byte for byte.
type frameCapture struct {
	runtime.Decoder
	last []byte
}

func (c *frameCapture) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	c.last = append(c.last[:0], data...)
	return c.Decoder.Decode(data, defaults, into)
}

// newFrames reads body, of contentType; ok is false when types has no watch framing for it.
func newFrames(body io.ReadCloser, contentType string, types []runtime.SerializerInfo) (*frames, bool) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, false
	}
	info, ok := runtime.SerializerInfoForMediaType(types, mediaType)
	if !ok || info.StreamSerializer == nil {
		return nil, false
	}
	f := &frames{info: info, capture: &frameCapture{Decoder: info.StreamSerializer.Serializer}}
	f.dec = streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(body), f.capture)
	return f, true
}

// cborSeq is the content type of a watch in CBOR: a CBOR sequence (RFC 8742), an item an event.
const cborSeq = "application/cbor-seq"

// watchTypes are the content types whose watch frames the proxy reads to end a watch: client-go's
// scheme's (JSON, protobuf) and the CBOR sequence a watch is answered in to a client that asks for
// CBOR, built as lab/wire builds it (apimachinery v0.32's CodecFactory has no CBOR).
var watchTypes = append(scheme.Codecs.SupportedMediaTypes(), func() runtime.SerializerInfo {
	s := cbor.NewSerializer(scheme.Scheme, scheme.Scheme)
	return runtime.SerializerInfo{MediaType: cborSeq, MediaTypeType: "application", MediaTypeSubType: "cbor-seq",
		Serializer: s, StreamSerializer: &runtime.StreamSerializerInfo{Serializer: s, Framer: cbor.NewFramer()}}
}())

// next reads one frame: its event and its bytes. At the end of the stream frame is nil and err is
// io.EOF; on a frame that cannot be read (too large, cut short) frame is nil and err says why. A
// frame that reads but does not decode comes with its bytes and the decoding error.
func (f *frames) next() (ev metav1.WatchEvent, frame []byte, err error) {
	f.capture.last = f.capture.last[:0] // a frame too large to decode never reaches the capture
	_, _, err = f.dec.Decode(nil, &ev)
	if err != nil && len(f.capture.last) == 0 {
		return ev, nil, err
	}
	return ev, f.capture.last, err
}

// wire writes frame to w as it goes on the wire: length-prefixed (protobuf), newline-terminated
// (JSON), after the self-described CBOR tag (a CBOR sequence: apimachinery's encoder starts
// every item with the tag, which its framer drops).
func (f *frames) wire(w io.Writer, frame []byte) {
	switch f.info.MediaType {
	case runtime.ContentTypeJSON:
		w.Write(frame)
		w.Write([]byte{'\n'})
		return
	case cborSeq:
		if !bytes.HasPrefix(frame, selfDescribedCBOR) {
			w.Write(selfDescribedCBOR)
		}
	}
	f.info.StreamSerializer.Framer.NewFrameWriter(w).Write(frame)
}

// selfDescribedCBOR is the head of CBOR tag 55799, "self-described CBOR" (RFC 8949 3.4.6).
var selfDescribedCBOR = []byte{0xd9, 0xd9, 0xf7}

func (f *frames) Close() error { return f.dec.Close() }

// endBookmark reads the metadata of a BOOKMARK event's object, and whether the bookmark is the
// end of a streaming list's initial events (annotated k8s.io/initial-events-end=true).
func endBookmark(ev metav1.WatchEvent) (metav1.ObjectMeta, bool) {
	if ev.Type != string(watch.Bookmark) {
		return metav1.ObjectMeta{}, false
	}
	m, err := objectMeta(ev.Object.Raw)
	return m, err == nil && m.Annotations[metav1.InitialEventsAnnotationKey] == "true"
}

// protobufMagic starts an object encoded in protobuf (apimachinery's runtime/serializer/protobuf).
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// objectMeta reads the metadata of an encoded object of any kind, known to a scheme or not: JSON
// (also what a CBOR watch event's object is transcoded to), or protobuf, where every kind's
// metadata is its field 1, as PartialObjectMetadata's.
func objectMeta(raw []byte) (metav1.ObjectMeta, error) {
	var m metav1.PartialObjectMetadata
	rest, ok := bytes.CutPrefix(raw, protobufMagic)
	if !ok {
		err := json.Unmarshal(raw, &m)
		return m.ObjectMeta, err
	}
	var u runtime.Unknown
	if err := u.Unmarshal(rest); err != nil {
		return metav1.ObjectMeta{}, err
	}
	err := m.Unmarshal(u.Raw)
	return m.ObjectMeta, err
}
