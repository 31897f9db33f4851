package wire

import (
	"mime"
	"reflect"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/recognizer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// The wire decodes whatever the lab's clients read, with apimachinery's own serializers:
// client-go's typed objects, the metadata client's PartialObjectMetadata(List) (meta.k8s.io/v1)
// and, as unstructured, the custom resources of the dynamic client; as JSON, protobuf or CBOR.
// Only what is built here is used: client-go's own scheme is left as the clients see it.
var (
	wireScheme = newWireScheme()
	codecs     = serializer.NewCodecFactory(wireScheme)

	// objects decodes one object: a LIST body, a watch event's object, an error's Status.
	objects runtime.Decoder = typedOrUnstructured{
		// The format is recognized from the data, not from the response's content type: a
		// CBOR watch event's object reaches the object decoder as JSON (apimachinery's CBOR
		// decoder transcodes RawExtensions to JSON by default, and always in v0.31).
		typed: recognizer.NewDecoder(cbor.NewSerializer(wireScheme, wireScheme), codecs.UniversalDeserializer()),
		unstructured: recognizer.NewDecoder(
			cbor.NewSerializer(unstructuredscheme.NewUnstructuredCreator(), unstructuredscheme.NewUnstructuredObjectTyper()),
			unstructured.UnstructuredJSONScheme),
	}

	// mediaTypes are the response content types the wire decodes, with their watch framing.
	// The CBOR entries are built here rather than with cbor.NewSerializerInfo or a
	// CodecFactory option: apimachinery v0.31 has neither.
	mediaTypes = append(codecs.SupportedMediaTypes(),
		cborInfo("cbor"),
		cborInfo("cbor-seq")) // what a watch answers: a CBOR sequence (RFC 8742), one item an event
)

// eventObjects decodes a watch event's object for its record, which holds only metadata
// (namespace, name, resourceVersion, a bookmark's annotations). A protobuf object of a kind whose
// metadata is its field 1, as its Go type's protobuf tag says (metadataFirst), is decoded as a
// PartialObjectMetadata, whose metadata is field 1 too: apimachinery's protobuf serializer
// unmarshals into a type its scheme does not know as into any protobuf message, and the rest of
// the object (a ConfigMap's data, a Secret's bytes, managed by the client alone) is skipped,
// not copied. Any other object (JSON, CBOR, a Status, a Table, a kind the wire does not know)
// is decoded in full by objects.
var eventObjects runtime.Decoder = metadataDecoder{}

// envelope reads a protobuf object's envelope (runtime.Unknown) with a scheme that knows no type.
var envelope = protobuf.NewSerializer(runtime.NewScheme(), runtime.NewScheme())

type metadataDecoder struct{}

func (metadataDecoder) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if ok, _, _ := envelope.RecognizesData(data); ok && into == nil {
		m := &metav1.PartialObjectMetadata{}
		if _, actual, err := envelope.Decode(data, gvk, m); err == nil && metadataFirst(*actual) {
			m.SetGroupVersionKind(*actual)
			return m, actual, nil
		}
	}
	return objects.Decode(data, gvk, into)
}

var metadataFields sync.Map // schema.GroupVersionKind -> bool

// metadataFirst reports whether the wire scheme's type for gvk holds an ObjectMeta as protobuf
// field 1, as PartialObjectMetadata does (its generated tag: "bytes,1,opt,name=metadata").
func metadataFirst(gvk schema.GroupVersionKind) bool {
	if v, ok := metadataFields.Load(gvk); ok {
		return v.(bool)
	}
	first := false
	if obj, err := wireScheme.New(gvk); err == nil {
		t := reflect.TypeOf(obj).Elem()
		f, ok := t.FieldByName("ObjectMeta")
		first = ok && f.Type == reflect.TypeOf(metav1.ObjectMeta{}) && strings.HasPrefix(f.Tag.Get("protobuf"), "bytes,1,")
	}
	metadataFields.Store(gvk, first)
	return first
}

// discoveryGroup is aggregated discovery's (APIGroupDiscoveryList): a list, which the
// unstructured decoder would decode, but no informer's LIST.
const discoveryGroup = "apidiscovery.k8s.io"

func newWireScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	// as client-go's scheme package registers itself: meta's unversioned types (WatchEvent,
	// Status) and every built-in group
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	// the metadata client's PartialObjectMetadata and PartialObjectMetadataList
	utilruntime.Must(metav1.AddMetaToScheme(s))
	return s
}

func cborInfo(subType string) runtime.SerializerInfo {
	s := cbor.NewSerializer(wireScheme, wireScheme)
	return runtime.SerializerInfo{
		MediaType:        "application/" + subType,
		MediaTypeType:    "application",
		MediaTypeSubType: subType,
		Serializer:       s,
		StreamSerializer: &runtime.StreamSerializerInfo{Serializer: s, Framer: cbor.NewFramer()},
	}
}

// serializerFor finds the serializer for a response content type, e.g. "application/json",
// "application/vnd.kubernetes.protobuf;stream=watch" or "application/cbor-seq"; its
// parameters (the metadata client's "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1") do not
// change the wire format.
func serializerFor(contentType string) (runtime.SerializerInfo, bool) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return runtime.SerializerInfo{}, false
	}
	return runtime.SerializerInfoForMediaType(mediaTypes, mediaType)
}

// typedOrUnstructured decodes with the typed scheme, and a kind it does not know (a custom
// resource) as unstructured.
type typedOrUnstructured struct{ typed, unstructured runtime.Decoder }

func (d typedOrUnstructured) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, actual, err := d.typed.Decode(data, gvk, into)
	if runtime.IsNotRegisteredError(err) {
		return d.unstructured.Decode(data, gvk, into)
	}
	return obj, actual, err
}
